package play

import (
	"context"

	"github.com/fairplay/fairplay/internal/accounts"
	"github.com/fairplay/fairplay/internal/games"
	"github.com/fairplay/fairplay/internal/games/event"
	"github.com/fairplay/fairplay/internal/games/mines"
	"github.com/fairplay/fairplay/internal/money"
	"github.com/fairplay/fairplay/internal/problem"
)

var minesKind = kind[mines.Game]{
	game:   Mines,
	over:   func(g *mines.Game) bool { return g.Status != mines.Active },
	payout: (*mines.Game).Payout,
	moves:  func(p games.Params) int { return len(p.Reveals) },
	// 25 tiles, mines and revealed, of up to two digits: under 200 bytes.
	stateSize: 256,
}

// ErrMineCount is a mine count off the 1 … 24 range.
var ErrMineCount = problem.Invalid(mines.ErrInvalidMines.Error())

// MinesRound is a Mines game after an action, with the figures the player
// sees.
type MinesRound struct {
	*Round[mines.Game]
	// HitMine is set when this action revealed a mine.
	HitMine bool
	// Multiplier is what the gems found pay: the cash-out value while the
	// game runs, what it paid once won, 0 once lost.
	Multiplier money.Multiplier
	// PotentialWin is the stake times Multiplier.
	PotentialWin money.Amount
	// NextMultiplier is what one more gem would pay (0 when over or none is left).
	NextMultiplier money.Multiplier
}

// MinePositions returns the mines as "row,col" once the game is over, and
// nothing while it runs.
func (r *MinesRound) MinePositions() []string {
	if !r.Over() {
		return []string{}
	}
	out := make([]string, len(r.Game.MineTiles))
	for i, t := range r.Game.MineTiles {
		out[i] = mines.Position(t)
	}
	return out
}

// Revealed returns the gems found, in order, as "row,col".
func (r *MinesRound) Revealed() []string {
	out := make([]string, len(r.Game.Revealed))
	for i, t := range r.Game.Revealed {
		out[i] = mines.Position(t)
	}
	return out
}

func newMinesRound(r *Round[mines.Game], hit bool) *MinesRound {
	g := r.Game
	out := &MinesRound{Round: r, HitMine: hit}
	if g.Status != mines.Lost {
		out.Multiplier = g.Multiplier()
		if len(g.Revealed) > 0 {
			out.PotentialWin = money.MulFloorCapped(r.Bet.Amount, out.Multiplier, r.maxPayout)
		}
	}
	if g.Status == mines.Active {
		out.NextMultiplier, _ = mines.Multiplier(g.Mines, len(g.Revealed)+1)
	}
	return out
}

// StartMines validates the stake, then the mine count, and starts a game
// with the mines placed from the caller's seed pair.
func (s *Service) StartMines(ctx context.Context, p accounts.Principal, betAmount string, mineCount int) (*MinesRound, error) {
	stake, err := s.parseStake(betAmount)
	if err != nil {
		return nil, err
	}
	if mineCount < mines.MinMines || mineCount > mines.MaxMines {
		return nil, ErrMineCount
	}
	r, err := startGame(ctx, s, p, minesKind, stake, games.Params{Mines: mineCount},
		func(src event.Source) (*mines.Game, error) { return mines.New(src, mineCount) })
	if err != nil {
		return nil, err
	}
	return newMinesRound(r, false), nil
}

// RevealMinesTile reveals the tile at row, col (0 … 4 each) of the caller's
// running game. Revealing the last gem cashes out. seen, when set, is the
// number of tiles the caller saw revealed (else ErrGameMovedOn).
func (s *Service) RevealMinesTile(ctx context.Context, p accounts.Principal, gameID string, row, col int,
	seen *int) (*MinesRound, error) {
	tile, err := mines.Tile(row, col)
	if err != nil {
		return nil, problem.Invalid(mines.ErrInvalidTile.Error())
	}
	var hit bool
	r, err := act(ctx, s, p, minesKind, gameID, seen, false, revealTile(tile, &hit))
	if err != nil {
		return nil, err
	}
	return newMinesRound(r, hit), nil
}

// revealTile is the action revealing tile (0 … 24), recorded in the params;
// hit says whether it was a mine.
func revealTile(tile int, hit *bool) func(r *Round[mines.Game]) error {
	return func(r *Round[mines.Game]) error {
		mine, err := r.Game.Reveal(tile)
		if err != nil {
			return gameError(err, mines.ErrAlreadyRevealed)
		}
		*hit = mine
		r.Params.Reveals = append(r.Params.Reveals, tile)
		return nil
	}
}

// cashOutMines is the action ending a game after at least one gem.
func cashOutMines(r *Round[mines.Game]) error {
	_, err := r.Game.CashOut()
	return gameError(err, mines.ErrNothingToCashOut)
}

// CashOutMines ends the caller's running game after at least one gem and
// pays the stake times the displayed multiplier.
func (s *Service) CashOutMines(ctx context.Context, p accounts.Principal, gameID string, seen *int) (*MinesRound, error) {
	r, err := act(ctx, s, p, minesKind, gameID, seen, false, cashOutMines)
	if err != nil {
		return nil, err
	}
	return newMinesRound(r, false), nil
}
