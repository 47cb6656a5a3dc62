package rpc

import (
	"context"
	"log/slog"
	"time"

	"connectrpc.com/connect"

	"github.com/fairplay/fairplay/internal/accounts"
	fairplayv1 "github.com/fairplay/fairplay/internal/gen/fairplay/v1"
	"github.com/fairplay/fairplay/internal/gen/fairplay/v1/fairplayv1connect"
	"github.com/fairplay/fairplay/internal/limits"
	"github.com/fairplay/fairplay/internal/money"
	"github.com/fairplay/fairplay/internal/wallet"
)

// WalletHandler serves WalletService: the daily top-up and the
// responsible-gambling settings.
type WalletHandler struct {
	accounts *accounts.Service
	topUps   *wallet.TopUps
	limits   *limits.Service
	log      *slog.Logger
}

var _ fairplayv1connect.WalletServiceHandler = (*WalletHandler)(nil)

// NewWalletHandler returns the WalletService handler.
func NewWalletHandler(acc *accounts.Service, topUps *wallet.TopUps, lim *limits.Service, log *slog.Logger) *WalletHandler {
	return &WalletHandler{accounts: acc, topUps: topUps, limits: lim, log: log}
}

// GetTopUp implements WalletService.GetTopUp.
func (h *WalletHandler) GetTopUp(ctx context.Context, req *connect.Request[fairplayv1.GetTopUpRequest]) (*connect.Response[fairplayv1.GetTopUpResponse], error) {
	p := principal(ctx)
	t, err := h.topUps.Status(ctx, p.UserID)
	if err != nil {
		return nil, err
	}
	out := &fairplayv1.GetTopUpResponse{Available: t.Available, Amount: t.Amount.String(), Threshold: t.Threshold.String()}
	if t.NextAt != nil {
		next := t.NextAt.UTC().Format(time.RFC3339)
		out.NextAt = &next
	}
	return connect.NewResponse(out), nil
}

// ClaimTopUp implements WalletService.ClaimTopUp.
func (h *WalletHandler) ClaimTopUp(ctx context.Context, req *connect.Request[fairplayv1.ClaimTopUpRequest]) (*connect.Response[fairplayv1.ClaimTopUpResponse], error) {
	p := principal(ctx)
	c, err := h.topUps.Claim(ctx, p.UserID)
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&fairplayv1.ClaimTopUpResponse{NewBalance: c.Balance.String(), Amount: c.Amount.String(),
		NextAt: c.NextAt.UTC().Format(time.RFC3339)}), nil
}

// GetLimits implements WalletService.GetLimits.
func (h *WalletHandler) GetLimits(ctx context.Context, req *connect.Request[fairplayv1.GetLimitsRequest]) (*connect.Response[fairplayv1.GetLimitsResponse], error) {
	st, err := h.limits.Get(ctx, principal(ctx).UserID)
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&fairplayv1.GetLimitsResponse{Limits: toProtoLimits(st)}), nil
}

// SetLimits implements WalletService.SetLimits.
func (h *WalletHandler) SetLimits(ctx context.Context, req *connect.Request[fairplayv1.SetLimitsRequest]) (*connect.Response[fairplayv1.SetLimitsResponse], error) {
	m := req.Msg
	w := limits.Wanted{RealityCheck: int(m.GetRealityCheckMinutes())}
	w.Loss, w.Wager = fromProtoAmounts(m.GetLoss()), fromProtoAmounts(m.GetWager())
	st, err := h.limits.SetLimits(ctx, principal(ctx).UserID, w)
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&fairplayv1.SetLimitsResponse{Limits: toProtoLimits(st)}), nil
}

// TakeBreak implements WalletService.TakeBreak.
func (h *WalletHandler) TakeBreak(ctx context.Context, req *connect.Request[fairplayv1.TakeBreakRequest]) (*connect.Response[fairplayv1.TakeBreakResponse], error) {
	st, err := h.limits.TakeBreak(ctx, principal(ctx).UserID, int(req.Msg.GetDays()))
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&fairplayv1.TakeBreakResponse{Limits: toProtoLimits(st)}), nil
}

// ExcludeSelf implements WalletService.ExcludeSelf.
func (h *WalletHandler) ExcludeSelf(ctx context.Context, req *connect.Request[fairplayv1.ExcludeSelfRequest]) (*connect.Response[fairplayv1.ExcludeSelfResponse], error) {
	// The length is checked first, then the password: nobody can lift a
	// self-exclusion, so a session alone (a borrowed browser, a stolen
	// token) must not start one (found by reviews playing a hostile
	// player; TestStolenSessionCannotExcludeTheOwner).
	e := limits.Exclusion(req.Msg.GetDuration())
	if !e.Valid() {
		return nil, limits.ErrExclusion
	}
	p := principal(ctx)
	if err := h.accounts.ConfirmPassword(ctx, p, req.Msg.GetPassword(), clientFrom(ctx)); err != nil {
		return nil, err
	}
	st, err := h.limits.Exclude(ctx, p.UserID, e)
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&fairplayv1.ExcludeSelfResponse{Limits: toProtoLimits(st)}), nil
}

// GetRealityCheck implements WalletService.GetRealityCheck.
func (h *WalletHandler) GetRealityCheck(ctx context.Context, req *connect.Request[fairplayv1.GetRealityCheckRequest]) (*connect.Response[fairplayv1.GetRealityCheckResponse], error) {
	p := principal(ctx)
	rc, err := h.limits.RealityCheck(ctx, p.UserID, p.SessionID)
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&fairplayv1.GetRealityCheckResponse{
		SignedInAt: rc.SignedInAt.UTC().Format(time.RFC3339), Bets: rc.Bets, Wagered: rc.Wagered.String(),
		Net: rc.Net.String(), IntervalMinutes: int32(rc.Interval),
	}), nil
}

// fromProtoAmounts reads one kind of limits (absent: none).
func fromProtoAmounts(a *fairplayv1.PeriodAmounts) [3]*string {
	if a == nil {
		return [3]*string{}
	}
	return [3]*string{a.Day, a.Week, a.Month}
}

// toProtoAmounts writes one kind of limits (0: absent).
func toProtoAmounts(a [3]money.Amount) *fairplayv1.PeriodAmounts {
	opt := func(v money.Amount) *string {
		if v == 0 {
			return nil
		}
		s := v.String()
		return &s
	}
	return &fairplayv1.PeriodAmounts{Day: opt(a[limits.Day]), Week: opt(a[limits.Week]), Month: opt(a[limits.Month])}
}

// toProtoLimits writes a player's settings, for the player and for admins.
func toProtoLimits(st limits.State) *fairplayv1.PlayLimits {
	out := &fairplayv1.PlayLimits{
		Loss: toProtoAmounts(st.Limits.Loss), Wager: toProtoAmounts(st.Limits.Wager),
		ExcludedPermanently: st.Permanent, RealityCheckMinutes: int32(st.RealityCheck), CanBet: st.CanBet(),
	}
	if st.Pending != nil {
		out.Pending = &fairplayv1.PendingLimits{Loss: toProtoAmounts(st.Pending.Limits.Loss),
			Wager: toProtoAmounts(st.Pending.Limits.Wager), From: st.Pending.From.UTC().Format(time.RFC3339)}
	}
	stamp := func(t time.Time) *string {
		if t.IsZero() {
			return nil
		}
		s := t.UTC().Format(time.RFC3339)
		return &s
	}
	out.BreakUntil, out.ExcludedUntil = stamp(st.BreakUntil), stamp(st.ExcludedUntil)
	for _, p := range limits.Periods {
		u := st.Usage[p]
		out.Usage = append(out.Usage, &fairplayv1.PeriodUsage{Period: p.String(), Wagered: u.Wagered.String(),
			NetLoss: u.NetLoss.String(), ResetsAt: u.Resets.UTC().Format(time.RFC3339)})
	}
	return out
}
