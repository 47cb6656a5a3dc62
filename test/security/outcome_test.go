package security_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fairplay/fairplay/internal/fair"
	"github.com/fairplay/fairplay/internal/games"
	"github.com/fairplay/fairplay/internal/money"
	"github.com/fairplay/fairplay/internal/play"
	"github.com/fairplay/fairplay/internal/settings"
	"github.com/fairplay/fairplay/test/apitest"
)

// A refusal must not tell the player anything about the outcome the bet
// would have had. Each test here fixes the next outcome — by reading the
// server seed from the database, as only the house can, and choosing the
// client seed that makes the next nonce's outcome the best or the worst of
// many candidates — then provokes one kind of refusal for both outcomes and
// compares the answers: status and body must be the same, and the refusal
// must take nothing (the nonce does not move).

// game is one way to place a bet, with the parameters the outcome is scored
// for.
type game struct {
	name   games.Name
	path   string
	body   func(stake string) map[string]any
	params games.Params
}

var allGames = []game{
	{games.Dice, "/api/games/dice", func(s string) map[string]any { return map[string]any{"betAmount": json.Number(s), "rollTarget": 50} },
		games.Params{Target: "50"}},
	{games.Plinko, "/api/games/plinko", func(s string) map[string]any {
		return map[string]any{"betAmount": json.Number(s), "rows": 16, "risk": "high"}
	}, games.Params{Rows: 16, Risk: "high"}},
	{games.Keno, "/api/games/keno", func(s string) map[string]any {
		return map[string]any{"betAmount": json.Number(s), "selectedNumbers": []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, "riskLevel": "high"}
	}, games.Params{Picks: []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, Risk: "high"}},
	{games.Mines, "/api/games/mines/start", func(s string) map[string]any {
		return map[string]any{"betAmount": json.Number(s), "mineCount": 3}
	}, games.Params{Mines: 3, Reveals: []int{0}}},
	{games.Pump, "/api/games/pump/start", func(s string) map[string]any {
		return map[string]any{"betAmount": json.Number(s), "difficulty": "expert"}
	}, games.Params{Difficulty: "expert", Pumps: 1}},
	{games.Blackjack, "/api/games/blackjack/start", func(s string) map[string]any { return map[string]any{"betAmount": json.Number(s)} },
		games.Params{Rules: 1}},
}

// score is what the next bet of g would return per unit of stake if the
// pair were (server, client) at nonce: the multiplier of an instant game,
// of one revealed tile or one pump, of a blackjack natural or else a double.
func score(t testing.TB, g game, server, client string, nonce int64) money.Multiplier {
	t.Helper()
	m, err := outcomeScore(g, server, client, nonce)
	if err != nil {
		t.Fatalf("replay %s: %v", g.name, err)
	}
	return m
}

// outcomeScore is score, with an error for parameters that do not replay.
func outcomeScore(g game, server, client string, nonce int64) (money.Multiplier, error) {
	replay := func(p games.Params) (games.Outcome, error) {
		return games.Replay(g.name, fair.NewStream(server, client, uint64(nonce)), p)
	}
	o, err := replay(g.params)
	if err != nil {
		return 0, err
	}
	switch {
	case o.Dice != nil:
		return o.Dice.Multiplier, nil
	case o.Plinko != nil:
		return o.Plinko.Multiplier, nil
	case o.Keno != nil:
		return o.Keno.Multiplier, nil
	case o.Mines != nil:
		return o.Mines.Multiplier, nil
	case o.Pump != nil:
		return o.Pump.Multiplier, nil
	case o.Blackjack != nil:
		if o.Blackjack.Result != "" {
			return o.Blackjack.Multiplier * 2, nil // a natural, decided by the deal: rank it first
		}
		actions := "d"
		if o.Blackjack.Insurance == "offered" { // an ace up: declined, then the peek may decide
			n, err := replay(games.Params{Actions: "n", Rules: g.params.Rules})
			if err != nil {
				return 0, err
			}
			if n.Blackjack.Result != "" {
				return n.Blackjack.Multiplier * 2, nil
			}
			actions = "nd"
		}
		d, err := replay(games.Params{Actions: actions, Rules: g.params.Rules})
		if err != nil {
			return 0, err
		}
		return d.Blackjack.Multiplier, nil
	}
	return 0, fmt.Errorf("replay %s: no outcome", g.name)
}

// seedFor returns the client seed, among candidates, whose outcome for g at
// nonce is the best (win) or the worst (!win).
func seedFor(t testing.TB, g game, server string, nonce int64, win bool, accept ...func(client string) bool) string {
	t.Helper()
	best, bestScore := "", money.Multiplier(-1)
	for i := range 200 {
		c := fmt.Sprintf("probe-%d", i)
		if len(accept) > 0 && !accept[0](c) {
			continue
		}
		s := score(t, g, server, c, nonce)
		if bestScore < 0 || (win && s > bestScore) || (!win && s < bestScore) {
			best, bestScore = c, s
		}
	}
	return best
}

// player is a registered client with direct database access for the house's
// side of the test.
type player struct {
	*apitest.Client
	env  *apitest.Env
	db   *pgxpool.Pool
	id   string
	name string
}

var players atomic.Int64

func newPlayer(t testing.TB, env *apitest.Env) *player {
	t.Helper()
	name := fmt.Sprintf("player%d", players.Add(1))
	c := env.Client()
	c.Register(name)
	p := &player{Client: c, env: env, db: env.App.Postgres, name: name}
	if err := p.db.QueryRow(context.Background(), `SELECT id::text FROM users WHERE username = $1`, name).Scan(&p.id); err != nil {
		t.Fatal(err)
	}
	mustOK(t, "seeds", p.Do("GET", "/api/fair/seeds", nil)) // creates the seed pair
	return p
}

// pair reads the player's active seed pair: its server seed and the nonce
// of the last bet.
func (p *player) pair(t testing.TB) (server, client string, nonce int64) {
	t.Helper()
	err := p.db.QueryRow(context.Background(),
		`SELECT p.server_seed, p.client_seed, u.seed_nonce FROM seed_pairs p JOIN users u ON u.seed_pair = p.id
		 WHERE p.user_id = $1 AND p.revealed_at IS NULL`, p.id).
		Scan(&server, &client, &nonce)
	if err != nil {
		t.Fatal(err)
	}
	return server, client, nonce
}

// setBalance gives the player balance b with a matching ledger entry, as an
// administrator's adjustment would (which refuses balances above
// play.MaxBalance, so the test writes it itself).
func (p *player) setBalance(t testing.TB, b money.Amount) {
	t.Helper()
	_, err := p.db.Exec(context.Background(), `
		WITH old AS (SELECT balance FROM users WHERE id = $1),
		     u AS (UPDATE users SET balance = $2 WHERE id = $1 RETURNING balance)
		INSERT INTO ledger_entries (user_id, kind, amount, balance_after, note)
		SELECT $1, 'admin_adjustment', u.balance - old.balance, u.balance, 'security test' FROM u, old
		WHERE u.balance <> old.balance`, p.id, int64(b))
	if err != nil {
		t.Fatal(err)
	}
}

func mustOK(t testing.TB, what string, res apitest.Response) apitest.Response {
	t.Helper()
	if res.Status != 200 {
		t.Fatalf("%s: %d %s", what, res.Status, res.Raw)
	}
	return res
}

// refusal is one way to have a bet refused: setup puts the player in the
// state (after the client seed is set and the pair remembered), stake is
// the stake to bet.
type refusal struct {
	name     string
	stateful bool // only for the games that start a game
	stake    string
	setup    func(t testing.TB, p *player, g game)
}

var refusals = []refusal{
	{name: "bad amount", stake: "-5"},
	{name: "below the minimum", stake: "0.05"},
	{name: "fractions of a cent", stake: "1.005"},
	{name: "above the maximum", stake: "10000.01"},
	// The probe of the review that found the hole: a stake no balance covers,
	// whose payout overflowed only when the bet would win.
	{name: "overflowing stake", stake: "90000000000"},
	{name: "above the balance", stake: "5000"},
	{name: "balance above the limit", stake: "1", setup: func(t testing.TB, p *player, _ game) {
		p.setBalance(t, play.MaxBalance+1)
	}},
	{name: "session revoked", stake: "1", setup: func(t testing.TB, p *player, _ game) {
		mustOK(t, "logout", p.Do("POST", "/api/auth/logout", map[string]any{"refreshToken": p.RefreshToken}))
	}},
	{name: "a game of the kind running", stateful: true, stake: "1", setup: func(t testing.TB, p *player, g game) {
		mustOK(t, "first game", p.Do("POST", g.path, g.body("1")))
	}},
	// The player's own limits (issue 19), decided in the bet's statement
	// after the outcome was drawn: on the stake alone.
	{name: "over a daily loss limit", stake: "1", setup: func(t testing.TB, p *player, _ game) {
		mustOK(t, "loss limit", p.Do("POST", "/api/limits", map[string]any{"loss": map[string]any{"day": 0.5}}))
	}},
	{name: "over a monthly wager limit", stake: "2", setup: func(t testing.TB, p *player, _ game) {
		mustOK(t, "wager limit", p.Do("POST", "/api/limits", map[string]any{"wager": map[string]any{"month": 2}}))
	}},
	{name: "on a break", stake: "1", setup: func(t testing.TB, p *player, _ game) {
		mustOK(t, "break", p.Do("POST", "/api/limits/break", map[string]any{"days": 1}))
		// The same end for both probes, so the message (which names it) may be compared.
		if _, err := p.db.Exec(context.Background(), `UPDATE users SET break_until = '2099-01-01Z' WHERE id = $1`, p.id); err != nil {
			t.Fatal(err)
		}
	}},
	{name: "self-excluded", stake: "1", setup: func(t testing.TB, p *player, _ game) {
		mustOK(t, "exclusion", p.Do("POST", "/api/limits/self-exclusion", map[string]any{"duration": "permanent", "password": "secret123"}))
	}},
}

// probeRefusal runs one refusal for one game and one outcome and returns the
// answer, checking that it took nothing.
func probeRefusal(t *testing.T, env *apitest.Env, g game, r refusal, win bool) apitest.Response {
	t.Helper()
	p := newPlayer(t, env)
	server, _, nonce := p.pair(t)
	// The warm-up bet below takes nonce+1 and leaves the pair remembered by
	// the server, so the probe goes the one-round-trip way: drawn from
	// nonce+2 before Postgres is asked. For "a game of the kind running"
	// the setup's game takes nonce+2 and the probe draws nonce+3.
	target := nonce + 2
	if r.setup != nil && r.stateful {
		target++
	}
	var accept []func(string) bool
	if r.setup != nil && r.stateful && g.name == games.Blackjack {
		// The setup's game must stay running: no natural on its deal
		// (nonce+2), which would settle it at once.
		accept = append(accept, func(c string) bool {
			o, err := games.Replay(g.name, fair.NewStream(server, c, uint64(target-1)), g.params)
			return err == nil && o.Blackjack != nil && o.Blackjack.Result == ""
		})
	}
	client := seedFor(t, g, server, target, win, accept...)
	mustOK(t, "client seed", p.Do("POST", "/api/fair/client-seed", map[string]any{"clientSeed": client}))
	mustOK(t, "warm-up bet", p.Do("POST", "/api/games/dice", map[string]any{"betAmount": 0.1, "rollTarget": 50}))
	if r.setup != nil {
		r.setup(t, p, g)
	}
	_, _, before := p.pair(t)
	if before != target-1 {
		t.Fatalf("nonce %d before the probe, want %d", before, target-1)
	}
	res := p.Do("POST", g.path, g.body(r.stake))
	var after int64
	if err := p.db.QueryRow(context.Background(),
		`SELECT seed_nonce FROM users WHERE id = $1`, p.id).Scan(&after); err != nil {
		t.Fatal(err)
	}
	if after != before {
		t.Errorf("%s %s: the refused bet moved the nonce from %d to %d", g.name, r.name, before, after)
	}
	return res
}

// TestRefusalsDoNotDependOnTheOutcome is the differential test: for every
// game and every kind of refusal, the answer to a bet whose next outcome is
// the best of 200 client seeds equals the answer for the worst.
func TestRefusalsDoNotDependOnTheOutcome(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	for _, g := range allGames {
		stateful := g.name == games.Mines || g.name == games.Pump || g.name == games.Blackjack
		for _, r := range refusals {
			if r.stateful && !stateful {
				continue
			}
			t.Run(string(g.name)+"/"+r.name, func(t *testing.T) {
				winning, losing := probeRefusal(t, env, g, r, true), probeRefusal(t, env, g, r, false)
				if winning.Status == 200 || winning.Status >= 500 {
					t.Errorf("winning outcome: %d %s, want a clear refusal", winning.Status, winning.Raw)
				}
				if winning.Status != losing.Status || string(winning.Raw) != string(losing.Raw) {
					t.Errorf("the refusal depends on the outcome:\n  winning: %d %s\n  losing:  %d %s",
						winning.Status, winning.Raw, losing.Status, losing.Raw)
				}
			})
		}
	}
}

// TestRateLimitedBetsDoNotDependOnTheOutcome: a player over the bet rate is
// refused before anything is drawn, whatever the outcome would be.
func TestRateLimitedBetsDoNotDependOnTheOutcome(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t, apitest.WithConfig(func(c *settings.Config) {
		c.BetsPerUser = settings.Rate{N: 3, Period: time.Hour}
	}))
	for _, g := range allGames {
		answers := map[bool]apitest.Response{}
		for _, win := range []bool{true, false} {
			p := newPlayer(t, env)
			server, _, nonce := p.pair(t)
			mustOK(t, "client seed", p.Do("POST", "/api/fair/client-seed",
				map[string]any{"clientSeed": seedFor(t, g, server, nonce+4, win)}))
			for range 3 {
				mustOK(t, "bet", p.Do("POST", "/api/games/dice", map[string]any{"betAmount": 0.1, "rollTarget": 50}))
			}
			answers[win] = p.Do("POST", g.path, g.body("1"))
		}
		w, l := answers[true], answers[false]
		if w.Status != 429 || w.Status != l.Status || string(w.Raw) != string(l.Raw) {
			t.Errorf("%s over the rate: winning %d %s, losing %d %s", g.name, w.Status, w.Raw, l.Status, l.Raw)
		}
	}
}

// TestDoubleRefusedBeforeTheCard: a blackjack double the balance cannot
// cover is refused the same way whether the card it would deal wins or
// loses, and the hand goes on.
func TestDoubleRefusedBeforeTheCard(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	bj := allGames[5]
	answers := map[bool]apitest.Response{}
	for _, win := range []bool{true, false} {
		p := newPlayer(t, env)
		server, _, nonce := p.pair(t)
		// Candidates whose deal is not a natural, ranked by what a double pays.
		best, bestScore := "", money.Multiplier(-1)
		for i := range 400 {
			c := fmt.Sprintf("double-%d", i)
			o, err := games.Replay(games.Blackjack, fair.NewStream(server, c, uint64(nonce+1)), bj.params)
			if err != nil || o.Blackjack.Result != "" || o.Blackjack.Insurance != "" {
				continue
			}
			s := score(t, bj, server, c, nonce+1)
			if bestScore < 0 || (win && s > bestScore) || (!win && s < bestScore) {
				best, bestScore = c, s
			}
		}
		mustOK(t, "client seed", p.Do("POST", "/api/fair/client-seed", map[string]any{"clientSeed": best}))
		id := mustOK(t, "deal", p.Do("POST", bj.path, bj.body("600"))).Str("gameId")
		answers[win] = p.Do("POST", "/api/games/blackjack/double", map[string]any{"gameId": id})
		mustOK(t, "stand after the refused double", p.Do("POST", "/api/games/blackjack/stand", map[string]any{"gameId": id}))
	}
	w, l := answers[true], answers[false]
	if w.Status != 400 || w.Status != l.Status || string(w.Raw) != string(l.Raw) {
		t.Errorf("refused double: winning %d %s, losing %d %s", w.Status, w.Raw, l.Status, l.Raw)
	}
}

// TestDoubleOverALimitRefusedBeforeTheCard: a blackjack double past the
// player's wager limit is refused the same way whether the card it would
// deal wins or loses (the card is drawn before the statement that refuses
// it runs), and the hand goes on.
func TestDoubleOverALimitRefusedBeforeTheCard(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	bj := allGames[5]
	answers := map[bool]apitest.Response{}
	for _, win := range []bool{true, false} {
		p := newPlayer(t, env)
		mustOK(t, "wager limit", p.Do("POST", "/api/limits", map[string]any{"wager": map[string]any{"day": 15}}))
		server, _, nonce := p.pair(t)
		best, bestScore := "", money.Multiplier(-1)
		for i := range 400 {
			c := fmt.Sprintf("double-%d", i)
			o, err := games.Replay(games.Blackjack, fair.NewStream(server, c, uint64(nonce+1)), bj.params)
			if err != nil || o.Blackjack.Result != "" || o.Blackjack.Insurance != "" {
				continue
			}
			s := score(t, bj, server, c, nonce+1)
			if bestScore < 0 || (win && s > bestScore) || (!win && s < bestScore) {
				best, bestScore = c, s
			}
		}
		mustOK(t, "client seed", p.Do("POST", "/api/fair/client-seed", map[string]any{"clientSeed": best}))
		id := mustOK(t, "deal", p.Do("POST", bj.path, bj.body("10"))).Str("gameId")
		answers[win] = p.Do("POST", "/api/games/blackjack/double", map[string]any{"gameId": id})
		mustOK(t, "stand after the refused double", p.Do("POST", "/api/games/blackjack/stand", map[string]any{"gameId": id}))
	}
	w, l := answers[true], answers[false]
	if w.Status != 400 || w.Message() != "This bet would take your wagers past your daily wager limit of 15.00" ||
		w.Status != l.Status || string(w.Raw) != string(l.Raw) {
		t.Errorf("double over a limit: winning %d %s, losing %d %s", w.Status, w.Raw, l.Status, l.Raw)
	}
	env.LedgerClean(t)
}

// TestPayoutCappedNeverFails: a win above the maximum payout pays the
// maximum, is recorded and verifies, and the ledger stays exact.
func TestPayoutCappedNeverFails(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t, apitest.WithConfig(func(c *settings.Config) {
		c.MaxBet, c.MaxPayout = money.Dollars(100), money.Dollars(800)
	}))
	p := newPlayer(t, env)
	server, _, nonce := p.pair(t)
	dice := game{games.Dice, "/api/games/dice", func(s string) map[string]any {
		return map[string]any{"betAmount": json.Number(s), "rollTarget": 2}
	}, games.Params{Target: "2"}}
	// A roll under 2 wins 2% of the time: seedFor's 200 candidates hold no
	// win in 1.8% of runs (0.98^200), which failed the test now and then;
	// 2,000 leave it 10^-17.
	client := ""
	for i := 0; i < 2000 && client == ""; i++ {
		if c := fmt.Sprintf("cap-%d", i); score(t, dice, server, c, nonce+1) > 0 {
			client = c
		}
	}
	if client == "" {
		t.Fatal("no winning seed among the candidates")
	}
	mustOK(t, "client seed", p.Do("POST", "/api/fair/client-seed", map[string]any{"clientSeed": client}))
	res := mustOK(t, "bet", p.Do("POST", dice.path, dice.body("100"))) // 100 × 49.5 = 4950, capped at 800
	if got := fmt.Sprint(res.Get("winAmount")); got != "800" {
		t.Fatalf("win %s, want the maximum payout 800: %s", got, res.Raw)
	}
	if got := fmt.Sprint(res.Get("newBalance")); got != "1700" {
		t.Fatalf("balance %s, want 1000 − 100 + 800: %s", got, res.Raw)
	}
	env.LedgerClean(t)
}

// TestLimitsAreDocumentedRefusals: each limit refuses with its own message
// and changes nothing, and the defaults are the documented ones.
func TestLimitsAreDocumentedRefusals(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	p := newPlayer(t, env)
	for stake, want := range map[string]string{
		"0":        "Please enter a valid bet amount",
		"0.09":     "The minimum bet is 0.1",
		"0.105":    "Bet amounts have at most two decimal places",
		"10000.01": "The maximum bet is 10000",
		"1e30":     "Please enter a valid bet amount",
	} {
		for _, g := range allGames {
			res := p.Do("POST", g.path, g.body(stake))
			if res.Status != 400 || res.Message() != want {
				t.Errorf("%s stake %s: %d %s, want 400 %q", g.name, stake, res.Status, res.Raw, want)
			}
		}
	}
	if res := p.Do("GET", "/api/auth/user", nil); fmt.Sprint(res.Get("user.balance")) != "1000" {
		t.Errorf("refused bets changed the balance: %s", res.Raw)
	}
	if s, _, n := p.pair(t); n != 0 || s == "" {
		t.Errorf("refused bets moved the nonce to %d", n)
	}
	// The smallest and the largest bets are accepted.
	mustOK(t, "minimum bet", p.Do("POST", "/api/games/dice", map[string]any{"betAmount": 0.1, "rollTarget": 50}))
	p.setBalance(t, money.Dollars(20_000))
	mustOK(t, "maximum bet", p.Do("POST", "/api/games/dice", map[string]any{"betAmount": 10000, "rollTarget": 50}))
}
