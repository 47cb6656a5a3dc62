package dice_test

import (
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"testing"

	"github.com/fairplay/fairplay/internal/fair"
	"github.com/fairplay/fairplay/internal/games/dice"
	"github.com/fairplay/fairplay/internal/games/event"
	"github.com/fairplay/fairplay/internal/games/gamestest"
	"github.com/fairplay/fairplay/internal/money"
)

func TestVectors(t *testing.T) {
	t.Parallel()
	ref := gamestest.Load(t)
	if len(ref.Fairness.TestVectors.Dice) != 5 {
		t.Fatalf("games.json has %d dice vectors, want 5", len(ref.Fairness.TestVectors.Dice))
	}
	for _, v := range ref.Fairness.TestVectors.Dice {
		t.Run(v.Roll.String(), func(t *testing.T) {
			t.Parallel()
			got := dice.RollFrom(fair.NewStream(v.ServerSeed, v.ClientSeed, v.Nonce))
			want, err := money.ParseFixed(v.Roll.String(), 2)
			if err != nil {
				t.Fatal(err)
			}
			if int64(got) != want {
				t.Fatalf("roll = %s, want %s", got, v.Roll)
			}
		})
	}
}

func TestRollFrom(t *testing.T) {
	t.Parallel()
	tests := []struct {
		f    float64
		want dice.Roll
		text string
	}{
		{0, 0, "0.00"},
		{0.5, 5000, "50.00"}, // floor(5000.5)
		{float64(math.MaxUint32) / (1 << 32), 10000, "100.00"},
		{0.05, 500, "5.00"},
		{0.7467, 7467, "74.67"}, // 7467.7467
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			t.Parallel()
			src := event.Floats{tt.f}
			got := dice.RollFrom(&src)
			if got != tt.want || got.String() != tt.text {
				t.Fatalf("RollFrom(%v) = %d %q, want %d %q", tt.f, got, got, tt.want, tt.text)
			}
		})
	}
}

func TestTarget(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want dice.Target
		mult string
		err  bool
	}{
		{in: "50", want: 500, mult: "1.98"},
		{in: "49.5", want: 495, mult: "2"},
		{in: "40", want: 400, mult: "2.48"}, // 2.475 rounds half up
		{in: "98", want: 980, mult: "1.01"}, // 1.0102…
		{in: "97.5", want: 975, mult: "1.02"},
		{in: "2", want: 20, mult: "49.5"},
		{in: "2.0", want: 20, mult: "49.5"},
		{in: "33", want: 330, mult: "3"},
		{in: "66.6", want: 666, mult: "1.49"}, // 1.486…
		{in: "5e1", want: 500, mult: "1.98"},
		{in: "1.9", err: true},
		{in: "98.1", err: true},
		{in: "49.55", err: true},
		{in: "-50", err: true},
		{in: "NaN", err: true},
		{in: "", err: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			got, err := dice.ParseTarget(tt.in)
			if tt.err {
				if !errors.Is(err, dice.ErrInvalidTarget) {
					t.Fatalf("ParseTarget(%q) = %v, %v; want ErrInvalidTarget", tt.in, got, err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ParseTarget(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
			}
			if m := got.Multiplier().String(); m != tt.mult {
				t.Fatalf("multiplier of %s = %s, want %s", got, m, tt.mult)
			}
			if _, err := dice.NewTarget(int(tt.want)); err != nil {
				t.Fatalf("NewTarget(%d): %v", tt.want, err)
			}
		})
	}
	for _, tenths := range []int{19, 981, 0, -500} {
		if _, err := dice.NewTarget(tenths); !errors.Is(err, dice.ErrInvalidTarget) {
			t.Errorf("NewTarget(%d) error = %v, want ErrInvalidTarget", tenths, err)
		}
	}
}

func TestPlay(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		f      float64
		target dice.Target
		want   dice.Outcome
	}{
		// 0.49995 × 10001 = 4999.99…, roll 49.99 < 50: win.
		{"just under wins", 0.49995, 500, dice.Outcome{Roll: 4999, Target: 500, Win: true, Multiplier: 19800}},
		// 0.5 × 10001 = 5000.5, roll 50.00 = target: a tie loses.
		{"tie loses", 0.5, 500, dice.Outcome{Roll: 5000, Target: 500}},
		{"over loses", 0.9, 500, dice.Outcome{Roll: 9000, Target: 500}},
		{"zero wins min target", 0, 20, dice.Outcome{Roll: 0, Target: 20, Win: true, Multiplier: 495000}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			src := event.Floats{tt.f}
			if got := dice.Play(&src, tt.target); got != tt.want {
				t.Fatalf("Play = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestRTP computes every target's exact RTP: 10·t winning rolls of 10,001, times the
// rounded multiplier.
func TestRTP(t *testing.T) {
	t.Parallel()
	ref := gamestest.Load(t)
	if ref.Dice.Outcomes != dice.Outcomes {
		t.Fatalf("games.json outcomes = %d, want %d", ref.Dice.Outcomes, dice.Outcomes)
	}
	// Unrounded: P(win) × 99/target = (10t/10001) × (990/t) = 9900/10001 for every t.
	exact := big.NewRat(990000, 10001) // percent
	if got := exact.FloatString(4); got != ref.Dice.ExactRTPPercent.String() {
		t.Fatalf("exact RTP %s%%, games.json says %s%%", got, ref.Dice.ExactRTPPercent)
	}
	var lo, hi *big.Rat
	for tenths := int(dice.MinTarget); tenths <= int(dice.MaxTarget); tenths++ {
		target, err := dice.NewTarget(tenths)
		if err != nil {
			t.Fatal(err)
		}
		wins := 0
		for r := dice.Roll(0); r < dice.Outcomes; r++ {
			if target.Wins(r) {
				wins++
			}
		}
		if wins != 10*tenths {
			t.Fatalf("target %s wins on %d rolls, want %d", target, wins, 10*tenths)
		}
		rtp := new(big.Rat).SetFrac64(int64(wins)*int64(target.Multiplier())*100, dice.Outcomes*money.MultiplierScale)
		if lo == nil || rtp.Cmp(lo) < 0 {
			lo = rtp
		}
		if hi == nil || rtp.Cmp(hi) > 0 {
			hi = rtp
		}
	}
	t.Logf("RTP after 2-decimal rounding: %s%% … %s%%", lo.FloatString(4), hi.FloatString(4))
	// The package documentation states this range.
	if lo.FloatString(2) != "98.52" || hi.FloatString(2) != "99.44" {
		t.Fatalf("rounded RTP range %s … %s%%, documented 98.52 … 99.44%%", lo.FloatString(2), hi.FloatString(2))
	}
	if max := dice.MinTarget.Multiplier(); max.String() != "49.5" {
		t.Fatalf("largest multiplier %s, want 49.5", max)
	}
}

// TestSimulation plays Bets() rolls at target 50 through the real fairness stream.
func TestSimulation(t *testing.T) {
	t.Parallel()
	target, _ := dice.NewTarget(500)
	m := target.Multiplier().Float64()
	p := 5000.0 / dice.Outcomes
	want, sd := p*m, m*math.Sqrt(p*(1-p))

	s := fair.NewStream(gamestest.SimServerSeed, gamestest.SimClientSeed, 0)
	var stats gamestest.Stats
	for nonce := range uint64(gamestest.Bets()) {
		s.SetNonce(nonce)
		stats.AddMultiplier(dice.Play(s, target).Multiplier)
	}
	gamestest.CheckRTP(t, &stats, want, sd)
}

// TestOutcomeAppendJSONIsMarshal: every roll, against targets across the
// range, won and lost, written as json.Marshal writes the outcome.
func TestOutcomeAppendJSONIsMarshal(t *testing.T) {
	t.Parallel()
	for _, target := range []dice.Target{dice.MinTarget, 21, 495, 500, 505, 979, dice.MaxTarget} {
		for r := dice.Roll(0); r < dice.Outcomes; r++ {
			o := dice.Outcome{Roll: r, Target: target, Win: int(r) < int(target)*10}
			if o.Win {
				o.Multiplier = target.Multiplier()
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

// BenchmarkOutcomeJSON: a dice outcome written by json.Marshal and by
// AppendJSON, as every dice bet's state is.
func BenchmarkOutcomeJSON(b *testing.B) {
	o := dice.Outcome{Roll: 4267, Target: 505, Win: true, Multiplier: dice.Target(505).Multiplier()}
	b.Run("Marshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(o); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("AppendJSON", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = o.AppendJSON(make([]byte, 0, 64))
		}
	})
}
