package rpc

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"connectrpc.com/connect"

	"github.com/fairplay/fairplay/internal/accounts"
	fairplayv1 "github.com/fairplay/fairplay/internal/gen/fairplay/v1"
	"github.com/fairplay/fairplay/internal/gen/fairplay/v1/fairplayv1connect"
	"github.com/fairplay/fairplay/internal/play"
	"github.com/fairplay/fairplay/internal/problem"
)

// GameHandler serves GameService.
type GameHandler struct {
	accounts *accounts.Service
	play     *play.Service
	log      *slog.Logger
}

var _ fairplayv1connect.GameServiceHandler = (*GameHandler)(nil)

// NewGameHandler returns the GameService handler.
func NewGameHandler(acc *accounts.Service, p *play.Service, log *slog.Logger) *GameHandler {
	return &GameHandler{accounts: acc, play: p, log: log}
}

// playAs runs play, which places a bet or acts on a running game, for the
// caller. AccessInterceptor verified only the token (ACCESS_PLAYER): its
// session is checked in the bet's own transaction (see
// accounts.Service.Claims), a round trip saved on the hottest path. A play
// refused for any other reason checks the session first, so a revoked
// session hears 401 before anything else, as on every other call.
func playAs[T any](ctx context.Context, h *GameHandler, header http.Header, play func(accounts.Principal) (T, error)) (T, error) {
	r, err := play(principal(ctx))
	if pe, ok := problem.As(err); ok && pe.Kind != problem.KindUnauthenticated {
		if _, aerr := h.accounts.Authenticate(ctx, bearer(header)); aerr != nil {
			if ae, ok := problem.As(aerr); ok && ae.Kind == problem.KindUnauthenticated {
				return r, aerr
			}
		}
	}
	return r, err
}

// PlayDice implements GameService.PlayDice.
func (h *GameHandler) PlayDice(ctx context.Context, req *connect.Request[fairplayv1.PlayDiceRequest]) (*connect.Response[fairplayv1.PlayDiceResponse], error) {
	r, err := playAs(ctx, h, req.Header(), func(p accounts.Principal) (play.DiceResult, error) {
		return h.play.PlayDice(ctx, p, req.Msg.GetBetAmount(), req.Msg.GetRollTarget())
	})
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&fairplayv1.PlayDiceResponse{
		Result: r.Outcome.Roll.String(), IsWin: r.Outcome.Win, WinAmount: r.Bet.Payout.String(),
		NewBalance: r.Balance.String(), Multiplier: r.Outcome.Target.Multiplier().String(),
		BetId: r.Bet.ID.String(), Fairness: toProtoFairness(r.Bet, r.Pair),
	}), nil
}

// PlayPlinko implements GameService.PlayPlinko.
func (h *GameHandler) PlayPlinko(ctx context.Context, req *connect.Request[fairplayv1.PlayPlinkoRequest]) (*connect.Response[fairplayv1.PlayPlinkoResponse], error) {
	r, err := playAs(ctx, h, req.Header(), func(p accounts.Principal) (play.PlinkoResult, error) {
		return h.play.PlayPlinko(ctx, p, req.Msg.GetBetAmount(), int(req.Msg.GetRows()), req.Msg.GetRisk())
	})
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&fairplayv1.PlayPlinkoResponse{
		Decisions: toInt32s(r.Outcome.Decisions), FinalBucket: int32(r.Outcome.Bucket),
		Multiplier: r.Outcome.Multiplier.String(), WinAmount: r.Bet.Payout.String(), NewBalance: r.Balance.String(),
		BetId: r.Bet.ID.String(), Fairness: toProtoFairness(r.Bet, r.Pair),
	}), nil
}

// PlayKeno implements GameService.PlayKeno.
func (h *GameHandler) PlayKeno(ctx context.Context, req *connect.Request[fairplayv1.PlayKenoRequest]) (*connect.Response[fairplayv1.PlayKenoResponse], error) {
	picks := make([]int, len(req.Msg.GetSelectedNumbers()))
	for i, n := range req.Msg.GetSelectedNumbers() {
		picks[i] = int(n)
	}
	r, err := playAs(ctx, h, req.Header(), func(p accounts.Principal) (play.KenoResult, error) {
		return h.play.PlayKeno(ctx, p, req.Msg.GetBetAmount(), picks, req.Msg.GetRiskLevel())
	})
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&fairplayv1.PlayKenoResponse{
		Success: true, DrawnNumbers: toInt32s(r.Outcome.Drawn), Matches: toInt32s(r.Outcome.Matches),
		WinAmount: r.Bet.Payout.String(), NewBalance: r.Balance.String(), Multiplier: r.Outcome.Multiplier.String(),
		BetId: r.Bet.ID.String(), Fairness: toProtoFairness(r.Bet, r.Pair),
	}), nil
}

// ListBets implements GameService.ListBets.
func (h *GameHandler) ListBets(ctx context.Context, req *connect.Request[fairplayv1.ListBetsRequest]) (*connect.Response[fairplayv1.ListBetsResponse], error) {
	p := principal(ctx)
	page, err := h.play.History(ctx, p, optionalInt(req.Msg.Page), optionalInt(req.Msg.Limit), req.Msg.GetGame())
	if err != nil {
		return nil, err
	}
	out := &fairplayv1.ListBetsResponse{Bets: make([]*fairplayv1.Bet, 0, len(page.Bets)), Page: int32(page.Page),
		TotalPages: int32(page.TotalPages)}
	for _, b := range page.Bets {
		out.Bets = append(out.Bets, toProtoBet(b))
	}
	return connect.NewResponse(out), nil
}

// GetBet implements GameService.GetBet.
func (h *GameHandler) GetBet(ctx context.Context, req *connect.Request[fairplayv1.GetBetRequest]) (*connect.Response[fairplayv1.GetBetResponse], error) {
	p := principal(ctx)
	b, err := h.play.Bet(ctx, p, req.Msg.GetBetId())
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&fairplayv1.GetBetResponse{Bet: toProtoBet(b)}), nil
}

func optionalInt(v *int32) *int {
	if v == nil {
		return nil
	}
	n := int(*v)
	return &n
}

func toInt32s(xs []int) []int32 {
	out := make([]int32, len(xs))
	for i, x := range xs {
		out[i] = int32(x)
	}
	return out
}

// toProtoFairness shows a bet's seeds; the server seed only once revealed.
func toProtoFairness(b play.Bet, pair play.SeedPair) *fairplayv1.Fairness {
	f := &fairplayv1.Fairness{ServerSeedHash: pair.ServerSeedHash, ClientSeed: b.ClientSeed, Nonce: b.Nonce}
	if pair.RevealedAt != nil {
		f.ServerSeed = pair.ServerSeed
	}
	return f
}

func toProtoBet(b play.BetWithSeeds) *fairplayv1.Bet {
	out := &fairplayv1.Bet{
		Id: b.ID.String(), Game: string(b.Game), Amount: b.Amount.String(), Multiplier: b.Multiplier.String(),
		Payout: b.Payout.String(), Status: b.Status, CreatedAt: b.CreatedAt.UTC().Format(time.RFC3339Nano),
		Fairness: toProtoFairness(b.Bet, b.Pair), Params: string(b.Params),
	}
	// A running game's state would give its hidden layout away.
	if b.Status == play.StatusSettled {
		out.Outcome = string(b.State)
	}
	return out
}
