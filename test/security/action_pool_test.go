package security_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	fairplayv1 "github.com/fairplay/fairplay/internal/gen/fairplay/v1"
	"github.com/fairplay/fairplay/internal/routes"
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
// 64 of a session's calls (rpc.linesOf) they are refused at once; another
// player's bet is answered while the row stays held, and once it is free
// every action has a clear answer and the money is exact.
func TestOnePlayersActionsCannotTakeThePool(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	p, other := newPlayer(t, env), newPlayer(t, env)
	id := mustOK(t, "start", p.Do("POST", "/api/games/mines/start", map[string]any{"betAmount": 1, "mineCount": 3})).Str("gameId")

	// The test's own connections, outside the server's pool: one holds the
	// row, one watches (pg_stat_activity is read once per transaction).
	conn, watch := ownConn(t, env), ownConn(t, env)
	hold := holdRow(t, conn, "bets", id)

	const n = 80 // above the pool and above a session's limit (64)
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
	awaitLockWaiters(t, watch, 1)

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
	if got := lockWaiters(t, watch); got != 1 {
		t.Errorf("%d of the player's actions wait for the game's row in Postgres, each on a connection of the pool; want 1", got)
	}

	if err := hold.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
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

// TestNoPlayerTakesThePool: for every route a signed-in player may call
// (read off the protos), a player whose own row is held (by another of
// their requests, another replica, a slow disk) sends its request twelve
// times at once. Each such request of a player once waited for the row on
// a connection of the server's pool (a top-up, a seed rotation, a client
// seed, limits, preferences...), so a few of them took all eight and every
// other player's bet waited (found by a review playing a hostile player).
// A server now runs two of a player's calls at a time (rpc.linesOf): another
// player's bet is answered meanwhile, at most two of the player's
// statements wait for a lock, and once the row is free every request has
// an answer that is not a server error.
func TestNoPlayerTakesThePool(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	other := newPlayer(t, env)
	conn, watch := ownConn(t, env), ownConn(t, env)
	byProcedure := map[string]apiRoute{}
	for _, r := range apiRoutes {
		byProcedure[r.procedure] = r
	}
	const n = 12 // above the pool (8), below a session's limit (64)
	tried := 0
	for _, rt := range routes.MustAll() {
		if rt.Streaming() || rt.Access != fairplayv1.Access_ACCESS_USER && rt.Access != fairplayv1.Access_ACCESS_PLAYER {
			continue
		}
		r := byProcedure[string(rt.Procedure.FullName())]
		t.Run(r.procedure, func(t *testing.T) {
			tried++
			p := newPlayer(t, env)
			sessions := p.Do("GET", "/api/auth/sessions", nil).Get("sessions").([]any)
			w := &hostileWorld{env: env, player: p.Client, playerID: p.id, sessionID: sessions[0].(map[string]any)["_id"].(string)}
			path, body := r.request(r.base(w))
			hold := holdRow(t, conn, "users", p.id)
			answers := make([]apitest.Response, n)
			var answered atomic.Int32
			var wg sync.WaitGroup
			for i := range n {
				wg.Go(func() {
					if body == nil {
						answers[i] = p.Do(r.method, path, nil)
					} else {
						answers[i] = p.Do(r.method, path, body)
					}
					answered.Add(1)
				})
			}
			// Every request answered or in the server (the in-flight gauge).
			for deadline := time.Now().Add(10 * time.Second); inFlight(t, env)+int(answered.Load()) < n; time.Sleep(2 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatal("the requests never reached the server")
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			res, err := other.DoContext(ctx, "POST", "/api/games/dice", map[string]any{"betAmount": 1, "rollTarget": 50})
			if err != nil {
				t.Fatalf("another player's bet while %d of %s wait for the player's row: %v", n, path, err)
			}
			if res.Status != 200 {
				t.Fatalf("another player's bet: %d %s", res.Status, res.Raw)
			}
			if got := lockWaiters(t, watch); got > 2 {
				t.Errorf("%d of the player's statements wait for a lock, each on a connection of the pool; want at most 2", got)
			}
			if err := hold.Commit(context.Background()); err != nil {
				t.Fatal(err)
			}
			wg.Wait()
			for i, a := range answers {
				if a.Status >= 500 || a.Status == 0 {
					t.Errorf("request %d: %d %s", i, a.Status, a.Raw)
				}
			}
		})
	}
	if tried < 20 {
		t.Fatalf("only %d routes of a signed-in player", tried)
	}
	env.LedgerClean(t)
}

// TestAnotherSessionCannotFillTheLine: whoever holds another session's
// token (stolen; or revoked, for an ACCESS_PLAYER call checks only the
// token before its line) floods the player's line while their row is held.
// A server keeps at most 64 of one session's calls (half the player's 128),
// so the owner's own call still gets a place: it waits its turn and is
// answered once the row is free, and it ends the other session (found by
// a review playing a hostile player).
func TestAnotherSessionCannotFillTheLine(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	owner := newPlayer(t, env)
	thief := env.Client()
	thief.Login(owner.name, "secret123")
	conn, watch := ownConn(t, env), ownConn(t, env)
	hold := holdRow(t, conn, "users", owner.id)
	const flood = 160 // above the player's 128
	statuses := make([]int, flood)
	var answered atomic.Int32
	var wg sync.WaitGroup
	for i := range flood {
		wg.Go(func() {
			statuses[i] = thief.Do("POST", "/api/games/dice", map[string]any{"betAmount": 1, "rollTarget": 50}).Status
			answered.Add(1)
		})
	}
	awaitLockWaiters(t, watch, 1)
	// The flood is in: each of its calls in the server (the session's 64 in
	// the line) or refused.
	for deadline := time.Now().Add(10 * time.Second); inFlight(t, env)+int(answered.Load()) < flood; time.Sleep(2 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the flood never settled: %d answered, %d in flight", answered.Load(), inFlight(t, env))
		}
	}
	mine := make(chan apitest.Response, 1)
	go func() {
		mine <- owner.Do("POST", "/api/auth/revoke-other-sessions", map[string]any{"currentRefreshToken": owner.RefreshToken})
	}()
	for deadline := time.Now().Add(10 * time.Second); inFlight(t, env) < 65; time.Sleep(2 * time.Millisecond) {
		select {
		case res := <-mine:
			t.Fatalf("the owner's call was answered while the line was full: %d %s", res.Status, res.Raw)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the owner's call never waited in the line (%d in flight)", inFlight(t, env))
		}
	}
	if err := hold.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	res := <-mine
	if res.Status != 200 {
		t.Fatalf("the owner's call behind another session's flood: %d %s", res.Status, res.Raw)
	}
	wg.Wait()
	counts := map[int]int{}
	for _, s := range statuses {
		counts[s]++
	}
	// The line runs two of the player's calls at a time, so the owner's
	// call may run beside the last of the other session's and end that
	// session before it is checked: that one call is then refused 401.
	if counts[429] != flood-64 || counts[200]+counts[401] != 64 || counts[401] > 1 {
		t.Errorf("the other session's calls: %v, want 64 answered (200, or 401 for at most one run beside the owner's) "+
			"and %d refused 429", counts, flood-64)
	}
	if got := thief.Do("GET", "/api/auth/user", nil); got.Status != 401 {
		t.Errorf("the other session after the owner ended it: %d %s", got.Status, got.Raw)
	}
	env.LedgerClean(t)
}

// inFlight is how many requests the server serves (its in-flight gauge).
func inFlight(t *testing.T, env *apitest.Env) int {
	t.Helper()
	res, err := http.Get(env.MetricsURL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "fairplay_http_requests_in_flight "); ok {
			n, err := strconv.Atoi(v)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("no fairplay_http_requests_in_flight")
	return 0
}

// ownConn opens a connection of the test's own to the server's database.
func ownConn(t *testing.T, env *apitest.Env) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), env.Config.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	return conn
}

// holdRow locks the row of table with id FOR UPDATE in a transaction on
// conn, until the caller commits it (or the test ends).
func holdRow(t *testing.T, conn *pgx.Conn, table, id string) pgx.Tx {
	t.Helper()
	hold, err := conn.Begin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = hold.Rollback(context.Background()) })
	if _, err := hold.Exec(context.Background(), `SELECT 1 FROM `+pgx.Identifier{table}.Sanitize()+` WHERE id = $1 FOR UPDATE`, id); err != nil {
		t.Fatal(err)
	}
	return hold
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
			t.Fatalf("never %d statements waiting for a lock; the server's statements:\n%s", n, activity(t, conn))
		}
	}
}

// activity lists the server's statements in the test's database: their
// state, what they wait for and their text.
func activity(t *testing.T, conn *pgx.Conn) string {
	t.Helper()
	rows, err := conn.Query(context.Background(), `SELECT state, coalesce(wait_event_type, '') || ':' || coalesce(wait_event, ''),
		left(regexp_replace(query, '\s+', ' ', 'g'), 120)
		FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for rows.Next() {
		var state, wait, query string
		if err := rows.Scan(&state, &wait, &query); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s %s %s\n", state, wait, query)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestUserCallsQueryNothingBeforeTheirTurn: a signed-in player's flood of
// calls whose session is looked up in Postgres (ACCESS_USER: the sessions
// list, the account, limits...) takes at most the player's two places of
// the line to the database. The session was looked up before the line, so
// every call of a flood, even those the line then refused 429, cost a query
// on the shared pool: one player's 400 loops answered 13,517 429s, each
// after a query, and another player's bet went from ~1 ms to 27–48 ms
// (found by a review playing a hostile player). Admin calls, whose caller's
// role is read in Postgres before a player is refused 403, passed without a
// line, so a player's flood of them did the same (review of the admin API).
// Here the sessions table is held, so each lookup waits where it can be
// counted.
func TestUserCallsQueryNothingBeforeTheirTurn(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		path   string
		answer int // besides 429
	}{
		{"/api/auth/sessions", 200},
		{"/api/auth/stats/users", 403},
		{"/fairplay.v1.AdminService/GetUserStats?connect=v1&encoding=json&message=%7B%7D", 403},
	} {
		t.Run(tc.path, func(t *testing.T) {
			t.Parallel()
			floodOneLine(t, tc.path, tc.answer)
		})
	}
}

func floodOneLine(t *testing.T, path string, answer int) {
	env := apitest.Start(t)
	p := newPlayer(t, env)
	conn, watch := ownConn(t, env), ownConn(t, env)
	hold, err := conn.Begin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = hold.Rollback(context.Background()) })
	if _, err := hold.Exec(context.Background(), `LOCK TABLE sessions IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	const n = 40 // above the pool (8), below a session's limit (64)
	statuses := make([]int, n)
	var answered atomic.Int32
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			statuses[i] = p.Do("GET", path, nil).Status
			answered.Add(1)
		})
	}
	awaitLockWaiters(t, watch, 1)
	for deadline := time.Now().Add(10 * time.Second); inFlight(t, env)+int(answered.Load()) < n; time.Sleep(2 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the flood never reached the server: %d answered, %d in flight", answered.Load(), inFlight(t, env))
		}
	}
	// Every call has had the time to ask Postgres, if it could.
	most := 0
	for range 20 {
		most = max(most, lockWaiters(t, watch))
		time.Sleep(10 * time.Millisecond)
	}
	if most > 2 {
		t.Errorf("%d of the player's session lookups waited in Postgres at once, each on a connection of the pool; "+
			"want at most the line's 2:\n%s", most, activity(t, watch))
	}
	if err := hold.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	for i, s := range statuses {
		if s != answer && s != 429 {
			t.Errorf("call %d: %d", i, s)
		}
	}
}
