package mines_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/fairplay/fairplay/internal/fair"
	"github.com/fairplay/fairplay/internal/games/event"
	"github.com/fairplay/fairplay/internal/games/gamestest"
	"github.com/fairplay/fairplay/internal/games/mines"
	"github.com/fairplay/fairplay/internal/money"
)

func TestVectors(t *testing.T) {
	t.Parallel()
	ref := gamestest.Load(t)
	if len(ref.Fairness.TestVectors.Mines) == 0 {
		t.Fatal("no mines vectors in games.json")
	}
	for _, v := range ref.Fairness.TestVectors.Mines {
		got, err := mines.Place(fair.NewStream(v.ServerSeed, v.ClientSeed, v.Nonce), v.Mines)
		if err != nil || !slices.Equal(got, v.Tiles) {
			t.Errorf("Place(%q, %q, %d, %d mines) = %v, %v; want %v", v.ServerSeed, v.ClientSeed, v.Nonce, v.Mines, got, err, v.Tiles)
		}
	}
}

// TestDisplayTablesMatchMirrors checks the 2-decimal rule (nearest, ties down) against the
// 1-, 2- and 3-mine rows mirrored from Stake in games.json, entry by entry.
func TestDisplayTablesMatchMirrors(t *testing.T) {
	t.Parallel()
	ref := gamestest.Load(t)
	for mineCount, key := range map[int]string{1: "1_mine", 2: "2_mines", 3: "3_mines"} {
		want := gamestest.Multipliers(t, ref.Uncertain.MinesDisplayRounding.Tables[key])
		got, err := mines.Table(mineCount)
		if err != nil {
			t.Fatal(err)
		}
		if got[0] != money.One || !slices.Equal(got[1:], want) {
			t.Errorf("%d mines: %v, mirrors %v", mineCount, got[1:], want)
		}
	}
}

// TestTiesRoundDown finds every exact 2-decimal tie on the whole board and checks each is
// rounded down, while every other value is rounded to nearest.
func TestTiesRoundDown(t *testing.T) {
	t.Parallel()
	ties := 0
	for m := mines.MinMines; m <= mines.MaxMines; m++ {
		for d := 1; d <= mines.Tiles-m; d++ {
			exact := new(big.Rat).Mul(mines.ExactMultiplier(m, d), big.NewRat(100, 1)) // hundredths
			got, err := mines.Multiplier(m, d)
			if err != nil {
				t.Fatal(err)
			}
			floor := new(big.Int).Quo(exact.Num(), exact.Denom())
			frac := new(big.Rat).Sub(exact, new(big.Rat).SetInt(floor))
			want := floor.Int64()
			switch frac.Cmp(big.NewRat(1, 2)) {
			case 0:
				ties++ // down: keep floor
			case 1:
				want++
			}
			if int64(got) != want*100 {
				t.Errorf("M(%d, %d) = %s, exact %s", m, d, got, exact.FloatString(6))
			}
		}
	}
	t.Logf("%d exact ties on the board, all rounded down", ties)
	if ties < 8 {
		t.Fatalf("found %d ties, the mirrored tables alone show 8", ties)
	}
}

func TestExactExamples(t *testing.T) {
	t.Parallel()
	ref := gamestest.Load(t)
	if len(ref.Mines.ComputedExamplesExact) == 0 || ref.Mines.Tiles != mines.Tiles ||
		ref.Mines.MinesMin != mines.MinMines || ref.Mines.MinesMax != mines.MaxMines {
		t.Fatalf("games.json mines section: %+v", ref.Mines)
	}
	for key, want := range ref.Mines.ComputedExamplesExact {
		var m, d int
		if _, err := fmt.Sscanf(strings.ReplaceAll(key, "_", " "), "%d mines %d reveals", &m, &d); err != nil {
			t.Fatalf("key %q: %v", key, err)
		}
		w, _ := new(big.Rat).SetString(want.String())
		got := mines.ExactMultiplier(m, d)
		if diff := new(big.Rat).Sub(got, w); diff.Abs(diff).Cmp(big.NewRat(5, 10_000_000)) > 0 {
			t.Errorf("M(%d, %d) = %s, games.json %s", m, d, got.FloatString(8), want)
		}
	}
}

// TestRTP checks that every cash-out point returns exactly 99% before rounding, and bounds
// what the 2-decimal display does to it.
func TestRTP(t *testing.T) {
	t.Parallel()
	lo, hi := big.NewRat(2, 1), new(big.Rat)
	for m := mines.MinMines; m <= mines.MaxMines; m++ {
		for d := 1; d <= mines.Tiles-m; d++ {
			survival := big.NewRat(binomial(mines.Tiles-m, d), binomial(mines.Tiles, d))
			if exact := new(big.Rat).Mul(mines.ExactMultiplier(m, d), survival); exact.Cmp(big.NewRat(99, 100)) != 0 {
				t.Fatalf("exact RTP of (%d, %d) = %s, want 0.99", m, d, exact)
			}
			shown, _ := mines.Multiplier(m, d)
			rtp := new(big.Rat).Mul(big.NewRat(int64(shown), money.MultiplierScale), survival)
			if rtp.Cmp(lo) < 0 {
				lo = rtp
			}
			if rtp.Cmp(hi) > 0 {
				hi = rtp
			}
		}
	}
	t.Logf("RTP of the displayed multipliers: %s%% … %s%%", new(big.Rat).Mul(lo, big.NewRat(100, 1)).FloatString(4), new(big.Rat).Mul(hi, big.NewRat(100, 1)).FloatString(4))
	// Rounding moves a multiplier by at most 0.005, and the smallest is 1.03: ±0.49%.
	if lo.Cmp(big.NewRat(985, 1000)) < 0 || hi.Cmp(big.NewRat(995, 1000)) > 0 {
		t.Fatalf("displayed RTP range %s … %s outside 98.5–99.5%%", lo.FloatString(5), hi.FloatString(5))
	}
}

func binomial(n, k int) int64 { return new(big.Int).Binomial(int64(n), int64(k)).Int64() }

func TestMultiplierArguments(t *testing.T) {
	t.Parallel()
	tests := []struct {
		mines, gems int
		want        string
		err         error
	}{
		{1, 0, "1", nil},
		{3, 1, "1.12", nil}, // 1.125, tie down
		{3, 2, "1.29", nil},
		{1, 24, "24.75", nil},
		{24, 1, "24.75", nil},
		{10, 5, "17.52", nil},
		{3, 22, "2277", nil},
		{0, 1, "", mines.ErrInvalidMines},
		{25, 1, "", mines.ErrInvalidMines},
		{3, 23, "", mines.ErrInvalidReveals},
		{3, -1, "", mines.ErrInvalidReveals},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d/%d", tt.mines, tt.gems), func(t *testing.T) {
			t.Parallel()
			got, err := mines.Multiplier(tt.mines, tt.gems)
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("error = %v, want %v", err, tt.err)
				}
				return
			}
			if err != nil || got.String() != tt.want {
				t.Fatalf("Multiplier = %s, %v; want %s", got, err, tt.want)
			}
		})
	}
	for _, m := range []int{0, 25} {
		if _, err := mines.Table(m); !errors.Is(err, mines.ErrInvalidMines) {
			t.Errorf("Table(%d) error = %v", m, err)
		}
		if _, err := mines.New(&event.Floats{}, m); !errors.Is(err, mines.ErrInvalidMines) {
			t.Errorf("New(%d) error = %v", m, err)
		}
	}
}

func TestTilePosition(t *testing.T) {
	t.Parallel()
	tests := []struct {
		row, col, tile int
		pos            string
	}{
		{0, 0, 0, "0,0"}, {0, 4, 4, "0,4"}, {1, 0, 5, "1,0"}, {3, 3, 18, "3,3"}, {4, 4, 24, "4,4"},
	}
	for _, tt := range tests {
		if got, err := mines.Tile(tt.row, tt.col); err != nil || got != tt.tile {
			t.Errorf("Tile(%d, %d) = %d, %v; want %d", tt.row, tt.col, got, err, tt.tile)
		}
		if got := mines.Position(tt.tile); got != tt.pos {
			t.Errorf("Position(%d) = %q, want %q", tt.tile, got, tt.pos)
		}
	}
	for _, rc := range [][2]int{{-1, 0}, {0, 5}, {5, 0}} {
		if _, err := mines.Tile(rc[0], rc[1]); !errors.Is(err, mines.ErrInvalidTile) {
			t.Errorf("Tile(%v) error = %v", rc, err)
		}
	}
}

// newGame starts a game whose mines are the given tiles' draws: with zero floats the
// first m tiles 0 … m−1 are mines.
func newGame(t *testing.T, m int) *mines.Game {
	t.Helper()
	src := event.Floats(make([]float64, m))
	g, err := mines.New(&src, m)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestGame(t *testing.T) {
	t.Parallel()
	type step struct {
		op   string // "reveal N" or "cashout"
		mine bool
		err  error
	}
	tests := []struct {
		name   string
		mines  int
		steps  []step
		status mines.Status
		payout string
	}{
		{name: "mine first", mines: 3, steps: []step{{op: "reveal 1", mine: true}}, status: mines.Lost, payout: "0"},
		{name: "two gems then cash out", mines: 3, steps: []step{{op: "reveal 10"}, {op: "reveal 24"}, {op: "cashout"}}, status: mines.Won, payout: "1.29"},
		{name: "gem then mine", mines: 3, steps: []step{{op: "reveal 10"}, {op: "reveal 2", mine: true}}, status: mines.Lost, payout: "0"},
		{name: "cash out before revealing", mines: 3, steps: []step{{op: "cashout", err: mines.ErrNothingToCashOut}}, status: mines.Active, payout: "0"},
		{name: "reveal twice", mines: 3, steps: []step{{op: "reveal 10"}, {op: "reveal 10", err: mines.ErrAlreadyRevealed}}, status: mines.Active, payout: "0"},
		{name: "off board", mines: 3, steps: []step{{op: "reveal 25", err: mines.ErrInvalidTile}, {op: "reveal -1", err: mines.ErrInvalidTile}}, status: mines.Active, payout: "0"},
		{name: "actions after loss", mines: 3, steps: []step{{op: "reveal 0", mine: true}, {op: "reveal 5", err: mines.ErrGameOver}, {op: "cashout", err: mines.ErrGameOver}}, status: mines.Lost, payout: "0"},
		{name: "actions after cash-out", mines: 1, steps: []step{{op: "reveal 5"}, {op: "cashout"}, {op: "cashout", err: mines.ErrGameOver}, {op: "reveal 6", err: mines.ErrGameOver}}, status: mines.Won, payout: "1.03"},
		{name: "last gem wins at once", mines: 24, steps: []step{{op: "reveal 24"}, {op: "cashout", err: mines.ErrGameOver}}, status: mines.Won, payout: "24.75"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			g := newGame(t, tt.mines)
			for i, s := range tt.steps {
				var mine bool
				var err error
				if s.op == "cashout" {
					_, err = g.CashOut()
				} else {
					var tile int
					fmt.Sscanf(s.op, "reveal %d", &tile)
					mine, err = g.Reveal(tile)
				}
				if !errors.Is(err, s.err) || (s.err == nil) != (err == nil) || mine != s.mine {
					t.Fatalf("step %d %q: mine %v, error %v; want mine %v, error %v", i, s.op, mine, err, s.mine, s.err)
				}
			}
			if g.Status != tt.status || g.Payout().String() != tt.payout {
				t.Fatalf("status %s payout %s, want %s %s", g.Status, g.Payout(), tt.status, tt.payout)
			}
		})
	}
}

func TestGameJSONRoundTrip(t *testing.T) {
	t.Parallel()
	g := newGame(t, 5)
	if _, err := g.Reveal(12); err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(g)
	if err != nil {
		t.Fatal(err)
	}
	var back mines.Game
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(*g, back) {
		t.Fatalf("round trip %s gave %+v", data, back)
	}
	if m, err := back.CashOut(); err != nil || m.String() != "1.24" { // 1.2375 → 1.24
		t.Fatalf("CashOut after reload = %s, %v", m, err)
	}
}

func TestCorruptGame(t *testing.T) {
	t.Parallel()
	tests := map[string]func(g *mines.Game){
		"mine count":         func(g *mines.Game) { g.Mines = 0 },
		"missing mine":       func(g *mines.Game) { g.MineTiles = g.MineTiles[:2] },
		"mine off board":     func(g *mines.Game) { g.MineTiles[0] = 25 },
		"repeated mine":      func(g *mines.Game) { g.MineTiles[1] = g.MineTiles[0] },
		"revealed a mine":    func(g *mines.Game) { g.Revealed = append(g.Revealed, g.MineTiles[0]) },
		"revealed twice":     func(g *mines.Game) { g.Revealed = append(g.Revealed, g.Revealed[0]) },
		"revealed off board": func(g *mines.Game) { g.Revealed = append(g.Revealed, -1) },
		"unknown status":     func(g *mines.Game) { g.Status = "paused" },
	}
	for name, corrupt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			g := newGame(t, 3) // mines on 0, 1, 2
			if _, err := g.Reveal(10); err != nil {
				t.Fatal(err)
			}
			corrupt(g)
			if _, err := g.Reveal(11); !errors.Is(err, mines.ErrInvalidState) {
				t.Errorf("Reveal error = %v, want ErrInvalidState", err)
			}
			if _, err := g.CashOut(); !errors.Is(err, mines.ErrInvalidState) {
				t.Errorf("CashOut error = %v, want ErrInvalidState", err)
			}
		})
	}
}

// TestSimulation plays Bets() games with 3 mines through the real fairness stream,
// revealing tiles 0 … 4 and cashing out at M(3, 5) = 2.00x (exactly 1.9974).
func TestSimulation(t *testing.T) {
	t.Parallel()
	const m, reveals = 3, 5
	mult, _ := mines.Multiplier(m, reveals)
	p := float64(binomial(mines.Tiles-m, reveals)) / float64(binomial(mines.Tiles, reveals))
	want, sd := p*mult.Float64(), mult.Float64()*math.Sqrt(p*(1-p))

	s := fair.NewStream(gamestest.SimServerSeed, gamestest.SimClientSeed, 0)
	var stats gamestest.Stats
	for nonce := range uint64(gamestest.Bets()) {
		s.SetNonce(nonce)
		g, err := mines.New(s, m)
		if err != nil {
			t.Fatal(err)
		}
		for tile := range reveals {
			if mine, _ := g.Reveal(tile); mine {
				break
			}
		}
		if g.Status == mines.Active {
			if _, err := g.CashOut(); err != nil {
				t.Fatal(err)
			}
		}
		stats.AddMultiplier(g.Payout())
	}
	gamestest.CheckRTP(t, &stats, want, sd)
}
