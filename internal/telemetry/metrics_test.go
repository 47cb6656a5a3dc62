package telemetry

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/fairplay/fairplay/internal/money"
)

// Settled bets count under their own game, with the games' children
// resolved once and kept.
func TestBetSettledCountsPerGame(t *testing.T) {
	m := NewMetrics()
	m.BetSettled("dice", money.Amount(150_000_000), 0)
	m.BetSettled("dice", money.Amount(50_000_000), money.Amount(99_000_000))
	m.BetSettled("mines", money.Amount(100_000_000), money.Amount(250_000_000))
	for _, c := range []struct {
		game                   string
		bets, wagered, paidOut float64
	}{{"dice", 2, 2, 0.99}, {"mines", 1, 1, 2.5}, {"keno", 0, 0, 0}} {
		if got := testutil.ToFloat64(m.Bets.WithLabelValues(c.game)); got != c.bets {
			t.Errorf("%s: %v bets, want %v", c.game, got, c.bets)
		}
		if got := testutil.ToFloat64(m.Wagered.WithLabelValues(c.game)); got != c.wagered {
			t.Errorf("%s: %v wagered, want %v", c.game, got, c.wagered)
		}
		if got := testutil.ToFloat64(m.PaidOut.WithLabelValues(c.game)); got != c.paidOut {
			t.Errorf("%s: %v paid out, want %v", c.game, got, c.paidOut)
		}
	}
	if allocs := testing.AllocsPerRun(100, func() { m.BetSettled("dice", 1, 0) }); allocs != 0 {
		t.Errorf("a settled bet of a game seen before allocates %v times, want 0", allocs)
	}
}
