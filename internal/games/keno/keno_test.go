package keno_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"testing"

	"github.com/fairplay/fairplay/internal/fair"
	"github.com/fairplay/fairplay/internal/games/event"
	"github.com/fairplay/fairplay/internal/games/gamestest"
	"github.com/fairplay/fairplay/internal/games/keno"
	"github.com/fairplay/fairplay/internal/money"
)

func TestVectors(t *testing.T) {
	t.Parallel()
	ref := gamestest.Load(t)
	if len(ref.Fairness.TestVectors.Keno) != 3 {
		t.Fatalf("games.json has %d keno vectors, want 3", len(ref.Fairness.TestVectors.Keno))
	}
	for _, v := range ref.Fairness.TestVectors.Keno {
		t.Run(fmt.Sprintf("%.8s/%d", v.ServerSeed, v.Nonce), func(t *testing.T) {
			t.Parallel()
			got := keno.Draw(fair.NewStream(v.ServerSeed, v.ClientSeed, v.Nonce))
			if !slices.Equal(got, v.Drawn) {
				t.Fatalf("drawn %v, want %v", got, v.Drawn)
			}
		})
	}
}

// TestTablesMatchReference compares all 40 literal tables with games.json, exactly.
func TestTablesMatchReference(t *testing.T) {
	t.Parallel()
	ref := gamestest.Load(t)
	if !slices.Equal(ref.KenoBoard.Risks, []string{"classic", "low", "medium", "high"}) || len(ref.Keno) != len(keno.Risks) {
		t.Fatalf("games.json risks %v", ref.KenoBoard.Risks)
	}
	if ref.KenoBoard.Numbers != keno.Numbers || ref.KenoBoard.Drawn != keno.Drawn || ref.KenoBoard.MaxPicks != keno.MaxPicks || ref.KenoBoard.MinPicks != 1 {
		t.Fatalf("games.json board %+v", ref.KenoBoard)
	}
	for _, risk := range keno.Risks {
		if len(ref.Keno[string(risk)]) != keno.MaxPicks {
			t.Fatalf("games.json %s has %d tables", risk, len(ref.Keno[string(risk)]))
		}
		for picks := 1; picks <= keno.MaxPicks; picks++ {
			got, err := keno.Table(risk, picks)
			if err != nil {
				t.Fatal(err)
			}
			want := gamestest.Multipliers(t, ref.Keno[string(risk)][strconv.Itoa(picks)])
			if !slices.Equal(got, want) || len(got) != picks+1 {
				t.Errorf("%s/%d = %v, games.json %v", risk, picks, got, want)
			}
		}
	}
}

// hitProbability is the hypergeometric P(h hits | p picks) = C(p,h)·C(40−p,10−h)/C(40,10).
func hitProbability(picks, hits int) *big.Rat {
	num := new(big.Int).Binomial(int64(picks), int64(hits))
	num.Mul(num, new(big.Int).Binomial(int64(keno.Numbers-picks), int64(keno.Drawn-hits)))
	return new(big.Rat).SetFrac(num, new(big.Int).Binomial(keno.Numbers, keno.Drawn))
}

func TestHitProbabilities(t *testing.T) {
	t.Parallel()
	ref := gamestest.Load(t)
	tolerance := big.NewRat(5, 100_000_000_000) // games.json rounds to 10 decimals
	for picks := 1; picks <= keno.MaxPicks; picks++ {
		want := ref.KenoHitProbabilities[strconv.Itoa(picks)]
		if len(want) != picks+1 {
			t.Fatalf("games.json has %d probabilities for %d picks", len(want), picks)
		}
		total := new(big.Rat)
		for hits := 0; hits <= picks; hits++ {
			p := hitProbability(picks, hits)
			total.Add(total, p)
			w, ok := new(big.Rat).SetString(want[hits].String())
			if !ok {
				t.Fatalf("bad number %s", want[hits])
			}
			if d := new(big.Rat).Sub(p, w); d.Abs(d).Cmp(tolerance) > 0 {
				t.Errorf("P(%d hits | %d picks) = %s, games.json %s", hits, picks, p.FloatString(12), want[hits])
			}
		}
		if total.Cmp(big.NewRat(1, 1)) != 0 {
			t.Errorf("probabilities for %d picks sum to %s", picks, total)
		}
	}
}

// TestRTP computes each table's exact RTP and compares with games.json (4 decimals of a
// percent).
func TestRTP(t *testing.T) {
	t.Parallel()
	ref := gamestest.Load(t)
	for _, risk := range keno.Risks {
		for picks := 1; picks <= keno.MaxPicks; picks++ {
			table, _ := keno.Table(risk, picks)
			percent := new(big.Rat).Mul(exactRTP(table), big.NewRat(100, 1))
			want, ok := new(big.Rat).SetString(ref.KenoRTPPercent[string(risk)][strconv.Itoa(picks)].String())
			if !ok {
				t.Fatalf("%s/%d: no RTP in games.json", risk, picks)
			}
			if d := new(big.Rat).Sub(percent, want); d.Abs(d).Cmp(big.NewRat(5, 100_000)) > 0 {
				t.Errorf("%s/%d RTP %s%%, games.json %s%%", risk, picks, percent.FloatString(6), want.FloatString(4))
			}
			if lo, hi := big.NewRat(9865, 100), big.NewRat(9907, 100); percent.Cmp(lo) < 0 || percent.Cmp(hi) > 0 {
				t.Errorf("%s/%d RTP %s%% outside the documented 98.65–99.07%%", risk, picks, percent.FloatString(4))
			}
		}
	}
}

func exactRTP(table []money.Multiplier) *big.Rat {
	picks := len(table) - 1
	sum := new(big.Rat)
	for hits, m := range table {
		term := new(big.Rat).Mul(hitProbability(picks, hits), big.NewRat(int64(m), money.MultiplierScale))
		sum.Add(sum, term)
	}
	return sum
}

func TestValidatePicks(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		picks []int
		err   error
	}{
		{"one", []int{40}, nil},
		{"ten", []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, nil},
		{"none", nil, keno.ErrNoNumbers},
		{"empty", []int{}, keno.ErrNoNumbers},
		{"eleven", []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, keno.ErrTooManyNumbers},
		{"zero", []int{0}, keno.ErrNumberOutOfRange},
		{"41", []int{5, 41}, keno.ErrNumberOutOfRange},
		{"negative", []int{-1}, keno.ErrNumberOutOfRange},
		{"duplicate", []int{7, 8, 7}, keno.ErrDuplicateNumber},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := keno.ValidatePicks(tt.picks)
			if !errors.Is(err, tt.err) || (tt.err == nil) != (err == nil) {
				t.Fatalf("ValidatePicks(%v) = %v, want %v", tt.picks, err, tt.err)
			}
			if tt.err == nil {
				return
			}
			// Play validates before reading a single float from its (here empty) source.
			if _, perr := keno.Play(&event.Floats{}, tt.picks, keno.Classic); !errors.Is(perr, tt.err) {
				t.Fatalf("Play(%v) error = %v, want %v", tt.picks, perr, tt.err)
			}
		})
	}
	if keno.ErrNoNumbers.Error() != "Please select at least one number" {
		t.Fatalf("ErrNoNumbers text %q", keno.ErrNoNumbers)
	}
}

func TestPlay(t *testing.T) {
	t.Parallel()
	zeros := make([]float64, keno.Drawn) // draws 1, 2, …, 10
	tests := []struct {
		name    string
		picks   []int
		risk    keno.Risk
		matches []int
		mult    string
		err     error
	}{
		{name: "one hit classic", picks: []int{3}, risk: keno.Classic, matches: []int{3}, mult: "3.96"},
		{name: "miss low pays 0.7", picks: []int{40}, risk: keno.Low, matches: []int{}, mult: "0.7"},
		{name: "ten of ten high", picks: []int{10, 9, 8, 7, 6, 5, 4, 3, 2, 1}, risk: keno.High, matches: []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, mult: "1000"},
		{name: "three of five medium", picks: []int{2, 40, 5, 39, 9}, risk: keno.Medium, matches: []int{2, 5, 9}, mult: "4"},
		{name: "bad risk", picks: []int{1}, risk: "wild", err: keno.ErrInvalidRisk},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			src := event.Floats(slices.Clone(zeros))
			o, err := keno.Play(&src, tt.picks, tt.risk)
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("Play error = %v, want %v", err, tt.err)
				}
				return
			}
			if err != nil || !slices.Equal(o.Matches, tt.matches) || o.Multiplier.String() != tt.mult {
				t.Fatalf("Play = %+v, %v; want matches %v at %sx", o, err, tt.matches, tt.mult)
			}
			if !slices.Equal(o.Drawn, []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}) || len(src) != 0 {
				t.Fatalf("drawn %v, %d floats left", o.Drawn, len(src))
			}
		})
	}
}

func TestParseRisk(t *testing.T) {
	t.Parallel()
	for _, r := range keno.Risks {
		if got, err := keno.ParseRisk(string(r)); err != nil || got != r {
			t.Errorf("ParseRisk(%q) = %q, %v", r, got, err)
		}
	}
	if _, err := keno.ParseRisk("Classic"); !errors.Is(err, keno.ErrInvalidRisk) {
		t.Errorf("ParseRisk(Classic) error = %v", err)
	}
}

// TestSimulation plays Bets() games of 10 picks on the medium table (two HMAC rounds per
// draw) through the real fairness stream.
func TestSimulation(t *testing.T) {
	t.Parallel()
	picks := []int{3, 7, 11, 16, 20, 24, 29, 33, 38, 40}
	table, _ := keno.Table(keno.Medium, len(picks))
	var mean, m2 float64
	for hits, m := range table {
		p, _ := hitProbability(len(picks), hits).Float64()
		mean += p * m.Float64()
		m2 += p * m.Float64() * m.Float64()
	}

	s := fair.NewStream(gamestest.SimServerSeed, gamestest.SimClientSeed, 0)
	var stats gamestest.Stats
	for nonce := range uint64(gamestest.Bets()) {
		s.SetNonce(nonce)
		o, err := keno.Play(s, picks, keno.Medium)
		if err != nil {
			t.Fatal(err)
		}
		stats.AddMultiplier(o.Multiplier)
	}
	gamestest.CheckRTP(t, &stats, mean, math.Sqrt(m2-mean*mean))
}

// TestOutcomeAppendJSONIsMarshal: games of one to ten picks at every risk
// level from real streams, written as json.Marshal writes the outcome.
func TestOutcomeAppendJSONIsMarshal(t *testing.T) {
	t.Parallel()
	for n := 1; n <= 10; n++ {
		picks := make([]int, n)
		for i := range picks {
			picks[i] = 3*i + 1
		}
		for _, risk := range keno.Risks {
			for nonce := range uint64(100) {
				o, err := keno.Play(fair.NewStream("server", "client", nonce), picks, risk)
				if err != nil {
					t.Fatal(err)
				}
				want, err := json.Marshal(o)
				if err != nil {
					t.Fatal(err)
				}
				if got := o.AppendJSON([]byte("x")); string(got) != "x"+string(want) {
					t.Fatalf("%+v: %s, want x%s", o, got, want)
				}
			}
		}
	}
	for _, o := range []keno.Outcome{{}, {Picks: []int{}, Risk: "<&>", Matches: []int{}}} {
		want, _ := json.Marshal(o)
		if got := o.AppendJSON(nil); string(got) != string(want) {
			t.Errorf("%+v: %s, want %s", o, got, want)
		}
	}
}
