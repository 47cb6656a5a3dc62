package security_test

import (
	"context"
	"testing"
	"time"

	"github.com/fairplay/fairplay/internal/accounts"
	"github.com/fairplay/fairplay/test/apitest"
)

// TestSignInUnderWayDoesNotOutliveACredentialChange: a sign-in reads the
// account, then waits its turn for the password check, then opens its
// session. A new password, two-factor sign-in turned on, or the account
// deleted in between ends every session of the account, and the sign-in's
// must not begin after that, nor one whose code was of a key replaced since: an intruder with the old password kept the
// account, and on an admin a password-only session passed
// FAIRPLAY_ADMIN_REQUIRE_2FA (found by a review). The change is held open
// here, as the server makes it (the user's row, then the sessions, in one
// transaction), while the intruder's sign-in runs with the password it had:
// the sign-in waits for the change and is answered as the account is after
// it, and no session of the account is left.
func TestSignInUnderWayDoesNotOutliveACredentialChange(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	cases := []struct {
		name, change string
		twoFactor    bool // the account has 2FA on, and the sign-in sends a code of its key
		want         func(apitest.Response) bool
		wantText     string
	}{
		{"a new password", `UPDATE users SET password_hash = 'replaced' WHERE id = $1`, false,
			func(r apitest.Response) bool {
				return r.Status == 401 && r.Str("message") == "Invalid username or password"
			},
			"401 Invalid username or password"},
		{"two-factor sign-in turned on", `UPDATE users SET totp_secret = '\x0102030405', totp_pending = NULL WHERE id = $1`, false,
			func(r apitest.Response) bool {
				return r.Status == 200 && r.Get("twoFactorRequired") == true && r.Str("token") == "" && r.Str("refreshToken") == ""
			},
			"200 with twoFactorRequired and no tokens"},
		{"the account deleted", `UPDATE users SET deleted_at = now() WHERE id = $1`, false,
			func(r apitest.Response) bool {
				return r.Status == 401 && r.Str("message") == "Invalid username or password"
			},
			"401 Invalid username or password"},
		// An operator's reset and the owner's new enrolment, as one change.
		{"the two-factor key replaced", `UPDATE users SET totp_secret = '\x0102030405' WHERE id = $1`, true,
			func(r apitest.Response) bool { return r.Status == 401 && r.Str("message") == "Invalid two-factor code" },
			"401 Invalid two-factor code"},
	}
	for i, tc := range cases {
		p := newPlayer(t, env)
		ctx := context.Background()
		body := map[string]any{"username": p.name, "password": "secret123", "turnstileToken": apitest.BotToken}
		if tc.twoFactor {
			secret := mustOK(t, "2fa setup", p.Do("POST", "/api/auth/2fa/setup", map[string]any{})).Str("secret")
			code, err := accounts.TOTPCode(secret, env.Clock.Now())
			if err != nil {
				t.Fatal(err)
			}
			mustOK(t, "2fa enable", p.Do("POST", "/api/auth/2fa/enable", map[string]any{"code": code, "password": "secret123"}))
			env.Clock.Advance(30 * time.Second) // the next code: the enable's was spent
			if body["twoFactorCode"], err = accounts.TOTPCode(secret, env.Clock.Now()); err != nil {
				t.Fatal(err)
			}
		}
		tx, err := p.db.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, tc.change, p.id); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if _, err := tx.Exec(ctx, `UPDATE sessions SET revoked_at = now() WHERE user_id = $1 AND revoked_at IS NULL`, p.id); err != nil {
			t.Fatal(err)
		}
		done := make(chan apitest.Response, 1)
		go func() {
			done <- env.Client().Do("POST", "/api/auth/login", body)
		}()
		// The sign-in waits for the change's row (to open its session, or
		// first to spend its code's step).
		var early *apitest.Response
		for deadline := time.Now().Add(10 * time.Second); early == nil; time.Sleep(5 * time.Millisecond) {
			var waiting bool
			if err := p.db.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_stat_activity
				WHERE datname = current_database() AND wait_event_type = 'Lock')`).
				Scan(&waiting); err != nil {
				t.Fatal(err)
			}
			if waiting {
				break
			}
			select {
			case res := <-done:
				early = &res
			default:
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: the sign-in neither answered nor waited for the change", tc.name)
			}
		}
		if err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		if early != nil {
			t.Errorf("%s: the sign-in with the old credentials was answered %d %s while the change was under way",
				tc.name, early.Status, early.Raw)
		} else if res := <-done; !tc.want(res) {
			t.Errorf("%s: the sign-in that waited for it was answered %d %s, want %s", tc.name, res.Status, res.Raw, tc.wantText)
		}
		var live int
		if err := p.db.QueryRow(ctx, `SELECT count(*) FROM sessions WHERE user_id = $1 AND revoked_at IS NULL`, p.id).
			Scan(&live); err != nil {
			t.Fatal(err)
		}
		if live != 0 {
			t.Errorf("%s: %d sessions of the account live after it (case %d)", tc.name, live, i)
		}
	}
}
