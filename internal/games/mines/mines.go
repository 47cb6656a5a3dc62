// Package mines is the rules of Mines: a 5×5 board hides 1 to 24 mines; the player reveals
// tiles one at a time and may cash out after any safe reveal, while a mine loses the bet.
//
// Tiles are numbered 0 … 24 left to right, top to bottom (tile = 5·row + col). The mines
// are the first m draws of Stake's selection without replacement (games.md §1, §3): the
// i-th float (from 0) times 25 − i, floored, indexes the tiles not yet drawn. Stake
// generates 24 such events; only the first m decide the board, so this package reads
// exactly m floats, which gives the same board.
//
// The multiplier after d safe reveals with m mines is
//
//	M(m, d) = 0.99 × C(25, d) / C(25 − m, d)
//
// (1% house edge; P(surviving d reveals) = C(25 − m, d)/C(25, d), so every cash-out has an
// RTP of exactly 99% before display rounding). It is computed exactly with integers and
// rounded to 2 decimals by one fixed rule: to nearest, ties DOWN. That rule reproduces every
// entry of the mirrored Stake tables, including all 8 exact ties (1.125 → 1.12,
// 12.375 → 12.37, 18.975 → 18.97, …), where half-up rounding would differ. The payout is
// the stake times exactly the displayed multiplier, rounded down to the unit.
// Before the first reveal the display shows 1x, but there is nothing to cash out.
package mines

import (
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strconv"

	"github.com/fairplay/fairplay/internal/games/event"
	"github.com/fairplay/fairplay/internal/money"
)

// Board constants.
const (
	Size     = 5           // tiles per row and per column
	Tiles    = Size * Size // 25
	MinMines = 1
	MaxMines = Tiles - 1 // 24
)

// Errors of the rules. Texts are worded for users, since a handler may show them as is.
var (
	ErrInvalidMines     = errors.New("Mine count must be between 1 and 24")
	ErrInvalidTile      = errors.New("Tile must be on the 5x5 board")
	ErrAlreadyRevealed  = errors.New("Tile is already revealed")
	ErrGameOver         = errors.New("Game is already over")
	ErrNothingToCashOut = errors.New("Reveal at least one tile before cashing out")
	ErrInvalidReveals   = errors.New("Safe reveals out of range for the mine count")
	ErrInvalidState     = errors.New("Stored mines game is inconsistent")
)

// Tile returns the tile number of a row and column (0 … 4 each).
func Tile(row, col int) (int, error) {
	if row < 0 || row >= Size || col < 0 || col >= Size {
		return 0, fmt.Errorf("mines tile (%d, %d): %w", row, col, ErrInvalidTile)
	}
	return row*Size + col, nil
}

// Position returns a tile as the API's "row,col" text: tile 18 is "3,3".
func Position(tile int) string {
	return strconv.Itoa(tile/Size) + "," + strconv.Itoa(tile%Size)
}

// Place validates the mine count and reads m floats from src: the mine tiles, in draw order.
func Place(src event.Source, mines int) ([]int, error) {
	if mines < MinMines || mines > MaxMines {
		return nil, fmt.Errorf("mines count %d: %w", mines, ErrInvalidMines)
	}
	return event.Sample(src, Tiles, mines), nil
}

// Multiplier returns the displayed multiplier after gems safe reveals with the given
// number of mines: 0.99 × C(25, gems)/C(25 − mines, gems) to 2 decimals, ties down; 1x
// for 0 reveals.
func Multiplier(mines, gems int) (money.Multiplier, error) {
	if mines < MinMines || mines > MaxMines {
		return 0, fmt.Errorf("mines count %d: %w", mines, ErrInvalidMines)
	}
	if gems < 0 || gems > Tiles-mines {
		return 0, fmt.Errorf("mines: %d safe reveals with %d mines: %w", gems, mines, ErrInvalidReveals)
	}
	if gems == 0 {
		return money.One, nil
	}
	// In hundredths the value is 99·C(25, d) / C(25 − m, d); C(25, 12) = 5,200,300 keeps
	// everything far inside int64.
	num := 99 * binomial(Tiles, gems)
	den := binomial(Tiles-mines, gems)
	q, r := num/den, num%den
	if 2*r > den { // nearest, ties down
		q++
	}
	return money.Multiplier(q * (money.MultiplierScale / 100)), nil
}

// ExactMultiplier returns M(mines, gems) = 0.99 × C(25, gems)/C(25 − mines, gems) exactly,
// before display rounding, for verification and RTP figures.
func ExactMultiplier(mines, gems int) *big.Rat {
	return big.NewRat(99*binomial(Tiles, gems), 100*binomial(Tiles-mines, gems))
}

// Table returns the displayed multipliers for 0 … 25 − mines safe reveals.
func Table(mines int) ([]money.Multiplier, error) {
	if mines < MinMines || mines > MaxMines {
		return nil, fmt.Errorf("mines count %d: %w", mines, ErrInvalidMines)
	}
	t := make([]money.Multiplier, Tiles-mines+1)
	for d := range t {
		t[d], _ = Multiplier(mines, d)
	}
	return t, nil
}

// binomial returns C(n, k) for the board's small n.
func binomial(n, k int) int64 {
	c := int64(1)
	for i := 1; i <= k; i++ {
		c = c * int64(n-k+i) / int64(i) // exact: c·(n−k+i) is C(n−k+i, i)·i
	}
	return c
}

// Status is the state of a game.
type Status string

// Game states.
const (
	Active Status = "active" // revealing tiles
	Lost   Status = "lost"   // a mine was revealed
	Won    Status = "won"    // cashed out, or every safe tile revealed
)

// Game is a Mines game between actions. Its exported fields serialise to JSON so a server
// can keep it in a database row; MineTiles is secret while the game is active.
type Game struct {
	Mines     int    `json:"mines"`
	MineTiles []int  `json:"mineTiles"` // in draw order
	Revealed  []int  `json:"revealed"`  // safe tiles, in reveal order
	Status    Status `json:"status"`
	// HitTile is the mine that ended a lost game, or -1.
	HitTile int `json:"hitTile"`
}

// New places the mines from src and starts a game.
func New(src event.Source, mines int) (*Game, error) {
	tiles, err := Place(src, mines)
	if err != nil {
		return nil, err
	}
	return &Game{Mines: mines, MineTiles: tiles, Revealed: []int{}, Status: Active, HitTile: -1}, nil
}

// Reveal uncovers a tile of an active game. A mine ends the game as Lost; revealing the
// last safe tile ends it as Won (an automatic cash-out, since nothing is left to risk).
func (g *Game) Reveal(tile int) (mine bool, err error) {
	switch {
	case !g.valid():
		return false, ErrInvalidState
	case g.Status != Active:
		return false, ErrGameOver
	case tile < 0 || tile >= Tiles:
		return false, fmt.Errorf("mines tile %d: %w", tile, ErrInvalidTile)
	case slices.Contains(g.Revealed, tile):
		return false, fmt.Errorf("mines tile %d: %w", tile, ErrAlreadyRevealed)
	}
	if slices.Contains(g.MineTiles, tile) {
		g.Status, g.HitTile = Lost, tile
		return true, nil
	}
	g.Revealed = append(g.Revealed, tile)
	if len(g.Revealed) == Tiles-g.Mines {
		g.Status = Won
	}
	return false, nil
}

// CashOut ends an active game with at least one safe reveal as Won and returns the
// multiplier it pays.
func (g *Game) CashOut() (money.Multiplier, error) {
	switch {
	case !g.valid():
		return 0, ErrInvalidState
	case g.Status != Active:
		return 0, ErrGameOver
	case len(g.Revealed) == 0:
		return 0, ErrNothingToCashOut
	}
	g.Status = Won
	return g.Multiplier(), nil
}

// valid reports whether a game, typically one just read back from storage, is consistent:
// a legal mine count, that many distinct mines on the board, distinct safe reveals off
// the mines, and a known status.
func (g *Game) valid() bool {
	if g.Mines < MinMines || g.Mines > MaxMines || len(g.MineTiles) != g.Mines || len(g.Revealed) > Tiles-g.Mines {
		return false
	}
	var mine, seen [Tiles]bool
	for _, t := range g.MineTiles {
		if t < 0 || t >= Tiles || mine[t] {
			return false
		}
		mine[t] = true
	}
	for _, t := range g.Revealed {
		if t < 0 || t >= Tiles || mine[t] || seen[t] {
			return false
		}
		seen[t] = true
	}
	return g.Status == Active || g.Status == Lost || g.Status == Won
}

// Multiplier returns the displayed multiplier for the safe tiles revealed so far: what a
// cash-out pays now, or what a won game paid.
func (g *Game) Multiplier() money.Multiplier {
	m, err := Multiplier(g.Mines, len(g.Revealed))
	if err != nil {
		return 0 // only for a corrupt stored game; a lost bet is the safe reading
	}
	return m
}

// Payout returns the total return on the stake of a finished game: the multiplier of a
// won game, 0 for a lost one, and 0 while the game is still active.
func (g *Game) Payout() money.Multiplier {
	if g.Status != Won {
		return 0
	}
	return g.Multiplier()
}
