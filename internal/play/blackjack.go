package play

import (
	"context"
	"errors"

	"github.com/fairplay/fairplay/internal/accounts"
	"github.com/fairplay/fairplay/internal/games"
	"github.com/fairplay/fairplay/internal/games/blackjack"
	"github.com/fairplay/fairplay/internal/games/event"
	"github.com/fairplay/fairplay/internal/problem"
)

var blackjackKind = kind[blackjack.Game]{
	game:   Blackjack,
	over:   (*blackjack.Game).Over,
	payout: (*blackjack.Game).Multiplier,
}

// Errors of Blackjack that users see.
var (
	ErrCannotDouble        = problem.Invalid(blackjack.ErrCannotDouble.Error())
	ErrInsufficientDouble  = problem.Invalid("Insufficient balance to double down")
	errBlackjackActionOver = errors.New("blackjack action on an ended game")
)

// BlackjackRound is a Blackjack game after an action.
type BlackjackRound struct {
	*Round[blackjack.Game]
	// View is what the player may see: the dealer's hole card stays hidden
	// until the dealer plays.
	View blackjack.View
}

func newBlackjackRound(r *Round[blackjack.Game]) *BlackjackRound {
	return &BlackjackRound{Round: r, View: r.Game.View()}
}

// StartBlackjack validates the stake and deals a game from the caller's seed
// pair; a natural settles it at once.
func (s *Service) StartBlackjack(ctx context.Context, p accounts.Principal, betAmount string) (*BlackjackRound, error) {
	stake, err := s.parseStake(betAmount)
	if err != nil {
		return nil, err
	}
	r, err := startGame(ctx, s, p, blackjackKind, stake, games.Params{},
		func(src event.Source) (*blackjack.Game, error) { return blackjack.New(blackjack.NewDeck(src)) })
	if err != nil {
		return nil, err
	}
	return newBlackjackRound(r), nil
}

// HitBlackjack deals the player one card.
func (s *Service) HitBlackjack(ctx context.Context, p accounts.Principal, gameID string) (*BlackjackRound, error) {
	return s.blackjackAction(ctx, p, gameID, 'h', (*blackjack.Game).Hit)
}

// StandBlackjack ends the player's turn; the dealer plays and the game settles.
func (s *Service) StandBlackjack(ctx context.Context, p accounts.Principal, gameID string) (*BlackjackRound, error) {
	return s.blackjackAction(ctx, p, gameID, 's', (*blackjack.Game).Stand)
}

// DoubleBlackjack takes a second stake, equal to the first, on the first two
// cards (as a second "bet" ledger entry of the same bet, whose amount becomes
// the total stake), deals one card and lets the dealer play.
func (s *Service) DoubleBlackjack(ctx context.Context, p accounts.Principal, gameID string) (*BlackjackRound, error) {
	r, err := act(ctx, s, p, blackjackKind, gameID, func(r *Round[blackjack.Game]) error {
		if !r.Game.CanDouble() {
			return ErrCannotDouble
		}
		base := r.Bet.Amount
		if r.Balance < base {
			// Refused before the card is dealt: the refusal cannot depend
			// on it. (A bet racing this double can still empty the balance
			// in between; the save refuses that the same way.)
			return ErrInsufficientBalance
		}
		r.Bet.Amount, r.stake = 2*base, base // base ≤ Limits.MaxBet: no overflow
		return applyBlackjack(r, 'd', (*blackjack.Game).Double)
	})
	if errors.Is(err, ErrInsufficientBalance) {
		return nil, ErrInsufficientDouble
	}
	if err != nil {
		return nil, err
	}
	return newBlackjackRound(r), nil
}

func (s *Service) blackjackAction(ctx context.Context, p accounts.Principal, gameID string, code byte,
	action func(*blackjack.Game) error) (*BlackjackRound, error) {
	r, err := act(ctx, s, p, blackjackKind, gameID, func(r *Round[blackjack.Game]) error {
		return applyBlackjack(r, code, action)
	})
	if err != nil {
		return nil, err
	}
	return newBlackjackRound(r), nil
}

// applyBlackjack runs one action and records it in the params ("h", "s",
// "d"), which is what lets games.Replay reproduce the game.
func applyBlackjack(r *Round[blackjack.Game], code byte, action func(*blackjack.Game) error) error {
	if err := action(r.Game); err != nil {
		if errors.Is(err, blackjack.ErrGameOver) {
			return errBlackjackActionOver // the row said active: the stored game is inconsistent
		}
		return gameError(err, blackjack.ErrCannotDouble)
	}
	r.Params.Actions += string(code)
	return nil
}
