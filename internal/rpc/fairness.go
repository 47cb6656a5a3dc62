package rpc

import (
	"context"
	"log/slog"

	"connectrpc.com/connect"

	"github.com/fairplay/fairplay/internal/accounts"
	fairplayv1 "github.com/fairplay/fairplay/internal/gen/fairplay/v1"
	"github.com/fairplay/fairplay/internal/gen/fairplay/v1/fairplayv1connect"
	"github.com/fairplay/fairplay/internal/play"
)

// FairnessHandler serves FairnessService.
type FairnessHandler struct {
	accounts *accounts.Service
	play     *play.Service
	log      *slog.Logger
}

var _ fairplayv1connect.FairnessServiceHandler = (*FairnessHandler)(nil)

// NewFairnessHandler returns the FairnessService handler.
func NewFairnessHandler(acc *accounts.Service, p *play.Service, log *slog.Logger) *FairnessHandler {
	return &FairnessHandler{accounts: acc, play: p, log: log}
}

func toProtoSeeds(p play.SeedPair) *fairplayv1.SeedPair {
	return &fairplayv1.SeedPair{ServerSeedHash: p.ServerSeedHash, ClientSeed: p.ClientSeed, Nonce: p.Nonce}
}

// GetSeeds implements FairnessService.GetSeeds.
func (h *FairnessHandler) GetSeeds(ctx context.Context, req *connect.Request[fairplayv1.GetSeedsRequest]) (*connect.Response[fairplayv1.GetSeedsResponse], error) {
	p := principal(ctx)
	pair, err := h.play.Seeds(ctx, p)
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&fairplayv1.GetSeedsResponse{Seeds: toProtoSeeds(pair)}), nil
}

// SetClientSeed implements FairnessService.SetClientSeed.
func (h *FairnessHandler) SetClientSeed(ctx context.Context, req *connect.Request[fairplayv1.SetClientSeedRequest]) (*connect.Response[fairplayv1.SetClientSeedResponse], error) {
	p := principal(ctx)
	pair, err := h.play.SetClientSeed(ctx, p, req.Msg.GetClientSeed())
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&fairplayv1.SetClientSeedResponse{Seeds: toProtoSeeds(pair)}), nil
}

// RotateSeed implements FairnessService.RotateSeed.
func (h *FairnessHandler) RotateSeed(ctx context.Context, req *connect.Request[fairplayv1.RotateSeedRequest]) (*connect.Response[fairplayv1.RotateSeedResponse], error) {
	p := principal(ctx)
	r, err := h.play.Rotate(ctx, p, req.Msg.GetClientSeed())
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&fairplayv1.RotateSeedResponse{
		RevealedServerSeed: r.Old.ServerSeed, PreviousServerSeedHash: r.Old.ServerSeedHash,
		PreviousClientSeed: r.Old.ClientSeed, PreviousNonce: r.Old.Nonce, Seeds: toProtoSeeds(r.New),
	}), nil
}

// VerifyBet implements FairnessService.VerifyBet.
func (h *FairnessHandler) VerifyBet(ctx context.Context, req *connect.Request[fairplayv1.VerifyBetRequest]) (*connect.Response[fairplayv1.VerifyBetResponse], error) {
	p := principal(ctx)
	v, err := h.play.Verify(ctx, p, req.Msg.GetBetId())
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&fairplayv1.VerifyBetResponse{
		Game: string(v.Bet.Game), ServerSeed: v.Bet.Pair.ServerSeed, ServerSeedHash: v.Bet.Pair.ServerSeedHash,
		ClientSeed: v.Bet.ClientSeed, Nonce: v.Bet.Nonce, Params: string(v.Bet.Params), Recorded: string(v.Bet.State),
		Recomputed: string(v.Recomputed), Matches: v.Matches,
	}), nil
}
