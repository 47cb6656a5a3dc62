package security_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/fairplay/fairplay/internal/games"
	"github.com/fairplay/fairplay/internal/money"
	"github.com/fairplay/fairplay/internal/play"
	"github.com/fairplay/fairplay/test/apitest"
)

// fuzzGame builds a game and its request body from the fuzzer's bytes:
// which game, and one number that picks its parameters (a dice target, the
// plinko rows and risk, the keno picks and risk, the mine count, the pump
// difficulty); out-of-range parameters are kept, so invalid bets are fuzzed
// too.
func fuzzGame(which uint8, param uint16) (g game, body func(stake string) string) {
	g = allGames[int(which)%len(allGames)]
	switch g.name {
	case games.Dice:
		target := fmt.Sprintf("%d.%d", 1+int(param)%99, param%10)
		g.params = games.Params{Target: target}
		body = func(s string) string { return fmt.Sprintf(`{"betAmount":%s,"rollTarget":%s}`, s, target) }
	case games.Plinko:
		rows, risk := 7+int(param)%11, []string{"low", "medium", "high", "none"}[param/11%4]
		g.params = games.Params{Rows: rows, Risk: risk}
		body = func(s string) string { return fmt.Sprintf(`{"betAmount":%s,"rows":%d,"risk":%q}`, s, rows, risk) }
	case games.Keno:
		n, risk := 1+int(param)%11, []string{"classic", "low", "medium", "high"}[param/11%4]
		picks := make([]int, n)
		for i := range picks {
			picks[i] = 1 + (i*7+int(param))%40
		}
		g.params = games.Params{Picks: picks, Risk: risk}
		body = func(s string) string {
			return fmt.Sprintf(`{"betAmount":%s,"selectedNumbers":%s,"riskLevel":%q}`, s, jsonInts(picks), risk)
		}
	case games.Mines:
		m := int(param) % 26
		g.params = games.Params{Mines: m, Reveals: []int{int(param) % 25}}
		body = func(s string) string { return fmt.Sprintf(`{"betAmount":%s,"mineCount":%d}`, s, m) }
	case games.Pump:
		d := []string{"easy", "medium", "hard", "expert", "extreme"}[int(param)%5]
		g.params = games.Params{Difficulty: d, Pumps: 1 + int(param)%3}
		body = func(s string) string { return fmt.Sprintf(`{"betAmount":%s,"difficulty":%q}`, s, d) }
	default:
		body = func(s string) string { return fmt.Sprintf(`{"betAmount":%s}`, s) }
	}
	return g, body
}

func jsonInts(v []int) string {
	out := "["
	for i, n := range v {
		if i > 0 {
			out += ","
		}
		out += fmt.Sprint(n)
	}
	return out + "]"
}

// FuzzRefusalsIgnoreOutcome places the same random bet — any game, any
// parameters, any stake text, any balance — for two players whose next
// outcome is the best and the worst of 32 client seeds, and asserts that
// the answer's status never depends on which: a refusal is the same
// refusal, body and all, and nothing is ever a 5xx.
func FuzzRefusalsIgnoreOutcome(f *testing.F) {
	env := apitest.Start(f)
	a, b := newPlayer(f, env), newPlayer(f, env)
	for _, seed := range []struct {
		game    uint8
		stake   string
		param   uint16
		balance int64
	}{
		{0, "2000000000", 1, 1000 * money.Scale}, // the review's probe: dice, target 2
		{0, "90000000000", 49, 1000 * money.Scale},
		{1, "90000000000", 9 + 22, 1000 * money.Scale}, // plinko 16 rows, high
		{2, "90000000000", 9 + 33, 1000 * money.Scale}, // keno 10 picks, high
		{5, "90000000000", 0, 1000 * money.Scale},      // blackjack
		{3, "5000", 3, 1000 * money.Scale},
		{4, "1", 3, int64(play.MaxBalance) + 1},
		{0, "0.05", 49, 1000 * money.Scale},
		{0, "1.005", 49, 1000 * money.Scale},
		{0, "10000", 49, 20_000 * money.Scale},
		{2, "1", 0, 0},
	} {
		f.Add(seed.game, seed.stake, seed.param, seed.balance)
	}
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, which uint8, stake string, param uint16, balance int64) {
		if balance < 0 {
			balance = -(balance + 1)
		}
		balance %= int64(play.MaxBalance) + 2*int64(money.Dollars(10_000)) // now and then above the limit
		g, body := fuzzGame(which, param)
		answers := [2]apitest.Response{}
		for i, p := range []*player{a, b} {
			// apitest clients fail the test they were made for; the fuzz
			// target must not touch *testing.F.
			e := *env
			e.T = t
			c := p.Via(&e)
			// The same state for both: no running game, the same balance,
			// and a client seed whose outcome at the probe's nonce is the
			// best (a) or the worst (b) of 32. A warm-up bet leaves the
			// pair remembered by the server, so the probe is drawn before
			// Postgres is asked, the way a hostile player's would be.
			if _, err := p.db.Exec(ctx, `UPDATE bets SET status = 'settled', settled_at = now()
				WHERE user_id = $1 AND status = 'active'`, p.id); err != nil {
				t.Fatal(err)
			}
			p.setBalance(t, money.Dollars(1000))
			server, _, nonce := p.pair(t)
			best, bestScore := "", money.Multiplier(-1)
			for c := range 32 {
				client := fmt.Sprintf("fuzz-%d", c)
				s, _ := outcomeScore(g, server, client, nonce+2) // 0 for parameters the server refuses
				if bestScore < 0 || (i == 0 && s > bestScore) || (i == 1 && s < bestScore) {
					best, bestScore = client, s
				}
			}
			mustOK(t, "client seed", c.Do("POST", "/api/fair/client-seed", map[string]any{"clientSeed": best}))
			mustOK(t, "warm-up bet", c.Do("POST", "/api/games/dice", map[string]any{"betAmount": 0.1, "rollTarget": 50}))
			p.setBalance(t, money.Amount(balance))
			answers[i] = c.Do("POST", g.path, body(stake))
		}
		w, l := answers[0], answers[1]
		if w.Status >= 500 || l.Status >= 500 {
			t.Fatalf("%s %s: %d %s / %d %s", g.name, body(stake), w.Status, w.Raw, l.Status, l.Raw)
		}
		if w.Status != l.Status || (w.Status != 200 && string(w.Raw) != string(l.Raw)) {
			t.Fatalf("%s %s (balance %s): the answer depends on the outcome:\n  best:  %d %s\n  worst: %d %s",
				g.name, body(stake), money.Amount(balance), w.Status, w.Raw, l.Status, l.Raw)
		}
	})
}
