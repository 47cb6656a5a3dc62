package games

import (
	"github.com/fairplay/fairplay/internal/games/dice"
	"github.com/fairplay/fairplay/internal/games/keno"
	"github.com/fairplay/fairplay/internal/games/mines"
	"github.com/fairplay/fairplay/internal/games/plinko"
	"github.com/fairplay/fairplay/internal/games/pump"
	"github.com/fairplay/fairplay/internal/money"
)

// blackjackHighest is the most a Blackjack game returns on its total stake:
// a natural pays 3:2, 2.5x (a won double pays 2x on twice the stake, which
// HighestMultiplier's callers count as a stake of 2 bets).
const blackjackHighest = 25 * money.MultiplierScale / 10

// HighestMultiplier returns the largest multiplier any table of any game can
// pay on a stake: every dice target, plinko and keno table, every mines
// count with every tile revealed and every pump difficulty at its last step.
// A stake times it is the largest payout a bet can ever earn, which is what
// the bet limits are chosen against (play.Limits).
func HighestMultiplier() money.Multiplier {
	best := dice.MinTarget.Multiplier() // the smallest target pays the most
	take := func(t []money.Multiplier, err error) {
		if err != nil {
			panic("games: a table of the game's own bounds: " + err.Error())
		}
		for _, m := range t {
			best = max(best, m)
		}
	}
	for _, r := range plinko.Risks {
		for rows := plinko.MinRows; rows <= plinko.MaxRows; rows++ {
			take(plinko.Table(r, rows))
		}
	}
	for _, r := range keno.Risks {
		for picks := 1; picks <= keno.MaxPicks; picks++ {
			take(keno.Table(r, picks))
		}
	}
	for m := mines.MinMines; m <= mines.MaxMines; m++ {
		take(mines.Table(m))
	}
	for _, d := range pump.Difficulties {
		take(pump.Table(d))
	}
	return max(best, blackjackHighest)
}
