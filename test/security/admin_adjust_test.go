package security_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/fairplay/fairplay/test/apitest"
)

// twoAdmins makes the administrators boss and chief and signs each in; it
// returns their clients and chief's id.
func twoAdmins(t *testing.T, env *apitest.Env) (boss, chief *apitest.Client, chiefID string) {
	t.Helper()
	for _, name := range []string{"boss", "chief"} {
		if _, _, err := env.App.Accounts.CreateAdmin(t.Context(), name, name+"@example.com", "secret123", false); err != nil {
			t.Fatal(err)
		}
	}
	boss, chief = env.Client(), env.Client()
	boss.Login("boss", "secret123")
	chiefID = chief.Login("chief", "secret123").Str("user._id")
	return boss, chief, chiefID
}

// TestRetriedBalanceAdjustmentIsAppliedOnce: a balance adjustment retried
// after its answer was lost (a proxy's timeout, the button pressed again)
// credited twice; only the audit log showed it. With the request id the
// dashboard now sends, the same administrator's second request is answered
// with the account and changes nothing, a different adjustment under the
// same id is refused, and many copies at once apply once. Found by a
// review.
func TestRetriedBalanceAdjustmentIsAppliedOnce(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ctx := t.Context()
	boss, chief, _ := twoAdmins(t, env)
	player, other := env.Client(), env.Client()
	playerID := player.Register("player").Str("user._id")
	otherID := other.Register("other").Str("user._id")
	count := func(sql string, args ...any) int64 {
		t.Helper()
		var n int64
		if err := env.App.Postgres.QueryRow(ctx, sql, args...).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	entries := func() int64 {
		t.Helper()
		return count(`SELECT count(*) FROM ledger_entries WHERE kind = 'admin_adjustment' AND user_id = $1`, playerID)
	}
	adjustWith := func(c *apitest.Client, user, amount, request, note string) apitest.Response {
		t.Helper()
		body := map[string]any{"amount": amount}
		if request != "" {
			body["requestId"] = request
		}
		if note != "" {
			body["note"] = note
		}
		return c.Do("PATCH", "/api/auth/users/"+user+"/balance", body)
	}
	adjust := func(c *apitest.Client, user, amount, request string) apitest.Response {
		t.Helper()
		return adjustWith(c, user, amount, request, "")
	}
	want := func(res apitest.Response, status int, text string) {
		t.Helper()
		got := res.Message()
		if status == 200 {
			got = fmt.Sprint(res.Get("user.balance"))
		}
		if res.Status != status || got != text {
			t.Errorf("%d %s, want %d %s", res.Status, res.Raw, status, text)
		}
	}

	id := uuid.NewString()
	want(adjust(boss, playerID, "25", id), 200, "1025")
	want(adjust(boss, playerID, "25", id), 200, "1025")
	want(adjust(boss, playerID, "25.00", id), 200, "1025")      // the same amount, written otherwise
	want(adjust(boss, playerID, "25", " "+id+" "), 200, "1025") // the id with spaces around it
	if n := entries(); n != 1 {
		t.Errorf("%d adjustments after a retry, want 1", n)
	}
	// The same id for another adjustment: refused, changing nothing.
	want(adjust(boss, playerID, "30", id), 409, "This request id was already used for another adjustment")
	want(adjust(boss, otherID, "25", id), 409, "This request id was already used for another adjustment")
	want(adjustWith(boss, playerID, "25", id, "bonus"), 409, "This request id was already used for another adjustment")
	want(adjust(boss, playerID, "25", "not-a-uuid"), 400, "Invalid request id")
	// Ids are each administrator's own.
	want(adjust(chief, playerID, "25", id), 200, "1050")
	// Many copies at once: one applies, every one is answered with it.
	id = uuid.NewString()
	var wg sync.WaitGroup
	answers := make(chan apitest.Response, 12)
	for range 12 {
		wg.Go(func() { answers <- adjust(boss, playerID, "-0.5", id) })
	}
	wg.Wait()
	close(answers)
	for res := range answers {
		want(res, 200, "1049.5")
	}
	// Without an id every request is an adjustment of its own.
	want(adjust(boss, playerID, "1", ""), 200, "1050.5")
	want(adjust(boss, playerID, "1", ""), 200, "1051.5")
	if n := entries(); n != 5 {
		t.Errorf("%d adjustments, want 5", n)
	}
	if n := count(`SELECT count(*) FROM admin_audit WHERE action = 'adjust_balance'`); n != 5 {
		t.Errorf("%d audit rows of adjustments, want 5", n)
	}
	// One id sent for two users at once: each request locks its own user's
	// row, so both may miss the other's row; the unique index then refuses
	// the second (409, not a 500), and one applies.
	for i := range 10 {
		id := uuid.NewString()
		var wg sync.WaitGroup
		var a, b apitest.Response
		wg.Go(func() { a = adjust(boss, playerID, "0.01", id) })
		wg.Go(func() { b = adjust(boss, otherID, "0.01", id) })
		wg.Wait()
		if a.Status+b.Status != 200+409 {
			t.Errorf("round %d: %d %s and %d %s, want one 200 and one 409", i, a.Status, a.Raw, b.Status, b.Raw)
		}
	}
	if n := count(`SELECT count(*) FROM admin_audit WHERE action = 'adjust_balance'`); n != 15 {
		t.Errorf("%d audit rows of adjustments after the rounds, want 15", n)
	}
	var total int64
	for _, c := range []*apitest.Client{player, other} {
		var b float64
		if _, err := fmt.Sscan(fmt.Sprint(c.Do("GET", "/api/auth/user", nil).Get("user.balance")), &b); err != nil {
			t.Fatal(err)
		}
		total += int64(b*100 + 0.5)
	}
	if total != (1051.5+1000+0.1)*100 {
		t.Errorf("the two players' balances add to %d cents, want %d", total, int64((1051.5+1000+0.1)*100))
	}
	// A repeat of an adjustment to a user deleted since: 404, nothing changes.
	id = uuid.NewString()
	if res := adjust(boss, otherID, "1", id); res.Status != 200 {
		t.Fatalf("adjust: %d %s", res.Status, res.Raw)
	}
	if res := boss.Do("DELETE", "/api/auth/users/"+otherID, nil); res.Status != 200 {
		t.Fatalf("delete: %d %s", res.Status, res.Raw)
	}
	want(adjust(boss, otherID, "1", id), 404, "User not found")
	env.LedgerClean(t)
}

// TestDeletedAdminCannotFinishAnAdjustment: an administrator's balance
// adjustment passes the access check before its transaction, then waits
// for the player's row. One queued there while another administrator
// deleted its author went through after the deletion: money moved in the
// name of an administrator who no longer was one. Now an adjustment locks
// the administrators first, as a deletion does, and requires its author
// among them: it either commits before the deletion or is refused with
// 403 and moves nothing. Found by a review.
func TestDeletedAdminCannotFinishAnAdjustment(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ctx := t.Context()
	boss, chief, chiefID := twoAdmins(t, env)
	player := env.Client()
	playerID := player.Register("player").Str("user._id")

	conn := ownConn(t, env)
	hold := holdRow(t, conn, "users", playerID)
	type answer struct {
		res apitest.Response
		err error
	}
	adjusted, deleted := make(chan answer, 1), make(chan answer, 1)
	go func() {
		res, err := chief.DoContext(ctx, "PATCH", "/api/auth/users/"+playerID+"/balance", map[string]any{"amount": "100"})
		adjusted <- answer{res, err}
	}()
	watch := ownConn(t, env)
	awaitLockWaiters(t, watch, 1)
	go func() {
		res, err := boss.DoContext(ctx, "DELETE", "/api/auth/users/"+chiefID, nil)
		deleted <- answer{res, err}
	}()
	// The deletion either finishes (nothing holds the administrators) or
	// waits for the adjustment that holds them.
	var del *answer
	for deadline := time.Now().Add(10 * time.Second); del == nil && lockWaiters(t, watch) < 2; time.Sleep(5 * time.Millisecond) {
		select {
		case a := <-deleted:
			del = &a
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the deletion neither finished nor waited:\n%s", activity(t, watch))
		}
	}
	if err := hold.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	adj := <-adjusted
	if del == nil {
		a := <-deleted
		del = &a
	}
	if del.err != nil || del.res.Status != 200 {
		t.Fatalf("delete chief: %v %d %s", del.err, del.res.Status, del.res.Raw)
	}
	if adj.err != nil {
		t.Fatal(adj.err)
	}
	var adjustments int
	var adjustedAt, deletedAt int64
	if err := env.App.Postgres.QueryRow(ctx, `SELECT count(*) FILTER (WHERE action = 'adjust_balance'),
		coalesce(max(id) FILTER (WHERE action = 'adjust_balance'), 0), coalesce(max(id) FILTER (WHERE action = 'delete_user'), 0)
		FROM admin_audit`).Scan(&adjustments, &adjustedAt, &deletedAt); err != nil {
		t.Fatal(err)
	}
	switch adj.res.Status {
	case 200:
		if adjustments != 1 || adjustedAt > deletedAt {
			t.Fatalf("chief's adjustment went through after chief's deletion (audit %d, deletion %d)", adjustedAt, deletedAt)
		}
	case 403:
		if adjustments != 0 || adj.res.Message() != "Admin access required" {
			t.Fatalf("refused adjustment: %d audit rows, %s", adjustments, adj.res.Raw)
		}
	default:
		t.Fatalf("chief's adjustment: %d %s", adj.res.Status, adj.res.Raw)
	}
	env.LedgerClean(t)
}
