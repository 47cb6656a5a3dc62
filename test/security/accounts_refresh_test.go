package security_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"

	"github.com/fairplay/fairplay/internal/accounts"
	fairplayv1 "github.com/fairplay/fairplay/internal/gen/fairplay/v1"
	"github.com/fairplay/fairplay/internal/gen/fairplay/v1/fairplayv1connect"
	"github.com/fairplay/fairplay/internal/settings"
	"github.com/fairplay/fairplay/test/apitest"
)

// refresh exchanges c's refresh token and, on success, keeps the new pair
// as the web app does.
func refresh(t *testing.T, c *apitest.Client) apitest.Response {
	t.Helper()
	res := c.Do("POST", "/api/auth/refresh", map[string]any{"refreshToken": c.RefreshToken})
	if res.Status == 200 {
		if res.Str("token") == "" || res.Str("refreshToken") == "" {
			t.Fatalf("refresh answered 200 without a token and a refresh token: %s", res.Raw)
		}
		c.Token, c.RefreshToken = res.Str("token"), res.Str("refreshToken")
	}
	return res
}

// stolen is a copy of c's tokens as they are now, as an attacker who read
// them would hold them.
func stolen(c *apitest.Client) *apitest.Client {
	s := *c
	return &s
}

func expectStatus(t *testing.T, res apitest.Response, status int, what string) {
	t.Helper()
	if res.Status != status {
		t.Fatalf("%s: %d %s, want %d", what, res.Status, res.Raw, status)
	}
}

// Each refresh hands out the session's next refresh token (over /api and
// Connect) and retires the one it was given.
func TestRefreshTokensRotate(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	c := env.Client()
	c.Register("rotor")
	seen := map[string]bool{c.RefreshToken: true}
	for i := range 3 {
		expectStatus(t, refresh(t, c), 200, "refresh")
		if seen[c.RefreshToken] {
			t.Fatalf("refresh %d handed out a refresh token seen before", i+1)
		}
		seen[c.RefreshToken] = true
		if res := c.Do("GET", "/api/auth/user", nil); res.Status != 200 {
			t.Fatalf("new access token: %d %s", res.Status, res.Raw)
		}
	}

	client := fairplayv1connect.NewAuthServiceClient(http.DefaultClient, env.URL)
	res, err := client.Refresh(context.Background(), connect.NewRequest(&fairplayv1.RefreshRequest{RefreshToken: c.RefreshToken}))
	if err != nil {
		t.Fatalf("Connect Refresh: %v", err)
	}
	next := res.Msg.GetRefreshToken()
	if next == "" || seen[next] || res.Msg.GetToken() == "" {
		t.Fatalf("Connect Refresh: refresh token %q (seen before: %t), token %q", next, seen[next], res.Msg.GetToken())
	}
	// The Connect refresh retired the token it was given: the /api client
	// still holding it is now a copy, and presenting it ends the session.
	expectStatus(t, refresh(t, c), 401, "the refresh token Connect retired")
	_, err = client.Refresh(context.Background(), connect.NewRequest(&fairplayv1.RefreshRequest{RefreshToken: next}))
	if connect.CodeOf(err) != connect.CodeUnauthenticated {
		t.Fatalf("Connect Refresh after the reuse revoked the session: %v", err)
	}
}

// A thief who copied a refresh token gets at most one turn: whoever presents
// a retired refresh token — the thief after the owner refreshed, or the owner
// after the thief did — ends the whole session, every refresh and access
// token of it, while the player's other sessions live on.
func TestRefreshTokenReuseRevokesTheSession(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	owner := env.Client()
	owner.Register("victim")
	phone := env.Client()
	phone.Login("victim", "secret123")

	for _, thiefFirst := range []bool{false, true} {
		laptop := env.Client()
		laptop.Login("victim", "secret123")
		copyOf := stolen(laptop)
		first, second := laptop, copyOf
		if thiefFirst {
			first, second = copyOf, laptop
		}
		expectStatus(t, refresh(t, first), 200, "first use of the refresh token")
		expectStatus(t, refresh(t, second), 401, "second use of the same refresh token")
		for _, c := range []*apitest.Client{laptop, copyOf} {
			expectStatus(t, c.Do("GET", "/api/auth/user", nil), 401, "an access token of the revoked session")
			expectStatus(t, c.Do("POST", "/api/games/dice", map[string]any{"betAmount": 1, "rollTarget": 50}), 401,
				"a bet with an access token of the revoked session")
			expectStatus(t, c.Do("POST", "/api/auth/refresh", map[string]any{"refreshToken": c.RefreshToken}), 401,
				"a refresh token of the revoked session")
		}
		// The player's other sessions are untouched.
		expectStatus(t, owner.Do("GET", "/api/auth/user", nil), 200, "another session")
		expectStatus(t, refresh(t, phone), 200, "another session's refresh")
	}

	// Over Connect too.
	laptop := env.Client()
	laptop.Login("victim", "secret123")
	old := laptop.RefreshToken
	expectStatus(t, refresh(t, laptop), 200, "refresh")
	client := fairplayv1connect.NewAuthServiceClient(http.DefaultClient, env.URL)
	_, err := client.Refresh(context.Background(), connect.NewRequest(&fairplayv1.RefreshRequest{RefreshToken: old}))
	if connect.CodeOf(err) != connect.CodeUnauthenticated {
		t.Fatalf("Connect Refresh with a retired token: %v", err)
	}
	expectStatus(t, laptop.Do("GET", "/api/auth/user", nil), 401, "the session after a reuse over Connect")
}

// Two refreshes racing with one refresh token are a reuse too (there is no
// grace period): one wins, the other is refused and ends the session, so a
// copy of the token never yields a second live pair.
func TestConcurrentRefreshesAreAReuse(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	for i := range 3 {
		c := env.Client()
		c.Register(fmt.Sprintf("racer%d", i))
		token := c.RefreshToken
		var wg sync.WaitGroup
		results := make([]apitest.Response, 2)
		for i := range results {
			wg.Add(1)
			go func() {
				defer wg.Done()
				results[i] = c.Do("POST", "/api/auth/refresh", map[string]any{"refreshToken": token})
			}()
		}
		wg.Wait()
		ok := 0
		for _, r := range results {
			switch r.Status {
			case 200:
				ok++
				c.Token, c.RefreshToken = r.Str("token"), r.Str("refreshToken")
			case 401:
			default:
				t.Fatalf("racing refresh: %d %s", r.Status, r.Raw)
			}
		}
		if ok != 1 {
			t.Fatalf("racing refreshes: %d succeeded, want exactly 1", ok)
		}
		expectStatus(t, c.Do("GET", "/api/auth/user", nil), 401, "the winner's access token after the race")
		expectStatus(t, refresh(t, c), 401, "the winner's refresh token after the race")
	}
}

// Sessions end FAIRPLAY_SESSION_MAX_LIFETIME after sign-in however often
// they are used: refreshing every few days keeps a session from idling out,
// but not past its lifetime, and no access token outlives it.
func TestSessionsHaveAnAbsoluteLifetime(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	day := 24 * time.Hour
	c := env.Client()
	c.Register("marathon")
	var watcher *apitest.Client
	for range 3 {
		env.Clock.Advance(9 * day)
		expectStatus(t, refresh(t, c), 200, "refresh within the lifetime")
		if watcher == nil {
			// A second session, signed in nine days later.
			watcher = env.Client()
			watcher.Login("marathon", "secret123")
		}
	}
	// Five minutes before the end (30 days in): the last refresh works.
	env.Clock.Advance(3*day - 5*time.Minute)
	expectStatus(t, refresh(t, c), 200, "refresh five minutes before the end")
	expectStatus(t, refresh(t, watcher), 200, "the other session's refresh")
	expectStatus(t, c.Do("GET", "/api/auth/user", nil), 200, "access token before the end")
	if n := len(watcher.Do("GET", "/api/auth/sessions", nil).Body["sessions"].([]any)); n != 2 {
		t.Fatalf("%d sessions listed before the end, want 2", n)
	}

	// One minute after the end: the fresh access token (fifteen minutes
	// would reach past the end) and the refresh token are refused, bets
	// included, and the session is gone from the list.
	env.Clock.Advance(6 * time.Minute)
	expectStatus(t, c.Do("GET", "/api/auth/user", nil), 401, "access token after the session's lifetime")
	expectStatus(t, c.Do("POST", "/api/games/dice", map[string]any{"betAmount": 1, "rollTarget": 50}), 401,
		"a bet after the session's lifetime")
	expectStatus(t, refresh(t, c), 401, "refresh after the session's lifetime")
	list := watcher.Do("GET", "/api/auth/sessions", nil)
	expectStatus(t, list, 200, "the younger session's list")
	if n := len(list.Body["sessions"].([]any)); n != 1 {
		t.Fatalf("sessions listed after the first one's lifetime (want only the younger one): %s", list.Raw)
	}

	// The lifetime is configurable.
	short := apitest.Start(t, apitest.WithConfig(func(c *settings.Config) { c.SessionMaxLifetime = time.Hour }))
	s := short.Client()
	s.Register("sprinter")
	short.Clock.Advance(50 * time.Minute)
	expectStatus(t, refresh(t, s), 200, "refresh within an hour")
	short.Clock.Advance(11 * time.Minute)
	expectStatus(t, s.Do("GET", "/api/auth/user", nil), 401, "access token after an hour's lifetime")
	expectStatus(t, refresh(t, s), 401, "refresh after an hour's lifetime")
}

// Logout and revoke-other-sessions take the session's current refresh token,
// so they keep working after rotations; a retired token is a reuse there too.
func TestLogoutAndRevokeOthersWithRotatedTokens(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	laptop := env.Client()
	laptop.Register("juggler")
	phone := env.Client()
	phone.Login("juggler", "secret123")
	for range 2 {
		expectStatus(t, refresh(t, laptop), 200, "refresh")
	}
	res := laptop.Do("POST", "/api/auth/revoke-other-sessions", map[string]any{"currentRefreshToken": laptop.RefreshToken})
	expectStatus(t, res, 200, "revoke other sessions with the current refresh token")
	expectStatus(t, phone.Do("GET", "/api/auth/user", nil), 401, "the other session")
	expectStatus(t, laptop.Do("GET", "/api/auth/user", nil), 200, "the kept session")
	expectStatus(t, refresh(t, laptop), 200, "the kept session's refresh")

	expectStatus(t, laptop.Do("POST", "/api/auth/logout", map[string]any{"refreshToken": laptop.RefreshToken}), 200, "logout")
	expectStatus(t, laptop.Do("GET", "/api/auth/user", nil), 401, "access token after logout")
	expectStatus(t, refresh(t, laptop), 401, "refresh after logout")

	// A retired token given to logout ends the session it belonged to.
	tablet := env.Client()
	tablet.Login("juggler", "secret123")
	old := tablet.RefreshToken
	expectStatus(t, refresh(t, tablet), 200, "refresh")
	expectStatus(t, tablet.Do("POST", "/api/auth/logout", map[string]any{"refreshToken": old}), 200, "logout with a retired token")
	expectStatus(t, tablet.Do("GET", "/api/auth/user", nil), 401, "access token after logout with a retired token")

	// A retired token given to revoke-other-sessions ends its session and
	// revokes nothing else.
	desk := env.Client()
	desk.Login("juggler", "secret123")
	other := env.Client()
	other.Login("juggler", "secret123")
	old = desk.RefreshToken
	expectStatus(t, refresh(t, desk), 200, "refresh")
	res = desk.Do("POST", "/api/auth/revoke-other-sessions", map[string]any{"currentRefreshToken": old})
	expectStatus(t, res, 401, "revoke other sessions with a retired token")
	expectStatus(t, desk.Do("GET", "/api/auth/user", nil), 401, "the session whose retired token was shown")
	expectStatus(t, other.Do("GET", "/api/auth/user", nil), 200, "the other session")
}

// Refresh and sign-out are public: anyone may send made-up tokens, each
// costing a transaction on the replica's pool. They count per client
// address (FAIRPLAY_RATE_SESSION_IP), both in one budget, as sign-in does;
// another address, and the owner's own refresh from it, are untouched.
func TestRefreshAndLogoutCountPerAddress(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t, apitest.WithConfig(func(c *settings.Config) {
		trustLoopback(c)
		c.SessionPerIP = settings.Rate{N: 4, Period: time.Minute}
	}))
	owner := from(env, "198.51.100.40")
	owner.Register("refresher")

	flood := from(env, "203.0.113.40")
	for i := range 4 {
		path := []string{"/api/auth/refresh", "/api/auth/logout"}[i%2]
		res := flood.Do("POST", path, map[string]any{"refreshToken": fmt.Sprintf("made-up-%d", i)})
		if res.Status == http.StatusTooManyRequests || res.Status >= 500 {
			t.Fatalf("attempt %d (%s) within the budget: %d %s", i+1, path, res.Status, res.Raw)
		}
	}
	expectRateLimited(t, flood.Do("POST", "/api/auth/refresh", map[string]any{"refreshToken": "made-up-5"}), "a 5th refresh")
	expectRateLimited(t, flood.Do("POST", "/api/auth/logout", map[string]any{"refreshToken": "made-up-6"}), "a 6th, a sign-out")

	expectStatus(t, refresh(t, owner), 200, "the owner's refresh from another address")
	if res := owner.Do("POST", "/api/auth/logout", map[string]any{"refreshToken": owner.RefreshToken}); res.Status >= 300 {
		t.Fatalf("the owner's sign-out: %d %s", res.Status, res.Raw)
	}
}

// TestSessionRefreshesEndTheSessionAtTheirBound: a session's refresh token
// rotates at most accounts.MaxRefreshes times; the next refresh ends the
// session, its access tokens too, and the player signs in again. Every
// rotation retires a token that the session keeps while it lives (reuse
// detection), and nothing else bounded how many one session gathered: one
// address refreshing at its rate limit added ~430,000 a day (found by a
// review playing a hostile client). A first version revoked the session in
// the refresh's transaction and then rolled it back with the refusal
// (review of that change).
func TestSessionRefreshesEndTheSessionAtTheirBound(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	c := env.Client()
	c.Register("tireless")
	if _, err := env.App.Postgres.Exec(context.Background(), `UPDATE sessions SET refreshes = $1
		WHERE user_id = (SELECT id FROM users WHERE username = 'tireless')`, accounts.MaxRefreshes-1); err != nil {
		t.Fatal(err)
	}
	expectStatus(t, refresh(t, c), 200, "the last refresh allowed")
	expectStatus(t, refresh(t, c), 401, "a refresh past the bound")
	if res := c.Do("GET", "/api/auth/user", nil); res.Status != 401 {
		t.Fatalf("the session's access token after its refreshes ran out: %d %s", res.Status, res.Raw)
	}
	var revoked bool
	if err := env.App.Postgres.QueryRow(context.Background(), `SELECT revoked_at IS NOT NULL FROM sessions
		WHERE user_id = (SELECT id FROM users WHERE username = 'tireless')`).Scan(&revoked); err != nil || !revoked {
		t.Fatalf("the session is revoked: %v (%v)", revoked, err)
	}
	c.Login("tireless", "secret123")
	if res := c.Do("GET", "/api/auth/user", nil); res.Status != 200 {
		t.Fatalf("signed in again: %d %s", res.Status, res.Raw)
	}
}
