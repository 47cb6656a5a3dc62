package rpc

import (
	"context"

	"connectrpc.com/connect"

	"github.com/fairplay/fairplay/internal/accounts"
	"github.com/fairplay/fairplay/internal/games/blackjack"
	fairplayv1 "github.com/fairplay/fairplay/internal/gen/fairplay/v1"
	"github.com/fairplay/fairplay/internal/play"
	"github.com/fairplay/fairplay/internal/problem"
)

// gameRequest is a request naming a running game.
type gameRequest interface{ GetGameId() string }

// errMovesNegative refuses an action's moves below zero.
var errMovesNegative = problem.Invalid("moves must be 0 or more")

// gameAction serves an action on a running game: call the domain as the
// caller (see playAs) with the request's game id and moves (the request's
// optional count of the moves its caller saw), pack the round.
func gameAction[Req, Round, Res any](ctx context.Context, h *GameHandler, req *connect.Request[Req], moves *int32,
	call func(context.Context, accounts.Principal, string, *int) (Round, error), pack func(Round) *Res) (*connect.Response[Res], error) {
	var seen *int
	if moves != nil {
		if *moves < 0 {
			return nil, errMovesNegative
		}
		n := int(*moves)
		seen = &n
	}
	r, err := playAs(ctx, h, req.Header(), func(p accounts.Principal) (Round, error) {
		return call(ctx, p, any(req.Msg).(gameRequest).GetGameId(), seen)
	})
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(pack(r)), nil
}

// StartMines implements GameService.StartMines.
func (h *GameHandler) StartMines(ctx context.Context, req *connect.Request[fairplayv1.StartMinesRequest]) (*connect.Response[fairplayv1.StartMinesResponse], error) {
	r, err := playAs(ctx, h, req.Header(), func(p accounts.Principal) (*play.MinesRound, error) {
		return h.play.StartMines(ctx, p, req.Msg.GetBetAmount(), int(req.Msg.GetMineCount()))
	})
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&fairplayv1.StartMinesResponse{
		Success: true, GameId: r.Bet.ID.String(), NewBalance: r.Balance.String(), MineCount: int32(r.Game.Mines),
		Multiplier: r.Multiplier.String(), NextMultiplier: r.NextMultiplier.String(), Fairness: toProtoFairness(r.Bet, r.Pair),
	}), nil
}

// RevealMinesTile implements GameService.RevealMinesTile. A missing row or
// column is off the board.
func (h *GameHandler) RevealMinesTile(ctx context.Context, req *connect.Request[fairplayv1.RevealMinesTileRequest]) (*connect.Response[fairplayv1.RevealMinesTileResponse], error) {
	row, col := -1, -1
	if req.Msg.Row != nil {
		row = int(req.Msg.GetRow())
	}
	if req.Msg.Col != nil {
		col = int(req.Msg.GetCol())
	}
	return gameAction(ctx, h, req, req.Msg.Moves, func(ctx context.Context, p accounts.Principal, id string, seen *int) (*play.MinesRound, error) {
		return h.play.RevealMinesTile(ctx, p, id, row, col, seen)
	}, func(r *play.MinesRound) *fairplayv1.RevealMinesTileResponse {
		return &fairplayv1.RevealMinesTileResponse{
			Success: true, HitMine: r.HitMine, MinePositions: r.MinePositions(), IsSafe: !r.HitMine,
			Multiplier: r.Multiplier.String(), PotentialWin: r.PotentialWin.String(), NewBalance: r.Balance.String(),
			GameOver: r.Over(), WinAmount: r.Bet.Payout.String(), Revealed: r.Revealed(),
			NextMultiplier: r.NextMultiplier.String(),
		}
	})
}

// CashOutMines implements GameService.CashOutMines.
func (h *GameHandler) CashOutMines(ctx context.Context, req *connect.Request[fairplayv1.CashOutMinesRequest]) (*connect.Response[fairplayv1.CashOutMinesResponse], error) {
	return gameAction(ctx, h, req, req.Msg.Moves, h.play.CashOutMines, func(r *play.MinesRound) *fairplayv1.CashOutMinesResponse {
		return &fairplayv1.CashOutMinesResponse{
			Success: true, MinePositions: r.MinePositions(), WinAmount: r.Bet.Payout.String(),
			Multiplier: r.Multiplier.String(), NewBalance: r.Balance.String(), Revealed: r.Revealed(),
		}
	})
}

// StartPump implements GameService.StartPump.
func (h *GameHandler) StartPump(ctx context.Context, req *connect.Request[fairplayv1.StartPumpRequest]) (*connect.Response[fairplayv1.StartPumpResponse], error) {
	r, err := playAs(ctx, h, req.Header(), func(p accounts.Principal) (*play.PumpRound, error) {
		return h.play.StartPump(ctx, p, req.Msg.GetBetAmount(), req.Msg.GetDifficulty())
	})
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&fairplayv1.StartPumpResponse{
		Success: true, GameId: r.Bet.ID.String(), NewBalance: r.Balance.String(), Difficulty: string(r.Game.Difficulty),
		NextMultiplier: r.NextMultiplier.String(), Fairness: toProtoFairness(r.Bet, r.Pair),
	}), nil
}

// PumpBalloon implements GameService.PumpBalloon.
func (h *GameHandler) PumpBalloon(ctx context.Context, req *connect.Request[fairplayv1.PumpBalloonRequest]) (*connect.Response[fairplayv1.PumpBalloonResponse], error) {
	return gameAction(ctx, h, req, req.Msg.Moves, h.play.PumpBalloon, func(r *play.PumpRound) *fairplayv1.PumpBalloonResponse {
		return &fairplayv1.PumpBalloonResponse{
			Success: true, PumpCount: int32(r.Game.Pumps), Multiplier: r.Multiplier.String(), Burst: r.Burst,
			NewBalance: r.Balance.String(), GameOver: r.Over(), WinAmount: r.Bet.Payout.String(),
			PotentialWin: r.PotentialWin.String(), NextMultiplier: r.NextMultiplier.String(), Pops: toInt32s(r.Pops()),
		}
	})
}

// CashOutPump implements GameService.CashOutPump.
func (h *GameHandler) CashOutPump(ctx context.Context, req *connect.Request[fairplayv1.CashOutPumpRequest]) (*connect.Response[fairplayv1.CashOutPumpResponse], error) {
	return gameAction(ctx, h, req, req.Msg.Moves, h.play.CashOutPump, func(r *play.PumpRound) *fairplayv1.CashOutPumpResponse {
		return &fairplayv1.CashOutPumpResponse{
			Success: true, WinAmount: r.Bet.Payout.String(), NewBalance: r.Balance.String(),
			Multiplier: r.Multiplier.String(), PumpCount: int32(r.Game.Pumps), Pops: toInt32s(r.Pops()),
		}
	})
}

// StartBlackjack implements GameService.StartBlackjack.
func (h *GameHandler) StartBlackjack(ctx context.Context, req *connect.Request[fairplayv1.StartBlackjackRequest]) (*connect.Response[fairplayv1.StartBlackjackResponse], error) {
	r, err := playAs(ctx, h, req.Header(), func(p accounts.Principal) (*play.BlackjackRound, error) {
		return h.play.StartBlackjack(ctx, p, req.Msg.GetBetAmount())
	})
	if err != nil {
		return nil, err
	}
	v := r.View
	return connect.NewResponse(&fairplayv1.StartBlackjackResponse{
		Success: true, GameId: r.Bet.ID.String(), PlayerHand: toProtoCards(v.PlayerHand), DealerHand: toProtoCards(v.DealerHand),
		Result: v.Result, WinAmount: r.Bet.Payout.String(), GameOver: v.GameOver, NewBalance: r.Balance.String(),
		PlayerValue: int32(v.PlayerValue), DealerValue: int32(v.DealerValue), CanDouble: v.CanDouble,
		Fairness: toProtoFairness(r.Bet, r.Pair), Hands: toProtoHands(r),
	}), nil
}

// HitBlackjack implements GameService.HitBlackjack.
func (h *GameHandler) HitBlackjack(ctx context.Context, req *connect.Request[fairplayv1.HitBlackjackRequest]) (*connect.Response[fairplayv1.HitBlackjackResponse], error) {
	return gameAction(ctx, h, req, req.Msg.Moves, h.play.HitBlackjack, func(r *play.BlackjackRound) *fairplayv1.HitBlackjackResponse {
		v := r.View
		return &fairplayv1.HitBlackjackResponse{
			Success: true, PlayerHand: toProtoCards(v.PlayerHand), Result: v.Result, WinAmount: r.Bet.Payout.String(),
			GameOver: v.GameOver, DealerHand: toProtoCards(v.DealerHand), NewBalance: r.Balance.String(),
			PlayerValue: int32(v.PlayerValue), DealerValue: int32(v.DealerValue), Hands: toProtoHands(r),
		}
	})
}

// StandBlackjack implements GameService.StandBlackjack.
func (h *GameHandler) StandBlackjack(ctx context.Context, req *connect.Request[fairplayv1.StandBlackjackRequest]) (*connect.Response[fairplayv1.StandBlackjackResponse], error) {
	return gameAction(ctx, h, req, req.Msg.Moves, h.play.StandBlackjack, func(r *play.BlackjackRound) *fairplayv1.StandBlackjackResponse {
		v := r.View
		return &fairplayv1.StandBlackjackResponse{
			Success: true, DealerHand: toProtoCards(v.DealerHand), Result: v.Result, WinAmount: r.Bet.Payout.String(),
			NewBalance: r.Balance.String(), PlayerHand: toProtoCards(v.PlayerHand), PlayerValue: int32(v.PlayerValue),
			DealerValue: int32(v.DealerValue), GameOver: v.GameOver, Hands: toProtoHands(r),
		}
	})
}

// DoubleBlackjack implements GameService.DoubleBlackjack.
func (h *GameHandler) DoubleBlackjack(ctx context.Context, req *connect.Request[fairplayv1.DoubleBlackjackRequest]) (*connect.Response[fairplayv1.DoubleBlackjackResponse], error) {
	return gameAction(ctx, h, req, req.Msg.Moves, h.play.DoubleBlackjack, func(r *play.BlackjackRound) *fairplayv1.DoubleBlackjackResponse {
		v := r.View
		return &fairplayv1.DoubleBlackjackResponse{
			Success: true, DealerHand: toProtoCards(v.DealerHand), PlayerHand: toProtoCards(v.PlayerHand),
			PlayerValue: int32(v.PlayerValue), Result: v.Result, WinAmount: r.Bet.Payout.String(),
			NewBalance: r.Balance.String(), DealerValue: int32(v.DealerValue), GameOver: v.GameOver,
			BetAmount: r.Bet.Amount.String(), Hands: toProtoHands(r),
		}
	})
}

// SplitBlackjack implements GameService.SplitBlackjack.
func (h *GameHandler) SplitBlackjack(ctx context.Context, req *connect.Request[fairplayv1.SplitBlackjackRequest]) (*connect.Response[fairplayv1.SplitBlackjackResponse], error) {
	return gameAction(ctx, h, req, req.Msg.Moves, h.play.SplitBlackjack, func(r *play.BlackjackRound) *fairplayv1.SplitBlackjackResponse {
		v := r.View
		return &fairplayv1.SplitBlackjackResponse{
			Success: true, PlayerHand: toProtoCards(v.PlayerHand), DealerHand: toProtoCards(v.DealerHand),
			PlayerValue: int32(v.PlayerValue), DealerValue: int32(v.DealerValue), Result: v.Result,
			WinAmount: r.Bet.Payout.String(), GameOver: v.GameOver, NewBalance: r.Balance.String(), Hands: toProtoHands(r),
		}
	})
}

// errAcceptMissing refuses an insurance answer without a decision.
var errAcceptMissing = problem.Invalid("accept is required: true to take insurance (or even money), false to decline")

// InsureBlackjack implements GameService.InsureBlackjack.
func (h *GameHandler) InsureBlackjack(ctx context.Context, req *connect.Request[fairplayv1.InsureBlackjackRequest]) (*connect.Response[fairplayv1.InsureBlackjackResponse], error) {
	if req.Msg.Accept == nil {
		return nil, errAcceptMissing
	}
	accept := req.Msg.GetAccept()
	return gameAction(ctx, h, req, req.Msg.Moves, func(ctx context.Context, p accounts.Principal, id string, seen *int) (*play.BlackjackRound, error) {
		return h.play.InsureBlackjack(ctx, p, id, accept, seen)
	}, func(r *play.BlackjackRound) *fairplayv1.InsureBlackjackResponse {
		v := r.View
		return &fairplayv1.InsureBlackjackResponse{
			Success: true, PlayerHand: toProtoCards(v.PlayerHand), DealerHand: toProtoCards(v.DealerHand),
			PlayerValue: int32(v.PlayerValue), DealerValue: int32(v.DealerValue), Result: v.Result,
			WinAmount: r.Bet.Payout.String(), GameOver: v.GameOver, NewBalance: r.Balance.String(), Hands: toProtoHands(r),
		}
	})
}

// toProtoHands is the split and insurance state of a Blackjack game.
func toProtoHands(r *play.BlackjackRound) *fairplayv1.BlackjackHands {
	v := r.View
	return &fairplayv1.BlackjackHands{
		SecondHand: toProtoCards(v.SecondHand), SecondValue: int32(v.SecondValue), ActiveHand: int32(v.ActiveHand),
		CanSplit: v.CanSplit, CanDouble: v.CanDouble, Insurance: string(v.Insurance), EvenMoney: v.EvenMoney,
		Doubled: v.Doubled, HandResults: v.HandResults, BetAmount: r.Bet.Amount.String(), Moves: int32(r.Moves()),
	}
}

// GetActiveGames implements GameService.GetActiveGames.
func (h *GameHandler) GetActiveGames(ctx context.Context, req *connect.Request[fairplayv1.GetActiveGamesRequest]) (*connect.Response[fairplayv1.GetActiveGamesResponse], error) {
	p := principal(ctx)
	a, err := h.play.Active(ctx, p)
	if err != nil {
		return nil, err
	}
	out := &fairplayv1.GetActiveGamesResponse{}
	if r := a.Mines; r != nil {
		out.Mines = &fairplayv1.MinesGame{
			GameId: r.Bet.ID.String(), BetAmount: r.Bet.Amount.String(), MineCount: int32(r.Game.Mines),
			Revealed: r.Revealed(), Multiplier: r.Multiplier.String(), PotentialWin: r.PotentialWin.String(),
			NextMultiplier: r.NextMultiplier.String(), Fairness: toProtoFairness(r.Bet, r.Pair),
		}
	}
	if r := a.Pump; r != nil {
		out.Pump = &fairplayv1.PumpGame{
			GameId: r.Bet.ID.String(), BetAmount: r.Bet.Amount.String(), Difficulty: string(r.Game.Difficulty),
			PumpCount: int32(r.Game.Pumps), Multiplier: r.Multiplier.String(), PotentialWin: r.PotentialWin.String(),
			NextMultiplier: r.NextMultiplier.String(), Fairness: toProtoFairness(r.Bet, r.Pair),
		}
	}
	if r := a.Blackjack; r != nil {
		v := r.View
		out.Blackjack = &fairplayv1.BlackjackGame{
			GameId: r.Bet.ID.String(), BetAmount: r.Bet.Amount.String(), PlayerHand: toProtoCards(v.PlayerHand),
			DealerHand: toProtoCards(v.DealerHand), PlayerValue: int32(v.PlayerValue), DealerValue: int32(v.DealerValue),
			CanDouble: v.CanDouble, Fairness: toProtoFairness(r.Bet, r.Pair), Hands: toProtoHands(r),
		}
	}
	return connect.NewResponse(out), nil
}

// toProtoCards converts a hand as the rules show it; a hidden card carries
// nothing but hidden.
func toProtoCards(faces []blackjack.Face) []*fairplayv1.Card {
	out := make([]*fairplayv1.Card, len(faces))
	for i, f := range faces {
		if f.Hidden {
			out[i] = &fairplayv1.Card{Hidden: true}
			continue
		}
		value, suit, n := f.Value, string(f.Suit), int32(f.NumericValue)
		out[i] = &fairplayv1.Card{Value: &value, Suit: &suit, NumericValue: &n}
	}
	return out
}
