package plinko_test

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
	"github.com/fairplay/fairplay/internal/games/plinko"
	"github.com/fairplay/fairplay/internal/money"
)

func TestVectors(t *testing.T) {
	t.Parallel()
	ref := gamestest.Load(t)
	if len(ref.Fairness.TestVectors.Plinko) == 0 {
		t.Fatal("no plinko vectors in games.json")
	}
	for _, v := range ref.Fairness.TestVectors.Plinko {
		t.Run(fmt.Sprintf("nonce%d/rows%d", v.Nonce, v.Rows), func(t *testing.T) {
			t.Parallel()
			o, err := plinko.Drop(fair.NewStream(v.ServerSeed, v.ClientSeed, v.Nonce), v.Rows, plinko.Medium)
			if err != nil {
				t.Fatal(err)
			}
			if o.Bucket != v.Bucket {
				t.Fatalf("bucket = %d (decisions %v), want %d", o.Bucket, o.Decisions, v.Bucket)
			}
		})
	}
}

// TestTablesMatchReference compares every literal table with games.json, exactly.
func TestTablesMatchReference(t *testing.T) {
	t.Parallel()
	ref := gamestest.Load(t)
	if len(ref.Plinko) != len(plinko.Risks) {
		t.Fatalf("games.json has %d risks, want %d", len(ref.Plinko), len(plinko.Risks))
	}
	for _, risk := range plinko.Risks {
		if len(ref.Plinko[string(risk)]) != plinko.MaxRows-plinko.MinRows+1 {
			t.Fatalf("games.json %s has %d tables", risk, len(ref.Plinko[string(risk)]))
		}
		for rows := plinko.MinRows; rows <= plinko.MaxRows; rows++ {
			got, err := plinko.Table(risk, rows)
			if err != nil {
				t.Fatal(err)
			}
			want := gamestest.Multipliers(t, ref.Plinko[string(risk)][strconv.Itoa(rows)])
			if !slices.Equal(got, want) {
				t.Errorf("%s/%d = %v, games.json %v", risk, rows, got, want)
			}
			if len(got) != rows+1 {
				t.Errorf("%s/%d has %d buckets", risk, rows, len(got))
			}
			reversed := slices.Clone(got)
			slices.Reverse(reversed)
			if !slices.Equal(got, reversed) {
				t.Errorf("%s/%d is not symmetric", risk, rows)
			}
		}
	}
}

// TestRTP computes Σ C(rows,k)/2^rows × m_k exactly and compares with games.json, which
// gives 4 decimals of a percent.
func TestRTP(t *testing.T) {
	t.Parallel()
	ref := gamestest.Load(t)
	for _, risk := range plinko.Risks {
		for rows := plinko.MinRows; rows <= plinko.MaxRows; rows++ {
			table, _ := plinko.Table(risk, rows)
			rtp := exactRTP(table)
			percent := new(big.Rat).Mul(rtp, big.NewRat(100, 1))
			want, ok := new(big.Rat).SetString(ref.PlinkoRTPPercent[string(risk)][strconv.Itoa(rows)].String())
			if !ok {
				t.Fatalf("%s/%d: no RTP in games.json", risk, rows)
			}
			diff := new(big.Rat).Sub(percent, want)
			if diff.Abs(diff).Cmp(big.NewRat(5, 100_000)) > 0 {
				t.Errorf("%s/%d RTP %s%%, games.json %s%%", risk, rows, percent.FloatString(6), want.FloatString(4))
			}
			if lo, hi := big.NewRat(9890, 10000), big.NewRat(9917, 10000); rtp.Cmp(lo) < 0 || rtp.Cmp(hi) > 0 {
				t.Errorf("%s/%d RTP %s outside 98.90–99.17%%", risk, rows, percent.FloatString(4))
			}
		}
	}
}

// exactRTP is the expected multiplier under Binomial(rows, ½).
func exactRTP(table []money.Multiplier) *big.Rat {
	rows := int64(len(table) - 1)
	sum := new(big.Int)
	for k, m := range table {
		term := new(big.Int).Binomial(rows, int64(k))
		sum.Add(sum, term.Mul(term, big.NewInt(int64(m))))
	}
	den := new(big.Int).Lsh(big.NewInt(money.MultiplierScale), uint(rows))
	return new(big.Rat).SetFrac(sum, den)
}

func TestDrop(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		floats []float64
		rows   int
		risk   plinko.Risk
		bucket int
		mult   string
		err    error
	}{
		{name: "all left", floats: make([]float64, 8), rows: 8, risk: plinko.Medium, bucket: 0, mult: "13"},
		{name: "all right", floats: slices.Repeat([]float64{0.5}, 16), rows: 16, risk: plinko.High, bucket: 16, mult: "1000"},
		{name: "middle", floats: []float64{0.5, 0.49, 0.5, 0.49, 0.5, 0.49, 0.5, 0.49}, rows: 8, risk: plinko.Low, bucket: 4, mult: "0.5"},
		{name: "7 rows", rows: 7, risk: plinko.Low, err: plinko.ErrInvalidRows},
		{name: "17 rows", rows: 17, risk: plinko.Low, err: plinko.ErrInvalidRows},
		{name: "bad risk", rows: 8, risk: "extreme", err: plinko.ErrInvalidRisk},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			src := event.Floats(slices.Clone(tt.floats))
			o, err := plinko.Drop(&src, tt.rows, tt.risk)
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("Drop error = %v, want %v", err, tt.err)
				}
				return
			}
			if err != nil || o.Bucket != tt.bucket || o.Multiplier.String() != tt.mult || len(o.Decisions) != tt.rows {
				t.Fatalf("Drop = %+v, %v; want bucket %d at %sx", o, err, tt.bucket, tt.mult)
			}
			if len(src) != 0 {
				t.Fatalf("%d floats left unread", len(src))
			}
		})
	}
}

func TestParseRisk(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"low", "medium", "high"} {
		if r, err := plinko.ParseRisk(s); err != nil || string(r) != s {
			t.Errorf("ParseRisk(%q) = %q, %v", s, r, err)
		}
	}
	for _, s := range []string{"", "Low", "classic"} {
		if _, err := plinko.ParseRisk(s); !errors.Is(err, plinko.ErrInvalidRisk) {
			t.Errorf("ParseRisk(%q) error = %v, want ErrInvalidRisk", s, err)
		}
	}
}

// TestSimulation drops Bets() balls on 16 rows, high risk (the 1000x table, two HMAC
// rounds per ball) through the real fairness stream.
func TestSimulation(t *testing.T) {
	t.Parallel()
	const rows, risk = 16, plinko.High
	table, _ := plinko.Table(risk, rows)
	mean, sd := moments(table)

	s := fair.NewStream(gamestest.SimServerSeed, gamestest.SimClientSeed, 0)
	var stats gamestest.Stats
	for nonce := range uint64(gamestest.Bets()) {
		s.SetNonce(nonce)
		o, err := plinko.Drop(s, rows, risk)
		if err != nil {
			t.Fatal(err)
		}
		stats.AddMultiplier(o.Multiplier)
	}
	gamestest.CheckRTP(t, &stats, mean, sd)
}

// moments returns the mean and standard deviation of a table's multiplier.
func moments(table []money.Multiplier) (mean, sd float64) {
	rows := len(table) - 1
	var m2 float64
	for k, m := range table {
		p, _ := new(big.Rat).SetFrac(new(big.Int).Binomial(int64(rows), int64(k)), new(big.Int).Lsh(big.NewInt(1), uint(rows))).Float64()
		mean += p * m.Float64()
		m2 += p * m.Float64() * m.Float64()
	}
	return mean, math.Sqrt(m2 - mean*mean)
}

// TestOutcomeAppendJSONIsMarshal: drops of every row count and risk from
// real streams, written as json.Marshal writes the outcome.
func TestOutcomeAppendJSONIsMarshal(t *testing.T) {
	t.Parallel()
	for rows := plinko.MinRows; rows <= plinko.MaxRows; rows++ {
		for _, risk := range plinko.Risks {
			for nonce := range uint64(200) {
				o, err := plinko.Drop(fair.NewStream("server", "client", nonce), rows, risk)
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
	for _, o := range []plinko.Outcome{{}, {Risk: "<&>\"é", Decisions: []int{}}} {
		want, _ := json.Marshal(o)
		if got := o.AppendJSON(nil); string(got) != string(want) {
			t.Errorf("%+v: %s, want %s", o, got, want)
		}
	}
}
