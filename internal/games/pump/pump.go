// Package pump is the rules of Pump: the player pumps a balloon and may cash out after any
// safe pump; the balloon bursts at a hidden pump number and the bet is lost.
//
// Of the 25 positions 1 … 25, the difficulty's number of pops M (easy 1, medium 3, hard 5,
// expert 10) are drawn with Stake's selection without replacement (games.md §1, §5): the
// i-th float (from 0) times 25 − i, floored, indexes the positions not yet drawn. The
// balloon bursts on pump number min(pops), so the player gets min(pops) − 1 safe pumps, at
// most 25 − M. Stake's docs speak of 24 game events; only the first M decide the game, so
// this package reads exactly M floats, which gives the same game.
//
// The multiplier after k safe pumps is Stake's table, verbatim: 0.98 × C(25, k)/C(25 − M, k)
// shown to 2 decimals (2% house edge). Its few exact ties are not rounded one consistent way
// (1.225 → 1.23 but 929.775 → 929.77), so the table is transcribed, not computed; a test
// checks each entry against the formula. Cashing out after k pumps returns 97.68–98.44%,
// exactly 98% at the last pump.
package pump

import (
	"errors"
	"fmt"
	"slices"

	"github.com/fairplay/fairplay/internal/games/event"
	"github.com/fairplay/fairplay/internal/money"
)

// Positions is the number of pump positions the pops are drawn from.
const Positions = 25

// Difficulty sets the number of pops.
type Difficulty string

// The difficulties, as the API spells them.
const (
	Easy   Difficulty = "easy"
	Medium Difficulty = "medium"
	Hard   Difficulty = "hard"
	Expert Difficulty = "expert"
)

// Difficulties lists the difficulties in the order the product shows them.
var Difficulties = []Difficulty{Easy, Medium, Hard, Expert}

// pops is the number of pop positions per difficulty.
var pops = map[Difficulty]int{Easy: 1, Medium: 3, Hard: 5, Expert: 10}

// Errors of the rules. Texts are worded for users, since a handler may show them as is.
var (
	ErrInvalidDifficulty = errors.New("Invalid difficulty")
	ErrGameOver          = errors.New("Game is already over")
	ErrNothingToCashOut  = errors.New("Pump at least once before cashing out")
	ErrInvalidPumps      = errors.New("Safe pumps out of range for difficulty")
	ErrInvalidState      = errors.New("Stored pump game is inconsistent")
)

// ParseDifficulty validates a difficulty as sent by the client.
func ParseDifficulty(s string) (Difficulty, error) {
	d := Difficulty(s)
	if _, ok := pops[d]; !ok {
		return "", fmt.Errorf("pump difficulty %q: %w", s, ErrInvalidDifficulty)
	}
	return d, nil
}

// Pops returns the number of pop positions of the difficulty, or 0 for an unknown one.
func (d Difficulty) Pops() int { return pops[d] }

// MaxSafePumps returns the most safe pumps a game of the difficulty can have: 25 − pops,
// or 0 for an unknown difficulty.
func (d Difficulty) MaxSafePumps() int {
	m, ok := pops[d]
	if !ok {
		return 0
	}
	return Positions - m
}

// Table returns a copy of the multipliers for 0 … MaxSafePumps safe pumps.
func Table(d Difficulty) ([]money.Multiplier, error) {
	t, ok := tables[d]
	if !ok {
		return nil, fmt.Errorf("pump difficulty %q: %w", d, ErrInvalidDifficulty)
	}
	return slices.Clone(t), nil
}

// Multiplier returns the multiplier after safe safe pumps.
func Multiplier(d Difficulty, safe int) (money.Multiplier, error) {
	t, ok := tables[d]
	if !ok {
		return 0, fmt.Errorf("pump difficulty %q: %w", d, ErrInvalidDifficulty)
	}
	if safe < 0 || safe >= len(t) {
		return 0, fmt.Errorf("pump: %d safe pumps on %s: %w", safe, d, ErrInvalidPumps)
	}
	return t[safe], nil
}

// Place validates the difficulty and reads one float per pop from src: the pop positions
// (1 … 25) in draw order.
func Place(src event.Source, d Difficulty) ([]int, error) {
	m, ok := pops[d]
	if !ok {
		return nil, fmt.Errorf("pump difficulty %q: %w", d, ErrInvalidDifficulty)
	}
	positions := event.Sample(src, Positions, m)
	for i := range positions {
		positions[i]++ // outcome indexes 0 … 24 are the positions 1 … 25
	}
	return positions, nil
}

// Status is the state of a game.
type Status string

// Game states.
const (
	Active Status = "active" // pumping
	Burst  Status = "burst"  // the balloon burst: the bet is lost
	Won    Status = "won"    // cashed out, or every safe pump made
)

// Game is a Pump game between actions. Its exported fields serialise to JSON so a server
// can keep it in a database row; Pops is secret while the game is active.
type Game struct {
	Difficulty Difficulty `json:"difficulty"`
	Pops       []int      `json:"pops"`  // pop positions in draw order
	Pumps      int        `json:"pumps"` // safe pumps made so far
	Status     Status     `json:"status"`
}

// New draws the pops from src and starts a game.
func New(src event.Source, d Difficulty) (*Game, error) {
	p, err := Place(src, d)
	if err != nil {
		return nil, err
	}
	return &Game{Difficulty: d, Pops: p, Status: Active}, nil
}

// BurstAt returns the pump number on which the balloon bursts: the smallest pop position
// (0 for a game without pops, which only a corrupt stored game can be).
func (g *Game) BurstAt() int {
	if len(g.Pops) == 0 {
		return 0
	}
	return slices.Min(g.Pops)
}

// valid reports whether a game, typically one just read back from storage, is consistent:
// a known difficulty with its number of distinct pops in 1 … 25, fewer safe pumps than the
// burst, and a known status.
func (g *Game) valid() bool {
	m, ok := pops[g.Difficulty]
	if !ok || len(g.Pops) != m {
		return false
	}
	var seen [Positions + 1]bool
	for _, p := range g.Pops {
		if p < 1 || p > Positions || seen[p] {
			return false
		}
		seen[p] = true
	}
	if g.Pumps < 0 || g.Pumps >= g.BurstAt() {
		return false
	}
	return g.Status == Active || g.Status == Burst || g.Status == Won
}

// Pump pumps an active balloon once. If this is pump number BurstAt the balloon bursts
// and the game is lost; if it was the last possible safe pump the game ends as Won (an
// automatic cash-out, since the next pump would surely burst).
func (g *Game) Pump() (burst bool, err error) {
	switch {
	case !g.valid():
		return false, ErrInvalidState
	case g.Status != Active:
		return false, ErrGameOver
	}
	if g.Pumps+1 == g.BurstAt() {
		g.Status = Burst
		return true, nil
	}
	g.Pumps++
	if g.Pumps == g.Difficulty.MaxSafePumps() {
		g.Status = Won
	}
	return false, nil
}

// CashOut ends an active game with at least one safe pump as Won and returns the
// multiplier it pays.
func (g *Game) CashOut() (money.Multiplier, error) {
	switch {
	case !g.valid():
		return 0, ErrInvalidState
	case g.Status != Active:
		return 0, ErrGameOver
	case g.Pumps == 0:
		return 0, ErrNothingToCashOut
	}
	g.Status = Won
	return g.Multiplier(), nil
}

// Multiplier returns the multiplier for the safe pumps so far: what a cash-out pays now, or
// what a won game paid.
func (g *Game) Multiplier() money.Multiplier {
	m, err := Multiplier(g.Difficulty, g.Pumps)
	if err != nil {
		return 0 // only for a corrupt stored game; a lost bet is the safe reading
	}
	return m
}

// Payout returns the total return on the stake of a finished game: the multiplier of a
// won game, 0 for a burst one, and 0 while the game is still active.
func (g *Game) Payout() money.Multiplier {
	if g.Status != Won {
		return 0
	}
	return g.Multiplier()
}

// x turns the table literals into money.Multiplier units. The products are untyped
// constants, evaluated exactly at compile time: 3203384.8 * x is 32033848000.
const x = money.MultiplierScale

// tables[difficulty][safe pumps], transcribed from reference/games.json (games.md §5); a
// test compares every entry with testdata/games.json.
var tables = map[Difficulty][]money.Multiplier{
	Easy: {
		1 * x, 1.02 * x, 1.07 * x, 1.11 * x, 1.17 * x, 1.23 * x, 1.29 * x, 1.36 * x,
		1.44 * x, 1.53 * x, 1.63 * x, 1.75 * x, 1.88 * x, 2.04 * x, 2.23 * x, 2.45 * x,
		2.72 * x, 3.06 * x, 3.5 * x, 4.08 * x, 4.9 * x, 6.13 * x, 8.17 * x, 12.25 * x,
		24.5 * x,
	},
	Medium: {
		1 * x, 1.11 * x, 1.27 * x, 1.46 * x, 1.69 * x, 1.98 * x, 2.33 * x, 2.76 * x,
		3.31 * x, 4.03 * x, 4.95 * x, 6.19 * x, 7.88 * x, 10.25 * x, 13.66 * x, 18.78 * x,
		26.83 * x, 40.25 * x, 64.4 * x, 112.7 * x, 225.4 * x, 563.5 * x, 2254 * x,
	},
	Hard: {
		1 * x, 1.23 * x, 1.55 * x, 1.98 * x, 2.56 * x, 3.36 * x, 4.48 * x, 6.08 * x,
		8.41 * x, 11.92 * x, 17.34 * x, 26.01 * x, 40.46 * x, 65.74 * x, 112.7 * x, 206.62 * x,
		413.23 * x, 929.77 * x, 2479.4 * x, 8677.9 * x, 52067.4 * x,
	},
	Expert: {
		1 * x, 1.63 * x, 2.8 * x, 4.95 * x, 9.08 * x, 17.34 * x, 34.68 * x, 73.21 * x,
		164.72 * x, 400.02 * x, 1066.73 * x, 3200.18 * x, 11200.65 * x, 48536.13 * x, 291216.8 * x, 3203384.8 * x,
	},
}
