package rpc

import (
	"context"
	"log/slog"
	"time"

	"connectrpc.com/connect"

	"github.com/fairplay/fairplay/internal/accounts"
	fairplayv1 "github.com/fairplay/fairplay/internal/gen/fairplay/v1"
	"github.com/fairplay/fairplay/internal/gen/fairplay/v1/fairplayv1connect"
	"github.com/fairplay/fairplay/internal/wallet"
)

// WalletHandler serves WalletService: the daily top-up.
type WalletHandler struct {
	accounts *accounts.Service
	topUps   *wallet.TopUps
	log      *slog.Logger
}

var _ fairplayv1connect.WalletServiceHandler = (*WalletHandler)(nil)

// NewWalletHandler returns the WalletService handler.
func NewWalletHandler(acc *accounts.Service, topUps *wallet.TopUps, log *slog.Logger) *WalletHandler {
	return &WalletHandler{accounts: acc, topUps: topUps, log: log}
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
