package security_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fairplay/fairplay/internal/fair"
	"github.com/fairplay/fairplay/internal/games"
	"github.com/fairplay/fairplay/internal/postgres/pgtest"
	"github.com/fairplay/fairplay/test/apitest"
)

// Whether a game action moves money depends on what it drew: the last gem
// of a Mines game cashes out, a mine moves nothing; a blackjack hit that
// busts a split's second hand ends the round and pays the first, a small
// card moves nothing. So whether an action needs its player's row must not
// depend on it either. The batch of game actions once locked the player's
// row only for an action whose money moved, answered only such an action
// "busy" when the row was held, and saved the other at once; a busy action
// is saved afterwards in the caller's own request. A player who held their
// own row (another of their requests in its transaction) and gave up on a
// hit before its batch answered found the game unchanged exactly when the
// card was one that moved money, and could stand instead (found by a review
// playing a hostile player). Migration 00023 and the statements that save
// an action alone lock the player's row for every action.

// mineTile is a tile of the player's next Mines game with 24 mines: the one
// gem (gem) or a mine.
func mineTile(t *testing.T, p *player, gem bool) int {
	t.Helper()
	server, client, nonce := p.pair(t)
	for tile := range 25 {
		o, err := games.Replay(games.Mines, fair.NewStream(server, client, uint64(nonce+1)),
			games.Params{Mines: 24, Reveals: []int{tile}})
		if err != nil {
			t.Fatal(err)
		}
		if (o.Mines.Multiplier > 0) == gem {
			return tile
		}
	}
	t.Fatalf("no tile with gem %v", gem)
	return 0
}

// awaitIdleServer returns once the server serves no request (its in-flight
// gauge), polling for at most 10 seconds.
func awaitIdleServer(t *testing.T, env *apitest.Env) {
	t.Helper()
	awaitInFlight(t, env, 0)
}

// awaitInFlight returns once the server serves n requests (its in-flight
// gauge), polling for at most 10 seconds.
func awaitInFlight(t *testing.T, env *apitest.Env, n int) {
	t.Helper()
	want := fmt.Sprintf("fairplay_http_requests_in_flight %d", n)
	for deadline := time.Now().Add(10 * time.Second); ; {
		res, err := http.Get(env.MetricsURL + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		found := false
		sc := bufio.NewScanner(res.Body)
		for sc.Scan() {
			if sc.Text() == want {
				found = true
			}
		}
		res.Body.Close()
		if found {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server never served %d requests at once", n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// holdOwnRow locks the player's row in a transaction of its own, as another
// of the player's requests does while it runs, until the returned function
// commits it.
func holdOwnRow(t *testing.T, p *player) func() {
	t.Helper()
	tx, err := p.db.Begin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(context.Background(), `SELECT 1 FROM users WHERE id = $1 FOR NO KEY UPDATE`, p.id); err != nil {
		t.Fatal(err)
	}
	done := false
	release := func() {
		if !done {
			done = true
			if err := tx.Commit(context.Background()); err != nil {
				t.Error(err)
			}
		}
	}
	t.Cleanup(release)
	return release
}

// stallLedger locks ledger_entries against writes in a transaction of its
// own, so every batch statement of game actions (which may write to it)
// waits, until the transaction is committed (or rolled back at the test's
// end).
func stallLedger(t *testing.T, p *player) pgx.Tx {
	t.Helper()
	stall, err := p.db.Begin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stall.Rollback(context.Background()) })
	if _, err := stall.Exec(context.Background(), `LOCK TABLE ledger_entries IN SHARE MODE`); err != nil {
		t.Fatal(err)
	}
	return stall
}

// gameAfter is the game's status and the tiles it has revealed.
func gameAfter(t *testing.T, p *player, id string) string {
	t.Helper()
	var status string
	var reveals int
	if err := p.db.QueryRow(context.Background(), `SELECT status, coalesce(jsonb_array_length(params->'reveals'), 0)
		FROM bets WHERE id = $1`, id).Scan(&status, &reveals); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%s, %d revealed", status, reveals)
}

// TestActionSavedWhateverItDrew: a player holds their own row and gives up
// on a Mines reveal while its batch is held up; the reveal is saved all the
// same once the rows are free (the server saves what it has drawn whatever
// its caller does: postgres.drawnContext), whether the tile was the last
// gem or a mine.
func TestActionSavedWhateverItDrew(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	after := map[bool]string{}
	for _, gem := range []bool{true, false} {
		p := newPlayer(t, env)
		tile := mineTile(t, p, gem)
		id := mustOK(t, "start", p.Do("POST", "/api/games/mines/start", map[string]any{"betAmount": 1, "mineCount": 24})).Str("gameId")
		release := holdOwnRow(t, p)
		// The batch's statement waits for ledger_entries (it may write to
		// it) until the player has given up.
		stall := stallLedger(t, p)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			_, err := p.DoContext(ctx, "POST", "/api/games/mines/click", map[string]any{"gameId": id, "row": tile / 5, "col": tile % 5})
			done <- err
		}()
		pgtest.AwaitActivity(t, p.db, "the batch waiting for ledger_entries", true,
			`wait_event_type = 'Lock' AND query LIKE '%fairplay_play_actions%'`)
		cancel()
		if err := <-done; err == nil {
			t.Fatal("the reveal was answered while its batch waited")
		}
		if err := stall.Commit(context.Background()); err != nil {
			t.Fatal(err)
		}
		pgtest.AwaitActivity(t, p.db, "the batch done", false, `state = 'active' AND query LIKE '%fairplay_play_actions%'`)
		release()
		awaitIdleServer(t, env)
		after[gem] = gameAfter(t, p, id)
	}
	for gem, got := range after {
		if want := "settled, 1 revealed"; got != want {
			t.Errorf("a reveal given up while the player's row was held (gem %v): the game is %s, want %s", gem, got, want)
		}
	}
	env.LedgerClean(t)
}

// TestActionWaitsForThePlayerWhateverItDrew: while the player's own row is
// held, a Mines reveal is not answered, whether the tile is the last gem
// (money moves) or a mine (none does); once the row is free both are
// answered and saved.
func TestActionWaitsForThePlayerWhateverItDrew(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	for _, gem := range []bool{true, false} {
		p := newPlayer(t, env)
		tile := mineTile(t, p, gem)
		id := mustOK(t, "start", p.Do("POST", "/api/games/mines/start", map[string]any{"betAmount": 1, "mineCount": 24})).Str("gameId")
		release := holdOwnRow(t, p)
		done := make(chan apitest.Response, 1)
		go func() {
			res, _ := p.DoContext(context.Background(), "POST", "/api/games/mines/click",
				map[string]any{"gameId": id, "row": tile / 5, "col": tile % 5})
			done <- res
		}()
		pgtest.AwaitActivity(t, p.db, fmt.Sprintf("the reveal (gem %v) waiting for the player's row", gem), true,
			`wait_event_type = 'Lock'`)
		select {
		case res := <-done:
			t.Errorf("gem %v: answered %d %s while the player's row was held", gem, res.Status, res.Raw)
		default:
		}
		release()
		res := <-done
		if res.Status != 200 {
			t.Fatalf("gem %v: %d %s", gem, res.Status, res.Raw)
		}
		if got, want := gameAfter(t, p, id), "settled, 1 revealed"; gem && got != want {
			t.Errorf("the last gem: %s, want %s", got, want)
		}
		if got := gameAfter(t, p, id); !gem && !strings.HasPrefix(got, "settled") {
			t.Errorf("a mine: %s, want the game over", got)
		}
	}
	env.LedgerClean(t)
}

// TestDrawnActionSavedWhenThePlayerGivesUp: a Mines reveal waits for its
// batch behind another player's, which is held up; its player gives up
// (a hang-up here; a deadline the player sets to the nanosecond, through
// Connect-Timeout-Ms or grpc-timeout, is the same cancellation, timed
// finer). The reveal was drawn before it queued, and a draw's work differs
// by outcome (a mine settles the game, a gem does not), so a reveal given
// up and dropped would let a player keep the quick draws and throw the
// others back for free, learning a tile before it counts. It is saved,
// gem or mine. Found by a review playing a hostile player.
func TestDrawnActionSavedWhenThePlayerGivesUp(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	for _, gem := range []bool{true, false} {
		other, p := newPlayer(t, env), newPlayer(t, env)
		otherID := mustOK(t, "start", other.Do("POST", "/api/games/mines/start", map[string]any{"betAmount": 1, "mineCount": 1})).Str("gameId")
		tile := mineTile(t, p, gem)
		id := mustOK(t, "start", p.Do("POST", "/api/games/mines/start", map[string]any{"betAmount": 1, "mineCount": 24})).Str("gameId")
		// The other player's batch waits for ledger_entries: the next
		// batch, the reveal's, waits for it to end (one at a time).
		stall := stallLedger(t, p)
		otherDone := make(chan apitest.Response, 1)
		go func() {
			res, _ := other.DoContext(context.Background(), "POST", "/api/games/mines/click", map[string]any{"gameId": otherID, "row": 0, "col": 0})
			otherDone <- res
		}()
		pgtest.AwaitActivity(t, p.db, "the other player's batch waiting for ledger_entries", true,
			`wait_event_type = 'Lock' AND query LIKE '%fairplay_play_actions%'`)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			_, err := p.DoContext(ctx, "POST", "/api/games/mines/click", map[string]any{"gameId": id, "row": tile / 5, "col": tile % 5})
			done <- err
		}()
		// Both requests in the server; the reveal is drawn and queued
		// within microseconds of arriving.
		awaitInFlight(t, env, 2)
		time.Sleep(100 * time.Millisecond)
		cancel()
		if err := <-done; err == nil {
			t.Fatal("the reveal was answered while the batch before it waited")
		}
		if err := stall.Commit(context.Background()); err != nil {
			t.Fatal(err)
		}
		if res := <-otherDone; res.Status != 200 {
			t.Fatalf("the other player's reveal: %d %s", res.Status, res.Raw)
		}
		awaitIdleServer(t, env)
		if got, want := gameAfter(t, p, id), "settled, 1 revealed"; got != want {
			t.Errorf("a reveal (gem %v) given up in the queue: the game is %s, want %s (saved)", gem, got, want)
		}
	}
	env.LedgerClean(t)
}
