package security_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/fairplay/fairplay/internal/settings"
	"github.com/fairplay/fairplay/test/apitest"
)

// TestLimitsRequestWithAMisspeltOrBlankLimitChangesNothing: POST
// /api/limits replaces the player's whole set of limits, and a limit it
// leaves out is none. A misspelt key ("daily" for "day", "losses",
// "realityCheck") or a blank amount was read as leaving it out: a player
// tightening a limit lifted every limit (in 24 hours) and turned the
// reality check off at once, answered 200. Now such a request is refused
// with the key or the amount named, and the settings stay as they were.
// Found by a review.
func TestLimitsRequestWithAMisspeltOrBlankLimitChangesNothing(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	c := env.Client()
	c.Register("careful")
	set := c.Do("POST", "/api/limits", `{"loss": {"day": 10}, "wager": {"week": 50}, "realityCheckMinutes": 30}`)
	if set.Status != 200 {
		t.Fatalf("set the limits: %d %s", set.Status, set.Raw)
	}
	before := c.Do("GET", "/api/limits", nil)
	const amount = "A limit is an amount of at least 0.01 with at most two decimal places"
	for _, tc := range []struct{ body, msg string }{
		{`{"loss": {"daily": 5}, "wager": {"week": 50}, "realityCheckMinutes": 30}`, `Unknown field "loss.daily"`},
		{`{"losses": {"day": 5}, "wager": {"week": 50}, "realityCheckMinutes": 30}`, `Unknown field "losses"`},
		{`{"loss": {"day": 5}, "wager": {"week": 50}, "realityCheck": 30}`, `Unknown field "realityCheck"`},
		{`{"loss": {"day": ""}, "wager": {"week": 50}, "realityCheckMinutes": 30}`, amount},
		{`{"loss": {"day": "  "}, "wager": {"week": 50}, "realityCheckMinutes": 30}`, amount},
	} {
		res := c.Do("POST", "/api/limits", tc.body)
		if res.Status != 400 || res.Str("message") != tc.msg {
			t.Errorf("POST /api/limits %s: %d %s; want 400 %q", tc.body, res.Status, res.Raw, tc.msg)
		}
	}
	// The same over Connect, whose JSON ignores unknown fields elsewhere.
	for _, fields := range []map[string]any{
		{"loss": map[string]any{"daily": "5"}, "wager": map[string]any{"week": "50"}, "realityCheckMinutes": 30},
		{"loss": map[string]any{"day": "5"}, "wager": map[string]any{"week": "50"}, "realityCheck": 30},
		{"loss": map[string]any{"day": ""}, "wager": map[string]any{"week": "50"}, "realityCheckMinutes": 30},
	} {
		if status, body := connectCall(t, env, c, "fairplay.v1.WalletService.SetLimits", fields); status != 400 ||
			body["code"] != "invalid_argument" {
			t.Errorf("Connect SetLimits %v: %d %v; want 400 invalid_argument", fields, status, body)
		}
	}
	if after := c.Do("GET", "/api/limits", nil); string(after.Raw) != string(before.Raw) {
		t.Fatalf("a refused request changed the limits:\nbefore %s\nafter  %s", before.Raw, after.Raw)
	}
	// What the documentation names still works: a field's proto name, and
	// null for no limit (a looser set, so pending).
	res := c.Do("POST", "/api/limits", `{"loss": {"day": 5, "week": null}, "wager": {"week": 50}, "reality_check_minutes": 30}`)
	if res.Status != 200 || fmt.Sprint(res.Get("limits.loss.day")) != "5" {
		t.Fatalf("a valid request: %d %s", res.Status, res.Raw)
	}
}

// TestDeletingAnAccountDoesNotLiftItsBreakOrExclusion: no route lifts a
// break or a self-exclusion, but an administrator's deletion of the account
// ("delete my data") did: the player registered again under the same
// username and email and bet at once. Now a new account with the email of
// a deleted, restricted one takes its restriction over; a deleted account
// without one leaves a new account free to bet. Found by a review.
func TestDeletingAnAccountDoesNotLiftItsBreakOrExclusion(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	if _, _, err := env.App.Accounts.CreateAdmin(t.Context(), "boss", "boss@example.com", "secret123", false); err != nil {
		t.Fatal(err)
	}
	admin := env.Client()
	admin.Login("boss", "secret123")
	dice := `{"betAmount": 1, "rollTarget": 50}`

	type restricted struct {
		name, path, body string
	}
	msgs := map[string]string{}
	for _, r := range []restricted{
		{"excluded", "/api/limits/self-exclusion", `{"duration": "permanent", "password": "secret123"}`},
		{"resting", "/api/limits/break", `{"days": 7}`},
		{"free", "", ""},
	} {
		c := env.Client()
		id := c.Register(r.name).Str("user._id")
		if r.path != "" {
			if res := c.Do("POST", r.path, r.body); res.Status != 200 {
				t.Fatalf("%s: %d %s", r.path, res.Status, res.Raw)
			}
			res := c.Do("POST", "/api/games/dice", dice)
			if res.Status != 400 {
				t.Fatalf("%s bet before the deletion: %d %s", r.name, res.Status, res.Raw)
			}
			msgs[r.name] = res.Str("message")
		}
		if res := admin.Do("DELETE", "/api/auth/users/"+id, nil); res.Status != 200 {
			t.Fatalf("delete %s: %d %s", r.name, res.Status, res.Raw)
		}
	}
	for _, name := range []string{"excluded", "resting", "free"} {
		c := env.Client()
		c.Register(name) // the same username and email
		res := c.Do("POST", "/api/games/dice", dice)
		switch msg, was := msgs[name]; {
		case was && (res.Status != 400 || res.Str("message") != msg):
			t.Errorf("%s's new account bet: %d %s; want 400 %q", name, res.Status, res.Raw, msg)
		case !was && res.Status != 200:
			t.Errorf("%s's new account, never restricted: %d %s", name, res.Status, res.Raw)
		}
	}
	env.LedgerClean(t)
}

// TestRegistrationWaitingOnADeletionTakesItsRestrictionOver: a registration
// with the email of an account whose deletion is under way waits on the
// email's unique index until the deletion commits, then goes on. The
// carry-over of the deleted account's exclusion read the accounts as they
// were when the registration's statement began, when the account was
// still live, so the new account came out free to bet. Now the carry-over
// is a statement of its own after the insert. Found by a review of the
// fix for TestDeletingAnAccountDoesNotLiftItsBreakOrExclusion.
func TestRegistrationWaitingOnADeletionTakesItsRestrictionOver(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ctx := t.Context()
	old := env.Client()
	id := old.Register("racer").Str("user._id")
	if res := old.Do("POST", "/api/limits/self-exclusion", `{"duration": "permanent", "password": "secret123"}`); res.Status != 200 {
		t.Fatalf("self-exclusion: %d %s", res.Status, res.Raw)
	}
	// The deletion, held open as a slow administrator's transaction.
	conn := ownConn(t, env)
	deletion, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = deletion.Rollback(context.Background()) })
	if _, err := deletion.Exec(ctx, `UPDATE users SET deleted_at = now() WHERE id = $1`, id); err != nil {
		t.Fatal(err)
	}
	c := env.Client()
	type answer struct {
		res apitest.Response
		err error
	}
	done := make(chan answer, 1)
	go func() {
		res, err := c.DoContext(ctx, "POST", "/api/auth/register", map[string]any{"username": "racer2",
			"email": "racer@example.com", "password": "secret123", "turnstileToken": apitest.BotToken})
		done <- answer{res, err}
	}()
	watch := ownConn(t, env)
	awaitLockWaiters(t, watch, 1)
	if err := deletion.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	a := <-done
	if a.err != nil || a.res.Status != 200 {
		t.Fatalf("register after the deletion: %v %d %s", a.err, a.res.Status, a.res.Raw)
	}
	c.Token = a.res.Str("token")
	res := c.Do("POST", "/api/games/dice", `{"betAmount": 1, "rollTarget": 50}`)
	if res.Status != 400 || res.Str("message") != "You have excluded yourself from betting permanently" {
		t.Fatalf("the new account's bet: %d %s", res.Status, res.Raw)
	}
}

// TestStolenSessionCannotExcludeTheOwner: a self-exclusion takes the
// account's password. Nobody can lift one, not even an administrator, and a
// new account with the same email inherits it, so whoever held a session
// for a moment (a borrowed browser, a stolen token) could end the owner's
// play for good with one request (found by reviews playing a hostile
// player). Wrong guesses count against the password-change limits and
// change nothing.
func TestStolenSessionCannotExcludeTheOwner(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t, apitest.WithConfig(func(c *settings.Config) {
		c.PasswordChangePerUser = settings.Rate{N: 3, Period: 15 * time.Minute}
	}))
	owner := env.Client()
	owner.Register("keeper")
	before := owner.Do("GET", "/api/limits", nil).Raw
	thief := stolen(owner)
	for _, duration := range []string{"permanent", "six_months"} {
		if res := thief.Do("POST", "/api/limits/self-exclusion", map[string]any{"duration": duration}); res.Status != 400 ||
			res.Message() != "Current password is required" {
			t.Fatalf("%s without the password: %d %s", duration, res.Status, res.Raw)
		}
	}
	for i, guess := range []string{"password1", "keeper123", "letmein!"} {
		if res := thief.Do("POST", "/api/limits/self-exclusion", map[string]any{"duration": "permanent", "password": guess}); res.Status != 400 ||
			res.Message() != "Current password is incorrect" {
			t.Fatalf("guess %d: %d %s", i+1, res.Status, res.Raw)
		}
	}
	expectRateLimited(t, thief.Do("POST", "/api/limits/self-exclusion", map[string]any{"duration": "permanent", "password": "x"}),
		"a 4th guess")
	if after := owner.Do("GET", "/api/limits", nil).Raw; string(after) != string(before) {
		t.Fatalf("the attempts changed the owner's settings:\n%s\n%s", before, after)
	}
	if res := owner.Do("POST", "/api/games/dice", map[string]any{"betAmount": 1, "rollTarget": 50}); res.Status != 200 {
		t.Fatalf("the owner's bet after the attempts: %d %s", res.Status, res.Raw)
	}
}
