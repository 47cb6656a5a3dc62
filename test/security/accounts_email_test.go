package security_test

import (
	"testing"

	"github.com/fairplay/fairplay/test/apitest"
)

// TestEmailCannotPassForAnother: an address may hold letters of any
// script, but it held invisible characters too — a zero-width space, a
// right-to-left override, a no-break space, a control character — so a
// player could register "boss@example.com" plus a zero-width space and
// show in the admin dashboard's list and search as a second, identical
// boss@example.com, where an administrator picks whom to credit or delete.
// Now such an address is refused as invalid, at registration and when an
// administrator makes an account, and nothing is created. Found by a
// review.
func TestEmailCannotPassForAnother(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	env.Client().Register("boss")
	for i, email := range []string{
		"boss@example.com\u200b", "\u200bboss@example.com", "boss\u00a0@example.com",
		"moc.elpmaxe@ssob\u202e@x.io", "boss@example.com\u2066", "bo\x08ss@example.com",
	} {
		name := "lookalike" + string(rune('a'+i))
		res := env.Client().Do("POST", "/api/auth/register", map[string]any{"username": name, "email": email,
			"password": "secret123", "turnstileToken": apitest.BotToken})
		if res.Status != 400 || res.Message() != "Please enter a valid email address" {
			t.Errorf("register with %q: %d %s", email, res.Status, res.Raw)
		}
		if _, _, err := env.App.Accounts.CreateAdmin(t.Context(), name, email, "secret123", false); err == nil {
			t.Errorf("an admin made with %q", email)
		}
	}
	var n int
	if err := env.App.Postgres.QueryRow(t.Context(), `SELECT count(*) FROM users`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("accounts: %d %v", n, err)
	}
	// Letters of other scripts are addresses like any other.
	res := env.Client().Do("POST", "/api/auth/register", map[string]any{"username": "juergen", "email": "jürgen@bücher.de",
		"password": "secret123", "turnstileToken": apitest.BotToken})
	if res.Status != 200 {
		t.Fatalf("register with a letter of another script: %d %s", res.Status, res.Raw)
	}
}
