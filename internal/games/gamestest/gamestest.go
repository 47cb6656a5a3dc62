// Package gamestest is shared test support for the game packages: it loads the reference
// figures of testdata/games.json (a copy of the research file reference/games.json, kept
// in the repository so tests are self-contained) and checks simulated RTPs against theory.
// Only tests import it.
package gamestest

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/fairplay/fairplay/internal/money"
)

// SimServerSeed and SimClientSeed are the fixed seed pair of every simulation, so a
// simulation is deterministic: it is the same million bets on every run.
const (
	SimServerSeed = "fairplay simulation server seed"
	SimClientSeed = "fairplay simulation client seed"
)

// Reference is the part of games.json the tests use. Numbers stay json.Number so tables
// compare exactly, as text parsed by money.ParseMultiplier.
type Reference struct {
	Fairness struct {
		TestVectors struct {
			Dice []struct {
				ServerSeed string      `json:"server_seed"`
				ClientSeed string      `json:"client_seed"`
				Nonce      uint64      `json:"nonce"`
				Roll       json.Number `json:"roll"`
			} `json:"dice"`
			Keno []struct {
				ServerSeed string `json:"server_seed"`
				ClientSeed string `json:"client_seed"`
				Nonce      uint64 `json:"nonce"`
				Drawn      []int  `json:"drawn"`
			} `json:"keno"`
			Mines []struct {
				ServerSeed string `json:"server_seed"`
				ClientSeed string `json:"client_seed"`
				Nonce      uint64 `json:"nonce"`
				Mines      int    `json:"mines"`
				Tiles      []int  `json:"mine_tiles_0_based"`
			} `json:"mines"`
			Plinko []struct {
				ServerSeed string `json:"server_seed"`
				ClientSeed string `json:"client_seed"`
				Nonce      uint64 `json:"nonce"`
				Rows       int    `json:"rows"`
				Bucket     int    `json:"bucket"`
			} `json:"plinko"`
			Pump []struct {
				ServerSeed    string      `json:"server_seed"`
				ClientSeed    string      `json:"client_seed"`
				Nonce         uint64      `json:"nonce"`
				Difficulty    string      `json:"difficulty"`
				First10Picks  []int       `json:"first_10_picks"`
				PopAtPump     int         `json:"pop_at_pump"`
				SafePumps     int         `json:"safe_pumps"`
				MaxMultiplier json.Number `json:"max_multiplier"`
			} `json:"pump"`
			Cards []struct {
				ServerSeed string   `json:"server_seed"`
				ClientSeed string   `json:"client_seed"`
				Nonce      uint64   `json:"nonce"`
				First4     []string `json:"first_4_cards"`
			} `json:"cards"`
		} `json:"test_vectors"`
	} `json:"fairness"`
	Dice struct {
		Outcomes        int         `json:"outcomes"`
		MaxMultiplier   json.Number `json:"max_multiplier"`
		ExactRTPPercent json.Number `json:"exact_rtp_percent"`
	} `json:"dice"`
	Plinko           map[string]map[string][]json.Number `json:"plinko"`
	PlinkoRTPPercent map[string]map[string]json.Number   `json:"plinko_rtp_percent"`
	KenoBoard        struct {
		Numbers  int      `json:"numbers"`
		Drawn    int      `json:"drawn"`
		MinPicks int      `json:"min_picks"`
		MaxPicks int      `json:"max_picks"`
		Risks    []string `json:"risks"`
	} `json:"keno_board"`
	Keno                 map[string]map[string][]json.Number `json:"keno"`
	KenoRTPPercent       map[string]map[string]json.Number   `json:"keno_rtp_percent"`
	KenoHitProbabilities map[string][]json.Number            `json:"keno_hit_probabilities"`
	Pump                 struct {
		Positions                    int                      `json:"positions"`
		Pops                         map[string]int           `json:"pops"`
		MaxSafePumps                 map[string]int           `json:"max_safe_pumps"`
		Multipliers                  map[string][]json.Number `json:"multipliers"`
		RTPPercentIfCashingOutAfterK map[string][]json.Number `json:"rtp_percent_if_cashing_out_after_k"`
		ExactUnroundedMultipliers    map[string][]json.Number `json:"exact_unrounded_multipliers"`
	} `json:"pump"`
	Mines struct {
		Tiles                 int                    `json:"tiles"`
		MinesMin              int                    `json:"mines_min"`
		MinesMax              int                    `json:"mines_max"`
		ComputedExamplesExact map[string]json.Number `json:"computed_examples_exact"`
	} `json:"mines"`
	Blackjack struct {
		ComputedHouseEdgePercentVariants map[string]json.Number `json:"computed_house_edge_percent_variants"`
	} `json:"blackjack"`
	Uncertain struct {
		MinesDisplayRounding struct {
			Tables map[string][]json.Number `json:"reported_display_tables_from_unnamed_mirrors"`
		} `json:"mines_display_rounding"`
	} `json:"uncertain"`
}

// Load reads testdata/games.json, failing the test if it cannot.
func Load(t testing.TB) *Reference {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("gamestest: cannot locate its own source file")
	}
	path := filepath.Join(filepath.Dir(file), "..", "testdata", "games.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("gamestest: %v", err)
	}
	var ref Reference
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.UseNumber()
	if err := dec.Decode(&ref); err != nil {
		t.Fatalf("gamestest: decode %s: %v", path, err)
	}
	return &ref
}

// Multipliers parses a list of JSON numbers exactly, failing the test on any that is not a
// valid multiplier.
func Multipliers(t testing.TB, nums []json.Number) []money.Multiplier {
	t.Helper()
	ms := make([]money.Multiplier, len(nums))
	for i, n := range nums {
		m, err := money.ParseMultiplier(n.String())
		if err != nil {
			t.Fatalf("gamestest: entry %d: %v", i, err)
		}
		ms[i] = m
	}
	return ms
}

// Float parses a JSON number of the reference as a float64, for statistics only.
func Float(t testing.TB, n json.Number) float64 {
	t.Helper()
	f, err := n.Float64()
	if err != nil {
		t.Fatalf("gamestest: %v", err)
	}
	return f
}

// Bets is the number of bets a simulation plays: 10⁶, or 10⁵ under -short or the race
// detector (which slows the HMAC about tenfold), so the whole suite stays well inside a
// minute on two cores. The tolerance scales with it, so the test is equally strict in
// standard errors either way.
func Bets() int {
	if testing.Short() || raceEnabled {
		return 100_000
	}
	return 1_000_000
}

// Stats accumulates the total-return multipliers of simulated bets. It works in float64:
// these are statistics about money, never money.
type Stats struct {
	n          int
	sum, sumSq float64
}

// Add records one bet's total return as a multiple of its stake.
func (s *Stats) Add(x float64) {
	s.n++
	s.sum += x
	s.sumSq += x * x
}

// AddMultiplier records one bet's payout multiplier.
func (s *Stats) AddMultiplier(m money.Multiplier) {
	s.Add(float64(m) / money.MultiplierScale)
}

// N returns the number of bets recorded.
func (s *Stats) N() int { return s.n }

// Mean returns the simulated RTP as a fraction of the stake.
func (s *Stats) Mean() float64 { return s.sum / float64(s.n) }

// StdDev returns the sample standard deviation of one bet's return.
func (s *Stats) StdDev() float64 {
	m := s.Mean()
	return math.Sqrt(math.Max(s.sumSq/float64(s.n)-m*m, 0))
}

// Sigmas is the tolerance of every RTP simulation, in standard errors of the mean. With
// the simulations' fixed seeds a run is deterministic; five standard errors means a
// correct implementation would fail for fewer than one seed pair in a million, while a
// wrong mapping or table typo moves the RTP by far more.
const Sigmas = 5

// CheckRTP fails t unless the simulated RTP is within Sigmas standard errors of want (a
// fraction). The standard error comes from sd, the theoretical standard deviation of one
// bet's return; pass 0 to use the sample's own.
func CheckRTP(t testing.TB, s *Stats, want, sd float64) {
	t.Helper()
	if sd == 0 {
		sd = s.StdDev()
	}
	se := sd / math.Sqrt(float64(s.n))
	diff := s.Mean() - want
	t.Logf("%d bets: RTP %.4f%% (theory %.4f%%, diff %+.4f pp, SE %.4f pp, tolerance ±%.4f pp)",
		s.n, 100*s.Mean(), 100*want, 100*diff, 100*se, 100*Sigmas*se)
	if math.Abs(diff) > Sigmas*se {
		t.Errorf("simulated RTP %.5f is %.1f standard errors from theory %.5f", s.Mean(), math.Abs(diff)/se, want)
	}
}
