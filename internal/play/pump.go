package play

import (
	"context"

	"github.com/fairplay/fairplay/internal/accounts"
	"github.com/fairplay/fairplay/internal/games"
	"github.com/fairplay/fairplay/internal/games/event"
	"github.com/fairplay/fairplay/internal/games/pump"
	"github.com/fairplay/fairplay/internal/money"
	"github.com/fairplay/fairplay/internal/problem"
)

var pumpKind = kind[pump.Game]{
	game:   Pump,
	over:   func(g *pump.Game) bool { return g.Status != pump.Active },
	payout: (*pump.Game).Payout,
	moves:  func(p games.Params) int { return p.Pumps },
	// Ten pops at most, of up to two digits: under 100 bytes.
	stateSize: 128,
}

// ErrDifficulty is an unknown Pump difficulty.
var ErrDifficulty = problem.Invalid("Difficulty must be easy, medium, hard or expert")

// PumpRound is a Pump game after an action, with the figures the player sees.
type PumpRound struct {
	*Round[pump.Game]
	// Burst is set when this pump burst the balloon.
	Burst bool
	// Multiplier is what the safe pumps pay: the cash-out value while the
	// game runs, what it paid once won, 0 once burst.
	Multiplier money.Multiplier
	// PotentialWin is the stake times Multiplier.
	PotentialWin money.Amount
	// NextMultiplier is what one more safe pump would pay (0 when over).
	NextMultiplier money.Multiplier
}

// Pops returns the hidden pop positions once the game is over, and nothing
// while it runs.
func (r *PumpRound) Pops() []int {
	if !r.Over() {
		return []int{}
	}
	return r.Game.Pops
}

func newPumpRound(r *Round[pump.Game], burst bool) *PumpRound {
	g := r.Game
	out := &PumpRound{Round: r, Burst: burst}
	if g.Status != pump.Burst {
		out.Multiplier = g.Multiplier()
		if g.Pumps > 0 {
			out.PotentialWin = money.MulFloorCapped(r.Bet.Amount, out.Multiplier, r.maxPayout)
		}
	}
	if g.Status == pump.Active {
		out.NextMultiplier, _ = pump.Multiplier(g.Difficulty, g.Pumps+1)
	}
	return out
}

// StartPump validates the stake, then the difficulty, and starts a game with
// the pops drawn from the caller's seed pair.
func (s *Service) StartPump(ctx context.Context, p accounts.Principal, betAmount, difficulty string) (*PumpRound, error) {
	stake, err := s.parseStake(betAmount)
	if err != nil {
		return nil, err
	}
	d, err := pump.ParseDifficulty(difficulty)
	if err != nil {
		return nil, ErrDifficulty
	}
	r, err := startGame(ctx, s, p, pumpKind, stake, games.Params{Difficulty: string(d)},
		func(src event.Source) (*pump.Game, error) { return pump.New(src, d) })
	if err != nil {
		return nil, err
	}
	return newPumpRound(r, false), nil
}

// PumpBalloon pumps the caller's running balloon once. The last possible
// safe pump cashes out. seen, when set, is the number of safe pumps the
// caller saw (else ErrGameMovedOn), as in every action of the stateful
// games.
func (s *Service) PumpBalloon(ctx context.Context, p accounts.Principal, gameID string, seen *int) (*PumpRound, error) {
	var burst bool
	r, err := act(ctx, s, p, pumpKind, gameID, seen, false, pumpOnce(&burst))
	if err != nil {
		return nil, err
	}
	return newPumpRound(r, burst), nil
}

// pumpOnce is the action pumping once, recorded in the params; burst says
// whether the balloon burst.
func pumpOnce(burst *bool) func(r *Round[pump.Game]) error {
	return func(r *Round[pump.Game]) error {
		b, err := r.Game.Pump()
		if err != nil {
			return gameError(err)
		}
		*burst = b
		r.Params.Pumps++
		return nil
	}
}

// cashOutPump is the action ending a game after at least one safe pump.
func cashOutPump(r *Round[pump.Game]) error {
	_, err := r.Game.CashOut()
	return gameError(err, pump.ErrNothingToCashOut)
}

// CashOutPump ends the caller's running game after at least one safe pump
// and pays the stake times the multiplier reached.
func (s *Service) CashOutPump(ctx context.Context, p accounts.Principal, gameID string, seen *int) (*PumpRound, error) {
	r, err := act(ctx, s, p, pumpKind, gameID, seen, false, cashOutPump)
	if err != nil {
		return nil, err
	}
	return newPumpRound(r, false), nil
}
