package security_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fairplay/fairplay/test/apitest"
)

// TestOnePlayersActionsCannotTakeThePool: a player fires many actions at
// one of their games at once, and the game's row is held (by another of
// their requests, a slow disk, another replica). A game action that names
// the moves its player saw locks the game's row in a transaction, on a
// connection of the server's pool, so each of them once waited for the row
// on a connection of its own: a few dozen requests took the whole pool
// (8 connections on two cores) and every other player's bet, sign-in and
// read waited behind them (found by a review playing a hostile player).
// One player's actions now go through a server one at a time (as their
// bets do), the others wait in the server without a connection, and past
// maxActionsWaiting they are refused at once; another player's bet is
// answered while the row stays held, and once it is free every action has a
// clear answer and the money is exact.
func TestOnePlayersActionsCannotTakeThePool(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	p, other := newPlayer(t, env), newPlayer(t, env)
	id := mustOK(t, "start", p.Do("POST", "/api/games/mines/start", map[string]any{"betAmount": 1, "mineCount": 3})).Str("gameId")

	// The test's own connection, outside the server's pool.
	conn, err := pgx.Connect(context.Background(), env.Config.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	hold, err := conn.Begin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := hold.Exec(context.Background(), `SELECT 1 FROM bets WHERE id = $1 FOR UPDATE`, id); err != nil {
		t.Fatal(err)
	}
	released := false
	t.Cleanup(func() {
		if !released {
			_ = hold.Rollback(context.Background())
		}
	})

	const n = 48 // above the pool and above maxActionsWaiting (32)
	answers := make([]apitest.Response, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			answers[i] = p.Do("POST", "/api/games/mines/click",
				map[string]any{"gameId": id, "row": i % 25 / 5, "col": i % 5, "moves": 0})
		})
	}
	// The first waits for the row in Postgres; the others queue (or are
	// refused) in the server.
	awaitLockWaiters(t, conn, 1)

	// Another player is served meanwhile, however many of p's actions wait.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := other.DoContext(ctx, "POST", "/api/games/dice", map[string]any{"betAmount": 1, "rollTarget": 50})
	if err != nil {
		t.Fatalf("another player's bet while one player's actions wait for their game: %v", err)
	}
	if res.Status != 200 {
		t.Fatalf("another player's bet: %d %s", res.Status, res.Raw)
	}
	if got := lockWaiters(t, conn); got != 1 {
		t.Errorf("%d of the player's actions wait for the game's row in Postgres, each on a connection of the pool; want 1", got)
	}

	if err := hold.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	released = true
	wg.Wait()
	counts := map[string]int{}
	for i, a := range answers {
		switch msg := a.Message(); {
		case a.Status == 200,
			a.Status == 409 && msg == "This game is already over",
			a.Status == 409 && msg == "This game has moved on. Reload it to continue.",
			a.Status == 429 && msg == "Too many requests, please try again later" && a.Header.Get("Retry-After") != "":
			counts[fmt.Sprintf("%d %s", a.Status, msg)]++
		default:
			t.Errorf("action %d: %d %s", i, a.Status, a.Raw)
		}
	}
	t.Logf("answers: %v", counts)
	if counts["200 "] != 1 {
		t.Errorf("%d actions with moves 0 succeeded, want exactly 1", counts["200 "])
	}
	if counts["429 Too many requests, please try again later"] == 0 {
		t.Errorf("none of %d actions at once was refused", n)
	}
	env.LedgerClean(t)
}

// lockWaiters is how many of the server's statements wait for a lock.
func lockWaiters(t *testing.T, conn *pgx.Conn) int {
	t.Helper()
	var n int
	if err := conn.QueryRow(context.Background(), `SELECT count(*) FROM pg_stat_activity
		WHERE datname = current_database() AND pid <> pg_backend_pid() AND wait_event_type = 'Lock'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// awaitLockWaiters returns once at least n statements wait for a lock,
// polling for at most 10 seconds.
func awaitLockWaiters(t *testing.T, conn *pgx.Conn, n int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); lockWaiters(t, conn) < n; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("never %d statements waiting for a lock", n)
		}
	}
}
