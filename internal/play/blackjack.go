package play

import (
	"context"
	"errors"
	"math/big"

	"github.com/fairplay/fairplay/internal/accounts"
	"github.com/fairplay/fairplay/internal/games"
	"github.com/fairplay/fairplay/internal/games/blackjack"
	"github.com/fairplay/fairplay/internal/games/event"
	"github.com/fairplay/fairplay/internal/money"
	"github.com/fairplay/fairplay/internal/problem"
)

var blackjackKind = kind[blackjack.Game]{
	game:   Blackjack,
	over:   (*blackjack.Game).Over,
	payout: (*blackjack.Game).Multiplier,
	returns: func(g *blackjack.Game) (money.Multiplier, money.Multiplier) {
		return g.Stakes(), g.Return()
	},
	moves:     func(p games.Params) int { return len(p.Actions) },
	hiddenEnd: true,
	stateSize: 1024, // 52 cards of up to eight bytes, and the hands: under 800 bytes
}

// blackjackOutcomeSize is at least the longest recorded outcome of a
// Blackjack game (checkStateSize), which is encoded into a buffer of that
// capacity (marshalOutcome).
const blackjackOutcomeSize = 1024

// Errors of Blackjack that users see.
var (
	ErrCannotDouble          = problem.Invalid(blackjack.ErrCannotDouble.Error())
	ErrCannotSplit           = problem.Invalid(blackjack.ErrCannotSplit.Error())
	ErrInsuranceFirst        = problem.Invalid(blackjack.ErrInsuranceFirst.Error())
	ErrNoInsurance           = problem.Invalid(blackjack.ErrNoInsurance.Error())
	ErrInsufficientDouble    = problem.Invalid("Insufficient balance to double down")
	ErrInsufficientSplit     = problem.Invalid("Insufficient balance to split")
	ErrInsufficientInsurance = problem.Invalid("Insufficient balance for insurance")
	errBlackjackActionOver   = errors.New("blackjack action on an ended game")
	errBlackjackStake        = errors.New("blackjack: the bet's amount is not a whole number of base stakes")
	// errStakeUnlocked refuses an extra stake decided on funds the store
	// did not read with the player's row locked (an action not marked
	// GameAction.Stakes, or a replica's copy): the store then decides it
	// again on the locking path, and a wiring that never locks fails
	// loudly instead of refusing a limit after the draw.
	errStakeUnlocked = errors.New("blackjack: an extra stake decided without the player's row locked")
)

// blackjackUserErrors are the rules' refusals a player sees as they are.
var blackjackUserErrors = []error{blackjack.ErrCannotDouble, blackjack.ErrCannotSplit, blackjack.ErrInsuranceFirst,
	blackjack.ErrNoInsurance}

// BlackjackRound is a Blackjack game after an action.
type BlackjackRound struct {
	*Round[blackjack.Game]
	// View is what the player may see: the dealer's hole card stays hidden
	// until the dealer plays.
	View blackjack.View
}

// Moves is how many of the player's actions the game has taken: what an
// action's seen counts.
func (r *BlackjackRound) Moves() int { return blackjackKind.moves(r.Params) }

func newBlackjackRound(r *Round[blackjack.Game]) *BlackjackRound {
	return &BlackjackRound{Round: r, View: r.Game.View()}
}

// StartBlackjack validates the stake and deals a game from the caller's seed
// pair under the split rules (blackjack.RulesSplit, recorded in the params so
// the verifier replays it under them); a natural settles it at once unless
// the dealer shows an ace, which first offers insurance.
func (s *Service) StartBlackjack(ctx context.Context, p accounts.Principal, betAmount string) (*BlackjackRound, error) {
	stake, err := s.parseStake(betAmount)
	if err != nil {
		return nil, err
	}
	r, err := startGame(ctx, s, p, blackjackKind, stake, games.Params{Rules: int(blackjack.RulesSplit)},
		func(src event.Source) (*blackjack.Game, error) {
			return blackjack.Deal(blackjack.NewDeck(src), blackjack.RulesSplit)
		})
	if err != nil {
		return nil, err
	}
	return newBlackjackRound(r), nil
}

// HitBlackjack deals the hand in play one card.
func (s *Service) HitBlackjack(ctx context.Context, p accounts.Principal, gameID string, seen *int) (*BlackjackRound, error) {
	return s.blackjackAction(ctx, p, gameID, seen, blackjackHit, nil)
}

// StandBlackjack ends the hand in play; after the last hand the dealer plays
// and the game settles.
func (s *Service) StandBlackjack(ctx context.Context, p accounts.Principal, gameID string, seen *int) (*BlackjackRound, error) {
	return s.blackjackAction(ctx, p, gameID, seen, blackjackStand, nil)
}

// DoubleBlackjack takes a stake equal to the original one on the first two
// cards of the hand in play (after a split too), as another "bet" ledger
// entry of the same bet, whose amount becomes the total stake; it deals one
// card and ends the hand.
func (s *Service) DoubleBlackjack(ctx context.Context, p accounts.Principal, gameID string, seen *int) (*BlackjackRound, error) {
	return s.blackjackAction(ctx, p, gameID, seen, blackjackDouble, ErrInsufficientDouble)
}

// SplitBlackjack takes a stake equal to the original one for a second hand,
// in the same transaction as the split, with its ledger entry, and deals
// each hand its second card.
func (s *Service) SplitBlackjack(ctx context.Context, p accounts.Principal, gameID string, seen *int) (*BlackjackRound, error) {
	return s.blackjackAction(ctx, p, gameID, seen, blackjackSplit, ErrInsufficientSplit)
}

// InsureBlackjack records the insurance decision offered when the dealer
// shows an ace. Accepting takes half the original stake (with its ledger
// entry, in the same transaction), or, holding a natural, is even money:
// no stake, 1:1 at once. Then the dealer peeks.
func (s *Service) InsureBlackjack(ctx context.Context, p accounts.Principal, gameID string, accept bool,
	seen *int) (*BlackjackRound, error) {
	if !accept {
		return s.blackjackAction(ctx, p, gameID, seen, blackjackDecline, nil)
	}
	return s.blackjackAction(ctx, p, gameID, seen, blackjackInsure, ErrInsufficientInsurance)
}

// blackjackAction runs move on the caller's game (seen, when set, is the
// number of actions the caller saw it take); short, when set, is what a
// balance short of the move's stake hears, and marks a move that may take
// an extra stake (GameAction.Stakes).
func (s *Service) blackjackAction(ctx context.Context, p accounts.Principal, gameID string, seen *int,
	move blackjackMove, short error) (*BlackjackRound, error) {
	stakes := short != nil
	r, err := act(ctx, s, p, blackjackKind, gameID, seen, stakes, move)
	if short != nil && errors.Is(err, ErrInsufficientBalance) {
		return nil, short
	}
	if err != nil {
		return nil, err
	}
	return newBlackjackRound(r), nil
}

// blackjackMove is a player's action on a running game as act runs it.
type blackjackMove = func(r *Round[blackjack.Game]) error

// The player's actions: hit, stand, double, split, insurance (or even money)
// taken, and insurance declined.
var (
	blackjackHit    = blackjackPlay('h', (*blackjack.Game).Hit)
	blackjackStand  = blackjackPlay('s', (*blackjack.Game).Stand)
	blackjackDouble = blackjackStaked('d', (*blackjack.Game).CanDouble, ErrCannotDouble, money.One,
		(*blackjack.Game).Double, nil)
	blackjackSplit = blackjackStaked('p', (*blackjack.Game).CanSplit, ErrCannotSplit, money.One,
		(*blackjack.Game).Split, nil)
	blackjackInsure = blackjackStaked('i', (*blackjack.Game).InsurancePending, ErrNoInsurance, money.One/2,
		func(g *blackjack.Game) error { return g.Insure(true) }, (*blackjack.Game).EvenMoneyOffered)
	blackjackDecline = blackjackPlay('n', func(g *blackjack.Game) error { return g.Insure(false) })
)

// blackjackPlay is an action that takes no stake.
func blackjackPlay(code byte, action func(*blackjack.Game) error) blackjackMove {
	return func(r *Round[blackjack.Game]) error { return applyBlackjack(r, code, action) }
}

// blackjackStaked is an action that takes an extra stake of share × the
// original stake (none when free reports so: even money). It is refused,
// changing nothing, when allowed says no (with notAllowed), when the
// player's own rules cap the stake below it (*OverLimitsError, which the
// store turns into the rule's refusal) or when the balance is short (with
// ErrInsufficientBalance), in the order the save's statement decides them —
// all before any card is dealt, from what the player already sees and the
// player's row, which the store holds locked until the save (GameAction.
// Stakes), so a refusal cannot depend on the hole card or the deck.
func blackjackStaked(code byte, allowed func(*blackjack.Game) bool, notAllowed error, share money.Multiplier,
	action func(*blackjack.Game) error, free func(*blackjack.Game) bool) blackjackMove {
	return func(r *Round[blackjack.Game]) error {
		if r.Game.InsurancePending() && code != 'i' {
			return ErrInsuranceFirst
		}
		if !allowed(r.Game) {
			return notAllowed
		}
		if free == nil || !free(r.Game) {
			base, err := blackjackBase(r)
			if err != nil {
				return err
			}
			extra := money.MulFloorCapped(base, share, base) // share ≤ 1: never capped, exact for whole cents
			if !r.funds.Locked {
				return errStakeUnlocked
			}
			if r.funds.Capped && extra > r.funds.Headroom {
				return &OverLimitsError{Stake: extra}
			}
			if r.Balance < extra {
				return ErrInsufficientBalance
			}
			r.Bet.Amount, r.stake = r.Bet.Amount+extra, extra // at most 4 base stakes ≤ 4 × Limits.MaxBet: no overflow
		}
		return applyBlackjack(r, code, action)
	}
}

// blackjackBase returns the original stake of a running game: its total
// stake divided by the number of base stakes the game holds.
func blackjackBase(r *Round[blackjack.Game]) (money.Amount, error) {
	return baseStake(r.Bet.Amount, r.Game.Stakes())
}

// baseStake returns amount ÷ stakes (stakes in multiplier units), which
// must be exact.
func baseStake(amount money.Amount, stakes money.Multiplier) (money.Amount, error) {
	if stakes <= 0 {
		return 0, errBlackjackStake
	}
	q, rem := new(big.Int).QuoRem(new(big.Int).Mul(big.NewInt(int64(amount)), big.NewInt(money.MultiplierScale)),
		big.NewInt(int64(stakes)), new(big.Int))
	if rem.Sign() != 0 || !q.IsInt64() {
		return 0, errBlackjackStake
	}
	return money.Amount(q.Int64()), nil
}

// applyBlackjack runs one action and records it in the params ("h", "s",
// "d", "p" split, "i" insurance or even money taken, "n" declined), which is
// what lets games.Replay reproduce the game.
func applyBlackjack(r *Round[blackjack.Game], code byte, action func(*blackjack.Game) error) error {
	if err := action(r.Game); err != nil {
		if errors.Is(err, blackjack.ErrGameOver) {
			return errBlackjackActionOver // the row said active: the stored game is inconsistent
		}
		return gameError(err, blackjackUserErrors...)
	}
	r.Params.Actions += string(code)
	return nil
}
