package security_test

import (
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
	if err := env.App.Accounts.SetPassword(t.Context(), "ops", "another123"); err != nil {
		t.Fatal(err)
	}
	if res := old.Do("GET", "/api/auth/stats/users", nil); res.Status != 401 {
		t.Fatalf("a session opened with the old password after --reset-password: %d %s, want 401", res.Status, res.Raw)
	}
}
