package api_test

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"
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

func TestRegisterValidation(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	c := env.Client()
	c.Register("taken_name")
	long := strings.Repeat("a", 65)
	cases := []struct {
		name   string
		body   map[string]any
		status int
		msg    string
	}{
		{"short username", reg("ab", "ab@example.com", "secret1"), 400, "Username must be between 3 and 20 characters"},
		{"long username", reg(strings.Repeat("a", 21), "x@example.com", "secret1"), 400, "Username must be between 3 and 20 characters"},
		{"empty username", reg("", "x@example.com", "secret1"), 400, "Username must be between 3 and 20 characters"},
		{"uppercase", reg("Alice", "x@example.com", "secret1"), 400, "Username can only contain lowercase letters, numbers, and underscores"},
		{"dash", reg("al-ice", "x@example.com", "secret1"), 400, "Username can only contain lowercase letters, numbers, and underscores"},
		{"long local part", reg("alice", long+"@example.com", "secret1"), 400, "Email local part must be at most 64 characters long"},
		{"long domain", reg("alice", "a@"+strings.Repeat("d", 252)+".com", "secret1"), 400, "Email domain must be at most 255 characters long"},
		{"bad email", reg("alice", "not-an-email", "secret1"), 400, "Please enter a valid email address"},
		{"short password", reg("alice", "alice@example.com", "12345"), 400, "Password must be at least 6 characters long"},
		{"long password", reg("alice", "alice@example.com", strings.Repeat("x", 129)), 400, "Password must not exceed 128 characters"},
		{"missing bot token", map[string]any{"username": "alice", "email": "alice@example.com", "password": "secret1"}, 400, "Please complete the Turnstile verification"},
		{"wrong bot token", map[string]any{"username": "alice", "email": "alice@example.com", "password": "secret1", "turnstileToken": "nope"}, 400, "Please complete the Turnstile verification"},
		{"taken username", reg("taken_name", "other@example.com", "secret1"), 409, "Username already exists"},
		{"taken email any case", reg("other", "TAKEN_NAME@example.com", "secret1"), 409, "Email already exists"},
		{"username not a string", map[string]any{"username": 12345, "email": "a@b.co", "password": "secret1", "turnstileToken": apitest.BotToken}, 400, "Invalid request: username must be a string"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := c.Do("POST", "/api/auth/register", tc.body)
			if res.Status != tc.status || res.Message() != tc.msg {
				t.Fatalf("got %d %q, want %d %q", res.Status, res.Message(), tc.status, tc.msg)
			}
		})
	}
	var users int
	if err := env.App.Postgres.QueryRow(context.Background(), `SELECT count(*) FROM users`).Scan(&users); err != nil {
		t.Fatal(err)
	}
	if users != 1 {
		t.Fatalf("invalid registrations changed the database: %d users", users)
	}
	if res := c.Do("POST", "/api/auth/register", `[1,2]`); res.Status != 400 || res.Message() != "The request body must be a JSON object" {
		t.Fatalf("array body: %d %s", res.Status, res.Raw)
	}
	if res := c.Do("POST", "/api/auth/register", `{"username":`); res.Status != 400 || res.Message() != "Invalid JSON body" {
		t.Fatalf("broken body: %d %s", res.Status, res.Raw)
	}
}

func reg(username, email, password string) map[string]any {
	return map[string]any{"username": username, "email": email, "password": password, "turnstileToken": apitest.BotToken}
}

func TestLoginRefreshLogoutCycle(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	c := env.Client()
	res := c.Register("alice")
	if got := res.Get("user.balance"); fmt.Sprint(got) != "1000" {
		t.Fatalf("starting balance %v, want 1000", got)
	}
	for _, k := range []string{"_id", "username", "email", "balance", "isAdmin"} {
		if _, ok := res.Body["user"].(map[string]any)[k]; !ok {
			t.Fatalf("user lacks %s: %s", k, res.Raw)
		}
	}
	if _, ok := res.Body["user"].(map[string]any)["createdAt"]; ok {
		t.Fatalf("createdAt is for admin views only: %s", res.Raw)
	}
	var grants int
	var sum int64
	if err := env.App.Postgres.QueryRow(context.Background(),
		`SELECT count(*), coalesce(sum(amount),0) FROM ledger_entries WHERE kind = 'signup_grant'`).Scan(&grants, &sum); err != nil {
		t.Fatal(err)
	}
	if grants != 1 || sum != 1000*100_000_000 {
		t.Fatalf("signup ledger: %d entries, sum %d", grants, sum)
	}

	// Sign in by username and by email (any case); wrong passwords fail.
	b := env.Client()
	b.Login("alice", "secret123")
	e := env.Client()
	e.Login("ALICE@example.com", "secret123")
	bad := env.Client().Do("POST", "/api/auth/login", map[string]any{"username": "alice", "password": "wrong-pass", "turnstileToken": apitest.BotToken})
	if bad.Status != 401 || bad.Message() != "Invalid username or password" {
		t.Fatalf("bad password: %d %s", bad.Status, bad.Raw)
	}
	nobody := env.Client().Do("POST", "/api/auth/login", map[string]any{"username": "nobody", "password": "secret123", "turnstileToken": apitest.BotToken})
	if nobody.Status != 401 || nobody.Message() != "Invalid username or password" {
		t.Fatalf("unknown user: %d %s", nobody.Status, nobody.Raw)
	}
	noBot := env.Client().Do("POST", "/api/auth/login", map[string]any{"username": "alice", "password": "secret123"})
	if noBot.Status != 400 || noBot.Message() != "Please complete the Turnstile verification" {
		t.Fatalf("login without bot check: %d %s", noBot.Status, noBot.Raw)
	}

	me := b.Do("GET", "/api/auth/user", nil)
	if me.Status != 200 || me.Str("user.username") != "alice" {
		t.Fatalf("GET user: %d %s", me.Status, me.Raw)
	}
	anon := env.Client().Do("GET", "/api/auth/user", nil)
	if anon.Status != 401 || anon.Message() != "No authentication token, access denied" {
		t.Fatalf("anonymous: %d %s", anon.Status, anon.Raw)
	}

	ref := b.Do("POST", "/api/auth/refresh", map[string]any{"refreshToken": b.RefreshToken})
	if ref.Status != 200 || ref.Str("token") == "" || ref.Str("user.username") != "alice" ||
		ref.Str("refreshToken") == "" || ref.Str("refreshToken") == b.RefreshToken {
		t.Fatalf("refresh: %d %s", ref.Status, ref.Raw)
	}
	b.Token, b.RefreshToken = ref.Str("token"), ref.Str("refreshToken")
	if res := b.Do("GET", "/api/auth/user", nil); res.Status != 200 {
		t.Fatalf("refreshed token refused: %d", res.Status)
	}

	if res := b.Do("POST", "/api/auth/logout", map[string]any{"refreshToken": b.RefreshToken}); res.Status != 200 {
		t.Fatalf("logout: %d %s", res.Status, res.Raw)
	}
	if res := b.Do("GET", "/api/auth/user", nil); res.Status != 401 {
		t.Fatalf("access token of a logged-out session: %d", res.Status)
	}
	// Bets check the session inside their own transaction: refused alike,
	// before any other refusal, and nothing is placed.
	for _, bet := range []struct{ path, body string }{
		{"/api/games/dice", `{"betAmount": 1, "rollTarget": 50}`},
		{"/api/games/dice", `{"betAmount": 1, "rollTarget": 1}`},
		{"/api/games/keno", `{"betAmount": 100000, "selectedNumbers": [1], "riskLevel": "low"}`},
		{"/api/games/mines/start", `{"betAmount": 1, "mineCount": 3}`},
		{"/api/games/blackjack/start", `{"betAmount": 100000}`},
	} {
		if res := b.Do("POST", bet.path, bet.body); res.Status != 401 || res.Message() != "Token is not valid" {
			t.Fatalf("%s %s from a logged-out session: %d %s", bet.path, bet.body, res.Status, res.Raw)
		}
	}
	var placed int
	if err := env.App.Postgres.QueryRow(context.Background(),
		`SELECT count(*) FROM bets b JOIN users u ON u.id = b.user_id WHERE u.username = 'alice'`).Scan(&placed); err != nil || placed != 0 {
		t.Fatalf("bets placed from a logged-out session: %d %v", placed, err)
	}
	if res := b.Do("POST", "/api/auth/refresh", map[string]any{"refreshToken": b.RefreshToken}); res.Status != 401 {
		t.Fatalf("refresh after logout: %d", res.Status)
	}
	// Other sessions are untouched.
	if res := e.Do("GET", "/api/auth/user", nil); res.Status != 200 {
		t.Fatalf("other session after logout: %d", res.Status)
	}
	if res := b.Do("POST", "/api/auth/refresh", map[string]any{}); res.Status != 400 || res.Message() != "Refresh token is required" {
		t.Fatalf("refresh without token: %d %s", res.Status, res.Raw)
	}
	if res := b.Do("POST", "/api/auth/refresh", map[string]any{"refreshToken": "garbage"}); res.Status != 401 {
		t.Fatalf("refresh with garbage: %d", res.Status)
	}
}

func TestExpiry(t *testing.T) {
	t.Parallel()
	// A lifetime longer than the idle time, so that idling is what ends the
	// session here (test/security covers the lifetime).
	env := apitest.Start(t, apitest.WithConfig(func(c *settings.Config) { c.SessionMaxLifetime = 90 * 24 * time.Hour }))
	c := env.Client()
	c.Register("bob")
	env.Clock.Advance(16 * time.Minute)
	if res := c.Do("GET", "/api/auth/user", nil); res.Status != 401 {
		t.Fatalf("access token after 16 minutes: %d", res.Status)
	}
	ref := c.Do("POST", "/api/auth/refresh", map[string]any{"refreshToken": c.RefreshToken})
	if ref.Status != 200 {
		t.Fatalf("refresh within 30 days: %d %s", ref.Status, ref.Raw)
	}
	c.Token, c.RefreshToken = ref.Str("token"), ref.Str("refreshToken")
	env.Clock.Advance(29 * 24 * time.Hour)
	ref = c.Do("POST", "/api/auth/refresh", map[string]any{"refreshToken": c.RefreshToken})
	if ref.Status != 200 {
		t.Fatalf("refresh after 29 idle days: %d", ref.Status)
	}
	c.Token, c.RefreshToken = ref.Str("token"), ref.Str("refreshToken")
	env.Clock.Advance(30*24*time.Hour + time.Minute)
	res := c.Do("POST", "/api/auth/refresh", map[string]any{"refreshToken": c.RefreshToken})
	if res.Status != 401 || res.Message() != "Session expired, please log in again" {
		t.Fatalf("refresh after 30 idle days: %d %s", res.Status, res.Raw)
	}
}

func TestSessionsAndRevocation(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	a := env.Client()
	a.Register("carol")
	phone := env.Client()
	phone.UserAgent = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1"
	phone.Login("carol", "secret123")
	third := env.Client()
	third.UserAgent = ""
	third.Login("carol", "secret123")

	list := a.Do("GET", "/api/auth/sessions", nil)
	sessions, _ := list.Body["sessions"].([]any)
	if list.Status != 200 || len(sessions) != 3 {
		t.Fatalf("sessions: %d %s", list.Status, list.Raw)
	}
	var phoneID, thirdID string
	for _, s := range sessions {
		m := s.(map[string]any)
		d := m["deviceInfo"].(map[string]any)
		for _, k := range []string{"_id", "lastUsedAt", "ipAddress"} {
			if _, ok := m[k]; !ok {
				t.Fatalf("session lacks %s: %v", k, m)
			}
		}
		if m["ipAddress"] != "127.0.0.1" || m["ipScope"] != "loopback" {
			t.Fatalf("ip %v, scope %v", m["ipAddress"], m["ipScope"])
		}
		switch d["mobile"] {
		case "Mobile":
			phoneID = m["_id"].(string)
			if d["platform"] != "iOS" || d["browser"] != "Safari" {
				t.Fatalf("phone device %v", d)
			}
		case "Desktop":
			if d["userAgent"] == "" {
				thirdID = m["_id"].(string)
			} else if d["browser"] != "Chrome" || d["platform"] != "Linux" {
				t.Fatalf("desktop device %v", d)
			}
		default:
			t.Fatalf("mobile field %v", d["mobile"])
		}
	}
	if phoneID == "" || thirdID == "" {
		t.Fatalf("sessions not told apart: %s", list.Raw)
	}

	// Revoking one session refuses its access token on the very next call.
	if res := a.Do("POST", "/api/auth/revoke-session", map[string]any{"sessionId": phoneID}); res.Status != 200 {
		t.Fatalf("revoke: %d %s", res.Status, res.Raw)
	}
	if res := phone.Do("GET", "/api/auth/user", nil); res.Status != 401 {
		t.Fatalf("revoked session's token: %d", res.Status)
	}
	if res := phone.Do("POST", "/api/auth/refresh", map[string]any{"refreshToken": phone.RefreshToken}); res.Status != 401 {
		t.Fatalf("revoked session's refresh: %d", res.Status)
	}
	if res := a.Do("POST", "/api/auth/revoke-session", map[string]any{"sessionId": phoneID}); res.Status != 404 {
		t.Fatalf("revoke twice: %d", res.Status)
	}
	if res := a.Do("POST", "/api/auth/revoke-session", map[string]any{"sessionId": "nope"}); res.Status != 400 {
		t.Fatalf("bad id: %d", res.Status)
	}
	// Another user's session cannot be revoked.
	mallory := env.Client()
	mallory.Register("mallory")
	if res := mallory.Do("POST", "/api/auth/revoke-session", map[string]any{"sessionId": thirdID}); res.Status != 404 {
		t.Fatalf("foreign revoke: %d", res.Status)
	}
	if res := third.Do("GET", "/api/auth/user", nil); res.Status != 200 {
		t.Fatalf("foreign revoke took effect: %d", res.Status)
	}

	// Revoke all others keeps the session of the refresh token given.
	a2 := env.Client()
	a2.Login("carol", "secret123")
	res := a.Do("POST", "/api/auth/revoke-other-sessions", map[string]any{"currentRefreshToken": a.RefreshToken})
	if res.Status != 200 || fmt.Sprint(res.Get("revoked")) != "2" {
		t.Fatalf("revoke others: %d %s", res.Status, res.Raw)
	}
	for _, c := range []*apitest.Client{third, a2} {
		if res := c.Do("GET", "/api/auth/user", nil); res.Status != 401 {
			t.Fatalf("revoked-by-others token: %d", res.Status)
		}
	}
	if res := a.Do("GET", "/api/auth/sessions", nil); res.Status != 200 || len(res.Body["sessions"].([]any)) != 1 {
		t.Fatalf("after revoke others: %s", res.Raw)
	}
}

func TestChangePassword(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	c := env.Client()
	c.Register("dave")
	other := env.Client()
	other.Login("dave", "secret123")
	cases := []struct {
		body map[string]any
		msg  string
	}{
		{map[string]any{"newPassword": "Abcdef1!"}, "Current password is required"},
		{map[string]any{"currentPassword": "secret123"}, "New password is required"},
		{map[string]any{"currentPassword": "secret123", "newPassword": 12345678}, "Password is required"},
		{map[string]any{"currentPassword": "secret123", "newPassword": "Ab1!"}, "Password must be at least 6 characters long"},
		{map[string]any{"currentPassword": "secret123", "newPassword": "Ab1!" + strings.Repeat("x", 125)}, "Password must not exceed 128 characters"},
		{map[string]any{"currentPassword": "secret123", "newPassword": "abcdef1!"}, "Password must contain at least one uppercase letter, one lowercase letter, one number, and one special character"},
		{map[string]any{"currentPassword": "secret123", "newPassword": "ABCDEF1!"}, "Password must contain at least one uppercase letter, one lowercase letter, one number, and one special character"},
		{map[string]any{"currentPassword": "secret123", "newPassword": "Abcdefg!"}, "Password must contain at least one uppercase letter, one lowercase letter, one number, and one special character"},
		{map[string]any{"currentPassword": "secret123", "newPassword": "Abcdef12"}, "Password must contain at least one uppercase letter, one lowercase letter, one number, and one special character"},
		{map[string]any{"currentPassword": "secret123", "newPassword": "Abcdef1~"}, "Password must contain at least one uppercase letter, one lowercase letter, one number, and one special character"},
		{map[string]any{"currentPassword": "wrong-one", "newPassword": "Abcdef1!"}, "Current password is incorrect"},
	}
	for _, tc := range cases {
		res := c.Do("POST", "/api/auth/change-password", tc.body)
		if res.Status != 400 || res.Message() != tc.msg {
			t.Fatalf("%v: got %d %q, want %q", tc.body, res.Status, res.Message(), tc.msg)
		}
	}
	if res := other.Do("GET", "/api/auth/user", nil); res.Status != 200 {
		t.Fatal("failed changes must not revoke sessions")
	}
	res := c.Do("POST", "/api/auth/change-password", map[string]any{"currentPassword": "secret123", "newPassword": `Abcdef1"`})
	if res.Status != 200 {
		t.Fatalf("change: %d %s", res.Status, res.Raw)
	}
	if res := other.Do("GET", "/api/auth/user", nil); res.Status != 401 {
		t.Fatalf("other session after password change: %d", res.Status)
	}
	if res := c.Do("GET", "/api/auth/user", nil); res.Status != 200 {
		t.Fatalf("current session after password change: %d", res.Status)
	}
	if res := env.Client().Do("POST", "/api/auth/login", map[string]any{"username": "dave", "password": "secret123", "turnstileToken": apitest.BotToken}); res.Status != 401 {
		t.Fatalf("old password still works: %d", res.Status)
	}
	env.Client().Login("dave", `Abcdef1"`)
	if res := env.Client().Do("POST", "/api/auth/change-password", map[string]any{"currentPassword": "a", "newPassword": "b"}); res.Status != 401 {
		t.Fatalf("anonymous change: %d", res.Status)
	}
}

func TestConcurrentRegistrationOfOneUsername(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	const n = 20
	statuses := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		c := env.Client()
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses[i] = c.Do("POST", "/api/auth/register", reg("racer", fmt.Sprintf("racer%d@example.com", i), "secret1")).Status
		}()
	}
	wg.Wait()
	ok, conflict := 0, 0
	for _, s := range statuses {
		switch s {
		case 200:
			ok++
		case 409:
			conflict++
		}
	}
	if ok != 1 || conflict != n-1 {
		t.Fatalf("statuses %v: want exactly one 200 and %d 409", statuses, n-1)
	}
}

func TestRateLimits(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t, apitest.WithConfig(func(c *settings.Config) {
		c.LoginPerIP = settings.Rate{N: 5, Period: time.Minute}
		c.LoginPerAccountIP = settings.Rate{N: 3, Period: time.Minute}
		c.RegisterPerIP = settings.Rate{N: 2, Period: time.Hour}
	}))
	c := env.Client()
	c.Register("erin")
	c.Register("frank")
	res := c.Do("POST", "/api/auth/register", reg("grace", "grace@example.com", "secret1"))
	if res.Status != 429 || res.Header.Get("Retry-After") == "" || res.Message() != accounts.ErrRateLimited {
		t.Fatalf("third registration: %d %v %s", res.Status, res.Header, res.Raw)
	}
	// Per account and IP: the fourth attempt on erin is refused even with the right password.
	for range 3 {
		c.Do("POST", "/api/auth/login", map[string]any{"username": "erin", "password": "wrong-one", "turnstileToken": apitest.BotToken})
	}
	res = c.Do("POST", "/api/auth/login", map[string]any{"username": "erin", "password": "secret123", "turnstileToken": apitest.BotToken})
	if res.Status != 429 || res.Header.Get("Retry-After") == "" {
		t.Fatalf("fourth login on one username: %d %s", res.Status, res.Raw)
	}
	// Per IP: frank is allowed once more, then the IP is out of attempts.
	if res := c.Do("POST", "/api/auth/login", map[string]any{"username": "frank", "password": "secret123", "turnstileToken": apitest.BotToken}); res.Status != 200 {
		t.Fatalf("fifth login from the IP: %d %s", res.Status, res.Raw)
	}
	if res := c.Do("POST", "/api/auth/login", map[string]any{"username": "frank", "password": "secret123", "turnstileToken": apitest.BotToken}); res.Status != 429 {
		t.Fatalf("sixth login from the IP: %d %s", res.Status, res.Raw)
	}
}

func TestCSRF(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	// No cookie and no header.
	req, _ := http.NewRequest("POST", env.URL+"/api/auth/login", strings.NewReader(`{}`))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 403 {
		t.Fatalf("no csrf: %d", res.StatusCode)
	}
	c := env.Client()
	if c.CSRF() == "" {
		t.Fatal("GET /api/csrf set no cookie")
	}
	// Cookie but a wrong header.
	req, _ = http.NewRequest("POST", env.URL+"/api/auth/login", strings.NewReader(`{}`))
	req.AddCookie(&http.Cookie{Name: "fairplay_csrf", Value: c.CSRF()})
	req.Header.Set("X-CSRF-Token", strings.Repeat("x", 43))
	res, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 403 {
		t.Fatalf("wrong csrf header: %d", res.StatusCode)
	}
	// The apitest client sends both; check the body text once.
	raw := env.Client()
	req, _ = http.NewRequest("POST", env.URL+"/api/auth/logout", strings.NewReader(`{"refreshToken":"x"}`))
	req.AddCookie(&http.Cookie{Name: "fairplay_csrf", Value: raw.CSRF()})
	res, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var body struct{ Message string }
	_ = jsonDecode(res, &body)
	if res.StatusCode != 403 || body.Message != "Invalid CSRF token" {
		t.Fatalf("missing header: %d %q", res.StatusCode, body.Message)
	}
	// Any GET under /api sets the cookie.
	g, err := http.Get(env.URL + "/api/auth/config")
	if err != nil {
		t.Fatal(err)
	}
	g.Body.Close()
	if !strings.Contains(g.Header.Get("Set-Cookie"), "fairplay_csrf=") {
		t.Fatalf("GET /api/auth/config set no csrf cookie: %v", g.Header)
	}
}

func TestConnectServesTheSameHandlers(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	client := fairplayv1connect.NewAuthServiceClient(http.DefaultClient, env.URL, connect.WithProtoJSON())
	ctx := context.Background()
	_, err := client.Register(ctx, connect.NewRequest(&fairplayv1.RegisterRequest{Username: "Xavier", Email: "x@example.com", Password: "secret1", TurnstileToken: apitest.BotToken}))
	if connect.CodeOf(err) != connect.CodeInvalidArgument || !strings.Contains(err.Error(), "Username can only contain lowercase letters, numbers, and underscores") {
		t.Fatalf("connect validation error: %v", err)
	}
	res, err := client.Register(ctx, connect.NewRequest(&fairplayv1.RegisterRequest{Username: "heidi", Email: "heidi@example.com", Password: "secret1", TurnstileToken: apitest.BotToken}))
	if err != nil {
		t.Fatal(err)
	}
	if res.Msg.GetUser().GetBalance() != "1000" {
		t.Fatalf("balance over connect: %q", res.Msg.GetUser().GetBalance())
	}
	req := connect.NewRequest(&fairplayv1.GetUserRequest{})
	req.Header().Set("Authorization", "Bearer "+res.Msg.GetToken())
	me, err := client.GetUser(ctx, req)
	if err != nil || me.Msg.GetUser().GetUsername() != "heidi" {
		t.Fatalf("GetUser over connect: %v %v", me, err)
	}
	// The JSON route accepts the token minted over Connect.
	c := env.Client()
	c.Token = res.Msg.GetToken()
	if r := c.Do("GET", "/api/auth/user", nil); r.Status != 200 {
		t.Fatalf("/api with a connect token: %d", r.Status)
	}
	_, err = client.GetUser(ctx, connect.NewRequest(&fairplayv1.GetUserRequest{}))
	if connect.CodeOf(err) != connect.CodeUnauthenticated {
		t.Fatalf("connect without token: %v", err)
	}
}

func TestHealthAndMetrics(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	for _, p := range []string{"/healthz", "/readyz"} {
		res, err := http.Get(env.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 200 {
			t.Fatalf("%s: %d", p, res.StatusCode)
		}
		if rid := res.Header.Get("X-Request-Id"); rid == "" {
			t.Fatalf("%s: no request id", p)
		}
	}
	env.Client().Do("GET", "/api/auth/user", nil)
	res, err := http.Get(env.MetricsURL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body := readAll(res)
	for _, want := range []string{
		`fairplay_http_requests_total{code="401",method="GET",route="GET /api/auth/user"} 1`,
		`fairplay_http_request_duration_seconds_bucket{method="GET",route="GET /api/auth/user"`,
		`fairplay_pg_pool_connections{state="idle"}`,
		`fairplay_redis_pool_connections`,
		`fairplay_bet_batches_total 0`,
		`fairplay_bet_batched_bets_total 0`,
	} {
		if !strings.Contains(body, want) {
			t.Fatalf("metrics lack %s", want)
		}
	}
	// No batch has run: the statements' time is exactly 0.
	for _, name := range []string{"fairplay_bet_batch_seconds_total", "fairplay_action_batch_seconds_total"} {
		if !regexp.MustCompile(`(?m)^` + name + ` 0$`).MatchString(body) {
			t.Fatalf("metrics lack %s 0", name)
		}
	}
}
