package security_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/fairplay/fairplay/test/apitest"
)

// TestAdminCreateDoesNotPromoteASquatter: anyone may register the username
// an operator's `fairplay admin create --if-missing` names (the default
// "admin", or a deleted admin's freed name). The command made that player
// an administrator, and the player's session got the dashboard at once;
// it now promotes only an account with the email it was given, and setting
// a password (--reset-password) ends the account's sessions. Found by a
// review.
func TestAdminCreateDoesNotPromoteASquatter(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	squatter := env.Client()
	squatter.Register("admin")
	if _, _, err := env.App.Accounts.CreateAdmin(t.Context(), "admin", "ops@example.com", "secret123", true); err == nil ||
		!strings.Contains(err.Error(), "another email") {
		t.Fatalf("admin create --if-missing over a player's account: %v, want a refusal", err)
	}
	if res := squatter.Do("GET", "/api/auth/stats/users", nil); res.Status != 403 {
		t.Fatalf("the squatter's session after admin create: %d %s, want 403", res.Status, res.Raw)
	}
	// The operator's own account, made before: promoted again, and a new
	// password ends the sessions opened with the old one.
	if _, created, err := env.App.Accounts.CreateAdmin(t.Context(), "ops", "ops@example.com", "secret123", true); err != nil || !created {
		t.Fatalf("admin create: created %v, %v", created, err)
	}
	old := env.Client()
	old.Login("ops", "secret123")
	if _, created, err := env.App.Accounts.CreateAdmin(t.Context(), "ops", "OPS@example.com", "secret123", true); err != nil || created {
		t.Fatalf("admin create --if-missing of its own account: created %v, %v", created, err)
	}
	if changed, err := env.App.Accounts.SetPassword(t.Context(), "ops", "another123"); err != nil || !changed {
		t.Fatalf("set password: changed %v, %v", changed, err)
	}
	if res := old.Do("GET", "/api/auth/stats/users", nil); res.Status != 401 {
		t.Fatalf("a session opened with the old password after --reset-password: %d %s, want 401", res.Status, res.Raw)
	}
}

// TestOperatorCommandsAreAudited: the operator's commands change who is an
// administrator and who is signed in, but wrote log lines only, so the
// audit log could not tell how an account became an administrator. They
// now write audit rows with no administrator as their actor (migration
// 00030), in the transaction of the change; a refused command writes none.
// Found by a review.
func TestOperatorCommandsAreAudited(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ctx := t.Context()
	svc := env.App.Accounts
	squatter := env.Client()
	squatterID := squatter.Register("admin").Str("user._id")
	if _, _, err := svc.CreateAdmin(ctx, "admin", "ops@example.com", "secret123", true); err == nil {
		t.Fatal("admin create --if-missing over a player's account was not refused")
	}
	if _, _, err := svc.CreateAdmin(ctx, "ops", "ops@example.com", "secret123", false); err != nil {
		t.Fatal(err)
	}
	player := env.Client()
	playerID := player.Register("mallory").Str("user._id")
	if _, err := svc.Promote(ctx, "mallory"); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Promote(ctx, "mallory"); err != nil {
		t.Fatal(err)
	}
	if changed, err := svc.SetPassword(ctx, "mallory", "another123"); err != nil || !changed {
		t.Fatalf("set password: changed %v, %v", changed, err)
	}
	// The same password again (make run's --reset-password at every
	// start): nothing changes, no session ends, nothing is written.
	env.Client().Login("mallory", "another123")
	if changed, err := svc.SetPassword(ctx, "mallory", "another123"); err != nil || changed {
		t.Fatalf("set the same password: changed %v, %v", changed, err)
	}
	env.Client().Login("mallory", "another123")
	if _, _, err := svc.ResetTwoFactor(ctx, "mallory"); err != nil {
		t.Fatal(err)
	}
	ops := env.Client()
	ops.Login("ops", "secret123")
	res := ops.Do("GET", "/api/auth/audit", nil)
	if res.Status != 200 {
		t.Fatalf("audit log: %d %s", res.Status, res.Raw)
	}
	var got []string
	entries, _ := res.Get("entries").([]any)
	for i := range entries {
		e := fmt.Sprint(i)
		got = append(got, strings.Join([]string{res.Str("entries." + e + ".action"), res.Str("entries." + e + ".targetUsername"),
			res.Str("entries." + e + ".actorId"), res.Str("entries." + e + ".actorUsername"),
			res.Str("entries." + e + ".after")}, " "))
	}
	want := []string{
		`reset_2fa mallory   {"twoFactor": false, "sessionsRevoked": 2}`,
		`set_password mallory   {"sessionsRevoked": 1}`,
		`promote mallory   {"isAdmin": true}`,
		`create_admin ops   {"email": "ops@example.com", "isAdmin": true, "username": "ops"}`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("audit log, newest first:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, c := range []struct {
		who, id string
		n       int
	}{{"the squatter", squatterID, 0}, {"the promoted player", playerID, 3}} {
		res := ops.Do("GET", "/api/auth/audit?userId="+c.id, nil)
		n, _ := res.Get("entries").([]any)
		if c.id == "" || res.Status != 200 || len(n) != c.n {
			t.Errorf("audit log of %s (%q): %d entries (%d), want %d: %s", c.who, c.id, len(n), res.Status, c.n, res.Raw)
		}
	}
}
