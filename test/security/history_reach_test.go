package security_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/fairplay/fairplay/internal/play"
	"github.com/fairplay/fairplay/test/apitest"
)

// TestHistoryReachesBackMaxHistoryBets: a player's history counts and pages
// through their newest play.MaxHistory bets only. Its count and the rows a
// far page skipped were once all of the player's bets: at 50 bets a second
// a player has millions by the next day, and every request for a far page
// held a connection of the pool for seconds, as often as the player asked
// (found by a review playing a hostile player). A player with more bets sees
// MaxHistory/limit pages, the last of them full, and an empty page past
// them, whatever page they ask for; the bets past the reach are still found
// by their id.
func TestHistoryReachesBackMaxHistoryBets(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	p := newPlayer(t, env)
	mustOK(t, "first bet", p.Do("POST", "/api/games/dice", map[string]any{"betAmount": 1, "rollTarget": 50}))
	const extra = 50
	// MaxHistory + extra older dice bets of the player's pair, written
	// directly (the ledger does not see them; LedgerClean is not called).
	var oldest string
	if err := p.db.QueryRow(context.Background(), `
		WITH pair AS (SELECT id, client_seed FROM seed_pairs WHERE user_id = $1 AND revealed_at IS NULL),
		ins AS (
			INSERT INTO bets (id, user_id, game, amount, multiplier, payout, seed_pair_id, client_seed, nonce, params, state, created_at, settled_at)
			SELECT gen_random_uuid(), $1, 'dice', 100000000, 0, 0, pair.id, pair.client_seed, 1000 + i, '{}', '{}',
			       now() - make_interval(secs => i), now() - make_interval(secs => i)
			FROM pair, generate_series(1, $2::int) i
			RETURNING id, created_at)
		SELECT id::text FROM ins ORDER BY created_at LIMIT 1`, p.id, play.MaxHistory+extra).Scan(&oldest); err != nil {
		t.Fatal(err)
	}
	pages := play.MaxHistory / 100
	for _, c := range []struct {
		query     string
		bets      int
		lastPages int
	}{
		{"page=1&limit=100", 100, pages},
		{fmt.Sprintf("page=%d&limit=100", pages), 100, pages},
		{fmt.Sprintf("page=%d&limit=100", pages+1), 0, pages},
		{"page=2147483647&limit=100", 0, pages},
		{"page=2147483647&limit=1", 0, play.MaxHistory},
		{fmt.Sprintf("page=%d&limit=7", play.MaxHistory/7+1), play.MaxHistory % 7, play.MaxHistory/7 + 1},
		{"page=1&limit=100&game=dice", 100, pages},
		{fmt.Sprintf("page=%d&limit=100&game=dice", pages+1), 0, pages},
		{"page=1&limit=100&game=keno", 0, 1},
	} {
		res := mustOK(t, c.query, p.Do("GET", "/api/games/bets?"+c.query, nil))
		bets, _ := res.Body["bets"].([]any)
		if len(bets) != c.bets || fmt.Sprint(res.Body["totalPages"]) != fmt.Sprint(c.lastPages) {
			t.Errorf("%s: %d bets of %v pages, want %d of %d", c.query, len(bets), res.Body["totalPages"], c.bets, c.lastPages)
		}
	}
	// The oldest, far past the reach, is still the player's to see.
	if res := p.Do("GET", "/api/games/bets/"+oldest, nil); res.Status != 200 || res.Str("bet._id") != oldest {
		t.Errorf("a bet past the history's reach: %d %s", res.Status, res.Raw)
	}
}
