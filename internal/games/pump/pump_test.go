package pump_test

import (
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"reflect"
	"slices"
	"testing"

	"github.com/fairplay/fairplay/internal/fair"
	"github.com/fairplay/fairplay/internal/games/event"
	"github.com/fairplay/fairplay/internal/games/gamestest"
	"github.com/fairplay/fairplay/internal/games/pump"
	"github.com/fairplay/fairplay/internal/money"
)

func TestVectors(t *testing.T) {
	t.Parallel()
	ref := gamestest.Load(t)
	if len(ref.Fairness.TestVectors.Pump) == 0 {
		t.Fatal("no pump vectors in games.json")
	}
	for _, v := range ref.Fairness.TestVectors.Pump {
		d, err := pump.ParseDifficulty(v.Difficulty)
		if err != nil {
			t.Fatal(err)
		}
		g, err := pump.New(fair.NewStream(v.ServerSeed, v.ClientSeed, v.Nonce), d)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(g.Pops, v.First10Picks[:d.Pops()]) {
			t.Fatalf("pops %v, want %v", g.Pops, v.First10Picks[:d.Pops()])
		}
		if g.BurstAt() != v.PopAtPump {
			t.Fatalf("bursts at %d, want %d", g.BurstAt(), v.PopAtPump)
		}
		// Pump until it bursts: the last safe count pays the vector's multiplier.
		var best money.Multiplier
		for {
			burst, err := g.Pump()
			if err != nil {
				t.Fatal(err)
			}
			if burst {
				break
			}
			best = g.Multiplier()
		}
		want, _ := money.ParseMultiplier(v.MaxMultiplier.String())
		if g.Pumps != v.SafePumps || best != want || g.Status != pump.Burst {
			t.Fatalf("%d safe pumps worth %s, status %s; want %d worth %s", g.Pumps, best, g.Status, v.SafePumps, want)
		}
	}
}

// TestTablesMatchReference compares the literal tables with games.json, exactly, and the
// pops and maximum pump counts with the reference's.
func TestTablesMatchReference(t *testing.T) {
	t.Parallel()
	ref := gamestest.Load(t)
	if ref.Pump.Positions != pump.Positions || len(ref.Pump.Multipliers) != len(pump.Difficulties) {
		t.Fatalf("games.json pump section: %d positions, %d tables", ref.Pump.Positions, len(ref.Pump.Multipliers))
	}
	for _, d := range pump.Difficulties {
		if d.Pops() != ref.Pump.Pops[string(d)] || d.MaxSafePumps() != ref.Pump.MaxSafePumps[string(d)] {
			t.Errorf("%s: %d pops, %d safe pumps; games.json %d, %d", d, d.Pops(), d.MaxSafePumps(), ref.Pump.Pops[string(d)], ref.Pump.MaxSafePumps[string(d)])
		}
		got, err := pump.Table(d)
		if err != nil {
			t.Fatal(err)
		}
		want := gamestest.Multipliers(t, ref.Pump.Multipliers[string(d)])
		if !slices.Equal(got, want) || len(got) != d.MaxSafePumps()+1 {
			t.Errorf("%s = %v, games.json %v", d, got, want)
		}
	}
}

// exact returns 0.98 × C(25, k)/C(25 − M, k).
func exact(d pump.Difficulty, k int) *big.Rat {
	r := new(big.Rat).SetFrac(new(big.Int).Binomial(pump.Positions, int64(k)), new(big.Int).Binomial(int64(pump.Positions-d.Pops()), int64(k)))
	return r.Mul(r, big.NewRat(98, 100))
}

// survival returns P(k safe pumps) = C(25 − M, k)/C(25, k).
func survival(d pump.Difficulty, k int) *big.Rat {
	return new(big.Rat).SetFrac(new(big.Int).Binomial(int64(pump.Positions-d.Pops()), int64(k)), new(big.Int).Binomial(pump.Positions, int64(k)))
}

// TestTablesFollowFormula checks every entry is the formula to 2 decimals (within half a
// cent either way, since the table's ties go both ways) and the reference's unrounded
// values.
func TestTablesFollowFormula(t *testing.T) {
	t.Parallel()
	ref := gamestest.Load(t)
	half := big.NewRat(5, 1000)
	for _, d := range pump.Difficulties {
		table, _ := pump.Table(d)
		unrounded := ref.Pump.ExactUnroundedMultipliers[string(d)]
		if table[0] != money.One {
			t.Errorf("%s starts at %s, want 1", d, table[0])
		}
		for k := 1; k < len(table); k++ {
			e := exact(d, k)
			diff := new(big.Rat).Sub(big.NewRat(int64(table[k]), money.MultiplierScale), e)
			if diff.Abs(diff).Cmp(half) > 0 {
				t.Errorf("%s k=%d: table %s, formula %s", d, k, table[k], e.FloatString(6))
			}
			w, _ := new(big.Rat).SetString(unrounded[k].String())
			if diff := new(big.Rat).Sub(e, w); diff.Abs(diff).Cmp(big.NewRat(5, 10_000_000)) > 0 {
				t.Errorf("%s k=%d: formula %s, games.json unrounded %s", d, k, e.FloatString(7), unrounded[k])
			}
		}
	}
}

// TestRTP computes the exact RTP of cashing out after each k and compares with games.json
// (rounded there to at most 3 decimals of a percent).
func TestRTP(t *testing.T) {
	t.Parallel()
	ref := gamestest.Load(t)
	for _, d := range pump.Difficulties {
		table, _ := pump.Table(d)
		want := ref.Pump.RTPPercentIfCashingOutAfterK[string(d)]
		if len(want) != len(table)-1 {
			t.Fatalf("%s: games.json has %d RTPs for %d cash-out points", d, len(want), len(table)-1)
		}
		for k := 1; k < len(table); k++ {
			rtp := new(big.Rat).Mul(big.NewRat(int64(table[k])*100, money.MultiplierScale), survival(d, k))
			w, _ := new(big.Rat).SetString(want[k-1].String())
			if diff := new(big.Rat).Sub(rtp, w); diff.Abs(diff).Cmp(big.NewRat(5, 10_000)) > 0 {
				t.Errorf("%s k=%d RTP %s%%, games.json %s%%", d, k, rtp.FloatString(5), want[k-1])
			}
			if rtp.Cmp(big.NewRat(9768, 100)) < 0 || rtp.Cmp(big.NewRat(9844, 100)) > 0 {
				t.Errorf("%s k=%d RTP %s%% outside the documented 97.68–98.44%%", d, k, rtp.FloatString(4))
			}
			if k == len(table)-1 && rtp.Cmp(big.NewRat(98, 1)) != 0 {
				t.Errorf("%s last pump RTP %s%%, want exactly 98%%", d, rtp.FloatString(6))
			}
		}
	}
}

func TestParseDifficulty(t *testing.T) {
	t.Parallel()
	for _, d := range pump.Difficulties {
		if got, err := pump.ParseDifficulty(string(d)); err != nil || got != d {
			t.Errorf("ParseDifficulty(%q) = %q, %v", d, got, err)
		}
	}
	for _, s := range []string{"", "Easy", "insane"} {
		if _, err := pump.ParseDifficulty(s); !errors.Is(err, pump.ErrInvalidDifficulty) {
			t.Errorf("ParseDifficulty(%q) error = %v", s, err)
		}
	}
	if _, err := pump.Table("insane"); !errors.Is(err, pump.ErrInvalidDifficulty) {
		t.Errorf("Table(insane) error = %v", err)
	}
	if _, err := pump.New(&event.Floats{}, "insane"); !errors.Is(err, pump.ErrInvalidDifficulty) {
		t.Errorf("New(insane) error = %v", err)
	}
	for _, k := range []int{-1, 16} {
		if _, err := pump.Multiplier(pump.Expert, k); !errors.Is(err, pump.ErrInvalidPumps) {
			t.Errorf("Multiplier(expert, %d) error = %v", k, err)
		}
	}
}

// newEasyGame starts a game whose single pop (easy) is at the given position.
func newEasyGame(t *testing.T, popAt int) *pump.Game {
	t.Helper()
	src := event.Floats{(float64(popAt) - 0.5) / pump.Positions}
	g, err := pump.New(&src, pump.Easy)
	if err != nil {
		t.Fatal(err)
	}
	if g.BurstAt() != popAt {
		t.Fatalf("pop at %d, want %d", g.BurstAt(), popAt)
	}
	return g
}

func TestGame(t *testing.T) {
	t.Parallel()
	type step struct {
		op    string // "pump" or "cashout"
		burst bool
		err   error
	}
	pumps := func(n int) []step { return slices.Repeat([]step{{op: "pump"}}, n) }
	tests := []struct {
		name   string
		popAt  int
		steps  []step
		status pump.Status
		count  int
		payout string
	}{
		{name: "burst on first pump", popAt: 1, steps: []step{{op: "pump", burst: true}}, status: pump.Burst, payout: "0"},
		{name: "cash out after two", popAt: 10, steps: append(pumps(2), step{op: "cashout"}), status: pump.Won, count: 2, payout: "1.07"},
		{name: "burst on third", popAt: 3, steps: append(pumps(2), step{op: "pump", burst: true}), status: pump.Burst, count: 2, payout: "0"},
		{name: "cash out before pumping", popAt: 5, steps: []step{{op: "cashout", err: pump.ErrNothingToCashOut}}, status: pump.Active, payout: "0"},
		{name: "after burst", popAt: 1, steps: []step{{op: "pump", burst: true}, {op: "pump", err: pump.ErrGameOver}, {op: "cashout", err: pump.ErrGameOver}}, status: pump.Burst, payout: "0"},
		{name: "after cash-out", popAt: 9, steps: []step{{op: "pump"}, {op: "cashout"}, {op: "pump", err: pump.ErrGameOver}}, status: pump.Won, count: 1, payout: "1.02"},
		{name: "all 24 safe pumps win at once", popAt: 25, steps: append(pumps(24), step{op: "pump", err: pump.ErrGameOver}), status: pump.Won, count: 24, payout: "24.5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			g := newEasyGame(t, tt.popAt)
			for i, s := range tt.steps {
				var burst bool
				var err error
				if s.op == "cashout" {
					_, err = g.CashOut()
				} else {
					burst, err = g.Pump()
				}
				if !errors.Is(err, s.err) || (s.err == nil) != (err == nil) || burst != s.burst {
					t.Fatalf("step %d %s: burst %v, error %v; want %v, %v", i, s.op, burst, err, s.burst, s.err)
				}
			}
			if g.Status != tt.status || g.Pumps != tt.count || g.Payout().String() != tt.payout {
				t.Fatalf("status %s, %d pumps, payout %s; want %s, %d, %s", g.Status, g.Pumps, g.Payout(), tt.status, tt.count, tt.payout)
			}
		})
	}
}

func TestGameJSONRoundTrip(t *testing.T) {
	t.Parallel()
	src := event.Floats{0.9, 0.5, 0.7}
	g, err := pump.New(&src, pump.Medium)
	if err != nil {
		t.Fatal(err)
	}
	if burst, err := g.Pump(); burst || err != nil {
		t.Fatalf("Pump = %v, %v", burst, err)
	}
	data, err := json.Marshal(g)
	if err != nil {
		t.Fatal(err)
	}
	var back pump.Game
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(*g, back) {
		t.Fatalf("round trip %s gave %+v", data, back)
	}
	if m, err := back.CashOut(); err != nil || m.String() != "1.11" {
		t.Fatalf("CashOut after reload = %s, %v", m, err)
	}
}

func TestCorruptGame(t *testing.T) {
	t.Parallel()
	tests := map[string]func(g *pump.Game){
		"unknown difficulty": func(g *pump.Game) { g.Difficulty = "insane" },
		"no pops":            func(g *pump.Game) { g.Pops = nil },
		"pop off the board":  func(g *pump.Game) { g.Pops[0] = 26 },
		"pop zero":           func(g *pump.Game) { g.Pops[0] = 0 },
		"repeated pop":       func(g *pump.Game) { g.Pops[1] = g.Pops[0] },
		"pumped past burst":  func(g *pump.Game) { g.Pumps = 25 },
		"negative pumps":     func(g *pump.Game) { g.Pumps = -1 },
		"unknown status":     func(g *pump.Game) { g.Status = "" },
	}
	for name, corrupt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			src := event.Floats{0.9, 0.5, 0.7}
			g, err := pump.New(&src, pump.Medium)
			if err != nil {
				t.Fatal(err)
			}
			corrupt(g)
			if _, err := g.Pump(); !errors.Is(err, pump.ErrInvalidState) {
				t.Errorf("Pump error = %v, want ErrInvalidState", err)
			}
			if _, err := g.CashOut(); !errors.Is(err, pump.ErrInvalidState) {
				t.Errorf("CashOut error = %v, want ErrInvalidState", err)
			}
		})
	}
	if pump.Difficulty("insane").MaxSafePumps() != 0 {
		t.Error("unknown difficulty has safe pumps")
	}
}

// TestSimulation plays Bets() expert games (10 pops: two HMAC rounds) through the real
// fairness stream, cashing out after 3 safe pumps at 4.95x.
func TestSimulation(t *testing.T) {
	t.Parallel()
	const d, target = pump.Expert, 3
	mult, _ := pump.Multiplier(d, target)
	p, _ := survival(d, target).Float64()
	want, sd := p*mult.Float64(), mult.Float64()*math.Sqrt(p*(1-p))

	s := fair.NewStream(gamestest.SimServerSeed, gamestest.SimClientSeed, 0)
	var stats gamestest.Stats
	for nonce := range uint64(gamestest.Bets()) {
		s.SetNonce(nonce)
		g, err := pump.New(s, d)
		if err != nil {
			t.Fatal(err)
		}
		for g.Status == pump.Active && g.Pumps < target {
			if _, err := g.Pump(); err != nil {
				t.Fatal(err)
			}
		}
		if g.Status == pump.Active {
			if _, err := g.CashOut(); err != nil {
				t.Fatal(err)
			}
		}
		stats.AddMultiplier(g.Payout())
	}
	gamestest.CheckRTP(t, &stats, want, sd)
}
