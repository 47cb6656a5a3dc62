package rpc

import (
	"context"
	"log/slog"
	"time"

	"connectrpc.com/connect"
	"github.com/google/uuid"

	"github.com/fairplay/fairplay/internal/accounts"
	"github.com/fairplay/fairplay/internal/admin"
	fairplayv1 "github.com/fairplay/fairplay/internal/gen/fairplay/v1"
	"github.com/fairplay/fairplay/internal/gen/fairplay/v1/fairplayv1connect"
)

// AdminHandler serves AdminService.
type AdminHandler struct {
	accounts *accounts.Service
	admin    *admin.Service
	log      *slog.Logger
}

var _ fairplayv1connect.AdminServiceHandler = (*AdminHandler)(nil)

// NewAdminHandler returns the AdminService handler.
func NewAdminHandler(acc *accounts.Service, adm *admin.Service, log *slog.Logger) *AdminHandler {
	return &AdminHandler{accounts: acc, admin: adm, log: log}
}

// GetUserStats implements AdminService.GetUserStats.
func (h *AdminHandler) GetUserStats(ctx context.Context, req *connect.Request[fairplayv1.GetUserStatsRequest]) (*connect.Response[fairplayv1.GetUserStatsResponse], error) {
	p := principal(ctx)
	st, err := h.admin.UserStats(ctx, p)
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&fairplayv1.GetUserStatsResponse{
		TotalUsers:                  st.Total,
		UsersLastMonth:              st.LastMonth,
		UsersLastMonthPercentChange: st.LastMonthChange.String(),
		UsersLastWeek:               st.LastWeek,
		UsersLastWeekPercentChange:  st.LastWeekChange.String(),
	}), nil
}

// GetWageringStats implements AdminService.GetWageringStats.
func (h *AdminHandler) GetWageringStats(ctx context.Context, req *connect.Request[fairplayv1.GetWageringStatsRequest]) (*connect.Response[fairplayv1.GetWageringStatsResponse], error) {
	p := principal(ctx)
	st, err := h.admin.WageringStats(ctx, p)
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&fairplayv1.GetWageringStatsResponse{
		TotalWagered:                  st.Total.String(),
		WageredLastMonth:              st.LastMonth.String(),
		WageredLastMonthPercentChange: st.LastMonthChange.String(),
		WageredLastWeek:               st.LastWeek.String(),
		WageredLastWeekPercentChange:  st.LastWeekChange.String(),
	}), nil
}

// GetActivityStats implements AdminService.GetActivityStats.
func (h *AdminHandler) GetActivityStats(ctx context.Context, req *connect.Request[fairplayv1.GetActivityStatsRequest]) (*connect.Response[fairplayv1.GetActivityStatsResponse], error) {
	p := principal(ctx)
	a, err := h.admin.Activity(ctx, p)
	if err != nil {
		return nil, err
	}
	out := &fairplayv1.GetActivityStatsResponse{ActivePlayers: a.ActivePlayers, Games: make([]*fairplayv1.GameActivity, 0, len(a.Games))}
	for _, g := range a.Games {
		out.Games = append(out.Games, &fairplayv1.GameActivity{
			Game: g.Game, Bets: g.Bets, Wagered: g.Wagered.String(), PaidOut: g.PaidOut.String(),
			Rtp: g.RTPString(), TheoreticalRtp: g.TheoreticalRTP,
		})
	}
	return connect.NewResponse(out), nil
}

// ListUsers implements AdminService.ListUsers.
func (h *AdminHandler) ListUsers(ctx context.Context, req *connect.Request[fairplayv1.ListUsersRequest]) (*connect.Response[fairplayv1.ListUsersResponse], error) {
	p := principal(ctx)
	page, err := h.admin.ListUsers(ctx, p, optionalInt(req.Msg.Page), optionalInt(req.Msg.Limit))
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&fairplayv1.ListUsersResponse{
		Users: toProtoUsers(page.Users), TotalPages: int32(page.TotalPages), Page: int32(page.Page), TotalUsers: page.Total,
	}), nil
}

// SearchUsers implements AdminService.SearchUsers.
func (h *AdminHandler) SearchUsers(ctx context.Context, req *connect.Request[fairplayv1.SearchUsersRequest]) (*connect.Response[fairplayv1.SearchUsersResponse], error) {
	p := principal(ctx)
	page, err := h.admin.SearchUsers(ctx, p, req.Msg.GetQuery(), optionalInt(req.Msg.Page), optionalInt(req.Msg.Limit))
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&fairplayv1.SearchUsersResponse{
		Users: toProtoUsers(page.Users), TotalPages: int32(page.TotalPages), Page: int32(page.Page), TotalUsers: page.Total,
		TotalCapped: page.Capped,
	}), nil
}

// AdjustBalance implements AdminService.AdjustBalance.
func (h *AdminHandler) AdjustBalance(ctx context.Context, req *connect.Request[fairplayv1.AdjustBalanceRequest]) (*connect.Response[fairplayv1.AdjustBalanceResponse], error) {
	p := principal(ctx)
	u, err := h.admin.AdjustBalance(ctx, p, req.Msg.GetUserId(), req.Msg.GetAmount(), req.Msg.GetNote(), req.Msg.GetRequestId())
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&fairplayv1.AdjustBalanceResponse{User: toProtoUser(u, true), Message: "Balance updated successfully"}), nil
}

// DeleteUser implements AdminService.DeleteUser.
func (h *AdminHandler) DeleteUser(ctx context.Context, req *connect.Request[fairplayv1.DeleteUserRequest]) (*connect.Response[fairplayv1.DeleteUserResponse], error) {
	p := principal(ctx)
	d, err := h.admin.DeleteUser(ctx, p, req.Msg.GetUserId())
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&fairplayv1.DeleteUserResponse{Message: "User deleted successfully", SessionsRevoked: int32(d.SessionsRevoked)}), nil
}

// GetUserLimits implements AdminService.GetUserLimits.
func (h *AdminHandler) GetUserLimits(ctx context.Context, req *connect.Request[fairplayv1.GetUserLimitsRequest]) (*connect.Response[fairplayv1.GetUserLimitsResponse], error) {
	st, err := h.admin.UserLimits(ctx, principal(ctx), req.Msg.GetUserId())
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&fairplayv1.GetUserLimitsResponse{Limits: toProtoLimits(st)}), nil
}

// ListAuditEntries implements AdminService.ListAuditEntries.
func (h *AdminHandler) ListAuditEntries(ctx context.Context, req *connect.Request[fairplayv1.ListAuditEntriesRequest]) (*connect.Response[fairplayv1.ListAuditEntriesResponse], error) {
	p := principal(ctx)
	page, err := h.admin.AuditLog(ctx, p, req.Msg.GetUserId(), optionalInt(req.Msg.Page), optionalInt(req.Msg.Limit))
	if err != nil {
		return nil, err
	}
	out := &fairplayv1.ListAuditEntriesResponse{TotalPages: int32(page.TotalPages), Page: int32(page.Page),
		Entries: make([]*fairplayv1.AuditEntry, 0, len(page.Entries))}
	for _, e := range page.Entries {
		out.Entries = append(out.Entries, toProtoAuditEntry(e))
	}
	return connect.NewResponse(out), nil
}

func toProtoUsers(us []accounts.User) []*fairplayv1.User {
	out := make([]*fairplayv1.User, 0, len(us))
	for _, u := range us {
		out = append(out, toProtoUser(u, true))
	}
	return out
}

func toProtoAuditEntry(e admin.AuditEntry) *fairplayv1.AuditEntry {
	pe := &fairplayv1.AuditEntry{
		Id: e.ID, ActorUsername: e.ActorUsername, Action: e.Action,
		TargetUsername: e.TargetUsername, Before: string(e.Before), After: string(e.After),
		CreatedAt: e.CreatedAt.UTC().Format(time.RFC3339),
	}
	// An operator's command has no administrator (migration 00030).
	if e.ActorID != uuid.Nil {
		pe.ActorId = e.ActorID.String()
	}
	if e.TargetUserID != uuid.Nil {
		pe.TargetUserId = e.TargetUserID.String()
	}
	return pe
}
