package security_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/fairplay/fairplay/test/apitest"
)

// clearConflicts are the 409s a race between one player's requests may
// answer: a rotation while a game runs, a second game of a kind, and a
// request that lost every retry to the pair's changes.
var clearConflicts = map[string]bool{
	"Finish your running game before rotating the seed pair":       true,
	"You already have a game in progress":                          true,
	"Your seed pair changed at the same moment. Please try again.": true,
}

// raceAnswer is one answer of a race's request: what was asked, its status
// and body.
type raceAnswer struct {
	what   string
	status int
	body   string
}

// checkRaceAnswers fails the test for every answer but a 200 and the 409s of
// clearConflicts, and logs how many of each status each request got.
func checkRaceAnswers(t *testing.T, answers <-chan raceAnswer) {
	t.Helper()
	counts := map[string]map[int]int{}
	for a := range answers {
		if counts[a.what] == nil {
			counts[a.what] = map[int]int{}
		}
		counts[a.what][a.status]++
		var msg struct{ Message string }
		_ = json.Unmarshal([]byte(a.body), &msg)
		if a.status != 200 && (a.status != 409 || !clearConflicts[msg.Message]) {
			t.Errorf("%s: %d %s", a.what, a.status, a.body)
		}
	}
	t.Logf("answers by request and status: %v", counts)
}

// TestConcurrentSeedChangesNeverFail: one player's seed pair rotated, its
// client seed changed, bets placed and games started and finished, all at
// once from several browsers and through two replicas, never answers 500:
// the loser of a race is retried on the new pair or gets a clear 409, and
// the ledger and every bet stay exact.
func TestConcurrentSeedChangesNeverFail(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	replica := env.Replica()
	p := newPlayer(t, env)
	p.setBalance(t, 100_000*1e8)
	const rounds = 40
	answers := make(chan raceAnswer, 16*rounds)
	// What each rotation revealed: the old pair's hash and the nonce it
	// ended at.
	var revealedMu sync.Mutex
	revealed := map[string]string{}
	var wg sync.WaitGroup
	worker := func(name string, c *apitest.Client, do func(c *apitest.Client, i int) apitest.Response) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range rounds {
				res := do(c, i)
				answers <- raceAnswer{name, res.Status, string(res.Raw)}
			}
		}()
	}
	viaReplica := p.Via(replica)
	for _, c := range []*apitest.Client{p.Client, viaReplica} {
		worker("rotate", c, func(c *apitest.Client, i int) apitest.Response {
			res := c.Do("POST", "/api/fair/rotate", map[string]any{})
			if res.Status == 200 {
				revealedMu.Lock()
				revealed[res.Str("previousServerSeedHash")] = fmt.Sprint(res.Get("previousNonce"))
				revealedMu.Unlock()
			}
			return res
		})
		worker("client seed", c, func(c *apitest.Client, i int) apitest.Response {
			return c.Do("POST", "/api/fair/client-seed", map[string]any{"clientSeed": fmt.Sprintf("seed-%d", i)})
		})
		worker("dice", c, func(c *apitest.Client, i int) apitest.Response {
			return c.Do("POST", "/api/games/dice", map[string]any{"betAmount": 1, "rollTarget": 50})
		})
		worker("seeds", c, func(c *apitest.Client, i int) apitest.Response {
			return c.Do("GET", "/api/fair/seeds", nil)
		})
	}
	// Games of each stateful kind started and played to their end.
	worker("mines", p.Client, func(c *apitest.Client, i int) apitest.Response {
		res := c.Do("POST", "/api/games/mines/start", map[string]any{"betAmount": 1, "mineCount": 3})
		if res.Status == 200 {
			if r := c.Do("POST", "/api/games/mines/click", map[string]any{"gameId": res.Str("gameId"), "row": 0, "col": 0}); r.Status != 200 || r.Get("hitMine") == true {
				return r
			}
			return c.Do("POST", "/api/games/mines/cashout", map[string]any{"gameId": res.Str("gameId")})
		}
		return res
	})
	worker("blackjack", viaReplica, func(c *apitest.Client, i int) apitest.Response {
		res := c.Do("POST", "/api/games/blackjack/start", map[string]any{"betAmount": 1})
		id := res.Str("gameId")
		if res.Status == 200 && res.Get("hands.insurance") == "offered" {
			res = c.Do("POST", "/api/games/blackjack/insurance", map[string]any{"gameId": id, "accept": false})
		}
		if res.Status == 200 && res.Get("gameOver") != true {
			return c.Do("POST", "/api/games/blackjack/stand", map[string]any{"gameId": id})
		}
		return res
	})
	wg.Wait()
	close(answers)
	checkRaceAnswers(t, answers)
	env.LedgerClean(t)
	// Every pair's bets are its nonces 1..n, each once, where n is what the
	// rotation revealed as its last nonce (a bet placed on a pair after its
	// reveal, or a reveal that missed a bet, would break it), and the
	// active pair's n is the one the seeds panel shows.
	ctx := context.Background()
	rows, err := env.App.Postgres.Query(ctx, `
		SELECT p.server_seed_hash, p.revealed_at IS NOT NULL, p.nonce, count(b.id), coalesce(max(b.nonce), 0),
		       count(DISTINCT b.nonce)
		FROM seed_pairs p LEFT JOIN bets b ON b.seed_pair_id = p.id
		WHERE p.user_id = $1 GROUP BY p.id`, p.id)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	pairs := 0
	for rows.Next() {
		var hash string
		var gone bool
		var kept, n, top, distinct int64
		if err := rows.Scan(&hash, &gone, &kept, &n, &top, &distinct); err != nil {
			t.Fatal(err)
		}
		pairs++
		if n != top || n != distinct {
			t.Errorf("pair %s: %d bets, nonces up to %d, %d different", hash, n, top, distinct)
		}
		want := fmt.Sprint(top)
		if !gone {
			seeds := p.Do("GET", "/api/fair/seeds", nil)
			if seeds.Str("seeds.serverSeedHash") != hash {
				t.Errorf("active pair %s is not the one the seeds panel shows: %s", hash, seeds.Raw)
			}
			if got := fmt.Sprint(seeds.Get("seeds.nonce")); got != want {
				t.Errorf("active pair %s: the seeds panel shows nonce %s, its bets end at %s", hash, got, want)
			}
			// The pair's own row is not the active pair's nonce: bets move it
			// on in the player's row (migrations 00028 and 00029). It keeps
			// the nonce of the pair's last new client seed, never past its bets.
			if kept > top {
				t.Errorf("active pair %s: its row's nonce %d is past its bets' %d", hash, kept, top)
			}
			continue
		}
		if got, ok := revealed[hash]; ok && got != want {
			t.Errorf("rotation revealed pair %s as ending at nonce %s, its bets end at %s", hash, got, want)
		}
		if kept != top {
			t.Errorf("revealed pair %s keeps nonce %d, its bets end at %d", hash, kept, top)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d pairs, %d rotations answered", pairs, len(revealed))
	if len(revealed) == 0 || pairs != len(revealed)+1 {
		t.Errorf("%d pairs after %d rotations", pairs, len(revealed))
	}
}

// TestFirstSeedPairRacesNeverFail: a new player's first requests, sent at
// once, race to create the player's first seed pair (GET /api/fair/seeds,
// a bet) against the changes that lock the player's row and then create it
// if it is missing (a new client seed, a rotation). The pair's trigger
// writes the player's row (migration 00028), so an insert that did not take
// the row first deadlocked with a change holding it: one of them answered
// 500 after Postgres' deadlock timeout.
func TestFirstSeedPairRacesNeverFail(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	const newcomers = 6
	answers := make(chan raceAnswer, newcomers*8)
	var wg sync.WaitGroup
	for i := range newcomers {
		c := env.Client()
		c.Register(fmt.Sprintf("newcomer%d", i))
		start := make(chan struct{})
		for _, r := range []struct {
			what, method, path string
			body               any
		}{
			{"seeds", "GET", "/api/fair/seeds", nil},
			{"seeds", "GET", "/api/fair/seeds", nil},
			{"client seed", "POST", "/api/fair/client-seed", map[string]any{"clientSeed": "mine"}},
			{"client seed", "POST", "/api/fair/client-seed", map[string]any{"clientSeed": "also-mine"}},
			{"rotate", "POST", "/api/fair/rotate", map[string]any{}},
			{"dice", "POST", "/api/games/dice", map[string]any{"betAmount": 1, "rollTarget": 50}},
		} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				res := c.Do(r.method, r.path, r.body)
				answers <- raceAnswer{r.what, res.Status, string(res.Raw)}
			}()
		}
		close(start)
	}
	wg.Wait()
	close(answers)
	checkRaceAnswers(t, answers)
	env.LedgerClean(t)
	// Each newcomer has one active pair, the one the player's row holds,
	// with the nonce its bets reached.
	var wrong int
	if err := env.App.Postgres.QueryRow(context.Background(), `
		SELECT count(*) FROM users u
		WHERE u.username LIKE 'newcomer%' AND (
			(SELECT count(*) FROM seed_pairs p WHERE p.user_id = u.id AND p.revealed_at IS NULL) <> 1
			OR u.seed_pair IS DISTINCT FROM (SELECT p.id FROM seed_pairs p WHERE p.user_id = u.id AND p.revealed_at IS NULL)
			OR u.seed_nonce IS DISTINCT FROM (SELECT count(*) FROM bets b WHERE b.seed_pair_id = u.seed_pair))`).Scan(&wrong); err != nil {
		t.Fatal(err)
	}
	if wrong != 0 {
		t.Errorf("%d newcomers whose row does not hold their one active pair and its nonce", wrong)
	}
}
