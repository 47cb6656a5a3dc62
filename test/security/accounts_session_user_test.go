package security_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
)

// GET /api/auth/user reads the account and checks its session in one
// statement (ACCESS_PLAYER: the interceptor verifies only the token). A token
// whose session ended (logged out, revoked by another session) or whose
// account is gone must still hear 401, and the very answer a procedure whose
// session the interceptor checks (ACCESS_USER: GET /api/auth/sessions) gives
// it, over /api and Connect: the refusal tells nothing the other does not.
func TestSignedInUserChecksTheSession(t *testing.T) {
	t.Parallel()
	w := newHostileWorld(t)
	env := w.env

	same := func(t *testing.T, what string, token string) {
		t.Helper()
		c := env.Client()
		c.Token = token
		user := c.Do("GET", "/api/auth/user", nil)
		sessions := c.Do("GET", "/api/auth/sessions", nil)
		if user.Status != 401 || user.Status != sessions.Status || user.Message() != sessions.Message() {
			t.Fatalf("%s: GET /api/auth/user %d %s, GET /api/auth/sessions %d %s: want the same 401",
				what, user.Status, user.Raw, sessions.Status, sessions.Raw)
		}
		st, body := connectCall(t, env, c, "fairplay.v1.AuthService.GetUser", map[string]any{})
		st2, body2 := connectCall(t, env, c, "fairplay.v1.AuthService.ListSessions", map[string]any{})
		if st != http.StatusUnauthorized || st != st2 || body["code"] != body2["code"] || body["message"] != body2["message"] {
			t.Fatalf("%s over Connect: GetUser %d %v, ListSessions %d %v: want the same 401", what, st, body, st2, body2)
		}
	}

	// Logged out: the session is revoked, its access token still unexpired.
	out := env.Client()
	out.Login("mallory", "secret123")
	token := out.Token
	if res := out.Do("POST", "/api/auth/logout", map[string]any{"refreshToken": out.RefreshToken}); res.Status != 200 {
		t.Fatalf("logout: %d %s", res.Status, res.Raw)
	}
	same(t, "a logged-out session's token", token)

	// Revoked by the player's other session.
	other := env.Client()
	other.Login("mallory", "secret123")
	if res := w.player.Do("POST", "/api/auth/revoke-other-sessions", map[string]any{"currentRefreshToken": w.player.RefreshToken}); res.Status != 200 {
		t.Fatalf("revoke the other sessions: %d %s", res.Status, res.Raw)
	}
	same(t, "a session revoked by another", other.Token)
	if res := w.player.Do("GET", "/api/auth/user", nil); res.Status != 200 || res.Str("user.username") != "mallory" {
		t.Fatalf("the kept session: %d %s", res.Status, res.Raw)
	}

	// What the statement checks of the session and the account, each alone:
	// the session's lifetime and idle time, and the account's deletion,
	// written straight into the database (the server's own ways revoke the
	// sessions too, which is checked above).
	db := env.App.Postgres
	for i, c := range []struct{ what, sql string }{
		{"a session past its lifetime", `UPDATE sessions SET created_at = now() - interval '400 days' WHERE id = $1`},
		{"a session idle too long", `UPDATE sessions SET last_used_at = now() - interval '400 days' WHERE id = $1`},
		{"an account deleted, its session not revoked", `UPDATE users SET deleted_at = now() WHERE id = (SELECT user_id FROM sessions WHERE id = $1)`},
	} {
		one := env.Client()
		one.Register(fmt.Sprintf("solo%d", i))
		sessions := one.Do("GET", "/api/auth/sessions", nil).Get("sessions").([]any)
		sid := sessions[0].(map[string]any)["_id"].(string)
		if _, err := db.Exec(context.Background(), c.sql, sid); err != nil {
			t.Fatalf("%s: %v", c.what, err)
		}
		same(t, c.what, one.Token)
	}

	// The account deleted by an administrator: its session's token.
	if res := w.admin.Do("DELETE", "/api/auth/users/"+w.playerID, nil); res.Status != 200 {
		t.Fatalf("delete the player: %d %s", res.Status, res.Raw)
	}
	same(t, "a deleted account's token", w.player.Token)
}
