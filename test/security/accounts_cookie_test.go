package security_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"connectrpc.com/connect"

	fairplayv1 "github.com/fairplay/fairplay/internal/gen/fairplay/v1"
	"github.com/fairplay/fairplay/internal/gen/fairplay/v1/fairplayv1connect"
	"github.com/fairplay/fairplay/internal/rpc"
	"github.com/fairplay/fairplay/internal/settings"
	"github.com/fairplay/fairplay/test/apitest"
)

// The web app keeps its refresh token in an HttpOnly cookie (README, "Token
// storage"): whatever a script in the page sends, no answer hands it the
// refresh token, so an injected script cannot carry the session away.

// cookieMode is the header the web app sends to have its refresh token
// kept in the cookie.
func cookieMode(r *http.Request) { r.Header.Set(rpc.RefreshCookieHeader, "1") }

// setCookie is the Set-Cookie of res named name, nil if none.
func setCookie(t *testing.T, res apitest.Response, name string) *http.Cookie {
	t.Helper()
	for _, line := range res.Header.Values("Set-Cookie") {
		c, err := http.ParseSetCookie(line)
		if err != nil {
			t.Fatalf("Set-Cookie %q: %v", line, err)
		}
		if c.Name == name {
			return c
		}
	}
	return nil
}

// expectSessionCookies checks res set the session cookie (HttpOnly) and the
// hint a script may read, with the attributes that keep them first-party,
// and returns the session cookie's token.
func expectSessionCookies(t *testing.T, res apitest.Response, name, what string) string {
	t.Helper()
	hintName := rpc.SignedInCookie
	if name == rpc.SecureSessionCookie {
		hintName = rpc.SecureSignedInCookie
	}
	t.Helper()
	if s := res.Str("refreshToken"); s != "" {
		t.Fatalf("%s: the body holds the refresh token: %s", what, res.Raw)
	}
	if res.Str("token") == "" {
		t.Fatalf("%s: no access token: %s", what, res.Raw)
	}
	session, hint := setCookie(t, res, name), setCookie(t, res, hintName)
	if session == nil || hint == nil {
		t.Fatalf("%s: Set-Cookie %q, want %s and %s", what, res.Header.Values("Set-Cookie"), name, hintName)
	}
	if !session.HttpOnly || hint.HttpOnly {
		t.Fatalf("%s: HttpOnly session %t, hint %t; want the session's only", what, session.HttpOnly, hint.HttpOnly)
	}
	for _, c := range []*http.Cookie{session, hint} {
		if c.SameSite != http.SameSiteStrictMode || c.Path != "/" || c.Domain != "" || c.MaxAge < 29*24*3600 {
			t.Fatalf("%s: cookie %s: SameSite %v, Path %q, Domain %q, Max-Age %d", what, c.Name, c.SameSite, c.Path, c.Domain, c.MaxAge)
		}
	}
	if len(session.Value) < 32 || hint.Value != "1" {
		t.Fatalf("%s: session cookie %d characters, hint %q", what, len(session.Value), hint.Value)
	}
	return session.Value
}

// expectCleared checks res told the browser to drop both cookies.
func expectCleared(t *testing.T, res apitest.Response, name, what string) {
	t.Helper()
	hintName := rpc.SignedInCookie
	if name == rpc.SecureSessionCookie {
		hintName = rpc.SecureSignedInCookie
	}
	for _, n := range []string{name, hintName} {
		if c := setCookie(t, res, n); c == nil || c.MaxAge >= 0 || c.Value != "" {
			t.Fatalf("%s: cookie %s not cleared: Set-Cookie %q", what, n, res.Header.Values("Set-Cookie"))
		}
	}
}

func TestRefreshTokenStaysInTheCookie(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	owner := env.Client()
	owner.Register("cookie_owner")
	owner.Token = ""

	res := owner.DoWith("POST", "/api/auth/login", map[string]any{
		"username": "cookie_owner", "password": "secret123", "turnstileToken": apitest.BotToken,
	}, cookieMode)
	expectStatus(t, res, 200, "sign-in asking for the cookie")
	first := expectSessionCookies(t, res, rpc.SessionCookie, "sign-in")
	owner.Token = res.Str("token")

	// A script in the page calls refresh as an API client would: the
	// browser adds the cookie, and the answer still keeps the token in it.
	res = owner.Do("POST", "/api/auth/refresh", map[string]any{})
	expectStatus(t, res, 200, "refresh by the cookie without asking for it")
	second := expectSessionCookies(t, res, rpc.SessionCookie, "refresh by the cookie")
	if second == first {
		t.Fatal("refresh by the cookie did not rotate the refresh token")
	}
	if res.Str("user.username") != "cookie_owner" {
		t.Fatalf("refresh by the cookie: user %s", res.Raw)
	}

	// Nor over Connect, to a script that speaks it.
	auth := fairplayv1connect.NewAuthServiceClient(http.DefaultClient, env.URL)
	req := connect.NewRequest(&fairplayv1.RefreshRequest{})
	req.Header().Set("Cookie", rpc.SessionCookie+"="+second)
	cres, err := auth.Refresh(context.Background(), req)
	if err != nil {
		t.Fatalf("Connect refresh by the cookie: %v", err)
	}
	if cres.Msg.GetRefreshToken() != "" || cres.Msg.GetToken() == "" {
		t.Fatalf("Connect refresh by the cookie: refresh token %q, token %q", cres.Msg.GetRefreshToken(), cres.Msg.GetToken())
	}
	third := ""
	for _, line := range cres.Header().Values("Set-Cookie") {
		if c, err := http.ParseSetCookie(line); err == nil && c.Name == rpc.SessionCookie {
			third = c.Value
		}
	}
	if third == "" || third == second {
		t.Fatalf("Connect refresh by the cookie set no new session cookie: %q", cres.Header().Values("Set-Cookie"))
	}

	// The owner's jar still holds the second token, which Connect retired:
	// presenting it again is a reuse, which ends the session and clears
	// the cookies, as for a refresh token sent in a body.
	res = owner.Do("POST", "/api/auth/refresh", map[string]any{})
	expectStatus(t, res, 401, "the retired cookie")
	expectCleared(t, res, rpc.SessionCookie, "the retired cookie")
	res = owner.DoWith("POST", "/api/auth/refresh", map[string]any{}, func(r *http.Request) {
		r.Header.Set("Cookie", rpc.SessionCookie+"="+third+"; fairplay_csrf="+owner.CSRF())
	})
	expectStatus(t, res, 401, "the current token of a session ended by a reuse")
}

func TestSessionCookieNeedsTheAntiForgeryHeader(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	c := env.Client()
	c.Register("cookie_forged")
	res := c.DoWith("POST", "/api/auth/refresh", map[string]any{"refreshToken": c.RefreshToken}, cookieMode)
	expectStatus(t, res, 200, "moving a session into the cookie")
	expectSessionCookies(t, res, rpc.SessionCookie, "refresh moving the session into the cookie")

	// A cross-site page can make the browser send the cookie, but not the
	// anti-forgery header, nor the Connect protocol header.
	for _, forged := range []struct {
		path string
		edit func(*http.Request)
	}{
		{"/api/auth/refresh", func(r *http.Request) { r.Header.Del("X-CSRF-Token") }},
		{"/api/auth/logout", func(r *http.Request) { r.Header.Del("X-CSRF-Token") }},
		{"/fairplay.v1.AuthService/Refresh", func(r *http.Request) { r.Header.Del("X-CSRF-Token") }},
		{"/fairplay.v1.AuthService/Logout", func(r *http.Request) { r.Header.Del("X-CSRF-Token") }},
	} {
		res := c.DoWith("POST", forged.path, map[string]any{}, forged.edit)
		if res.Status == 200 || setCookie(t, res, rpc.SessionCookie) != nil {
			t.Fatalf("%s without the anti-forgery or protocol header: %d %s, Set-Cookie %q",
				forged.path, res.Status, res.Raw, res.Header.Values("Set-Cookie"))
		}
	}
	// None of them spent the cookie's token or ended the session.
	expectStatus(t, c.Do("POST", "/api/auth/refresh", map[string]any{}), 200, "refresh after the forged calls")

	// Logging out by the cookie ends the session and clears the cookies.
	res = c.Do("POST", "/api/auth/logout", map[string]any{})
	expectStatus(t, res, 200, "logout by the cookie")
	expectCleared(t, res, rpc.SessionCookie, "logout by the cookie")
	if res := c.Do("GET", "/api/auth/user", nil); res.Status != 401 {
		t.Fatalf("the access token of a session logged out by the cookie: %d %s", res.Status, res.Raw)
	}
	res = c.Do("POST", "/api/auth/refresh", map[string]any{})
	expectStatus(t, res, 400, "refresh without a body token or a cookie")
}

// Over HTTPS the session cookie is __Host- prefixed and Secure: no sibling
// subdomain or plain-http page can set or shadow it.
func TestSecureSessionCookieIsHostOnly(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t, apitest.WithConfig(func(c *settings.Config) { c.SecureCookies = true }))
	c := env.Client()
	c.Register("cookie_secure")
	res := c.DoWith("POST", "/api/auth/refresh", map[string]any{"refreshToken": c.RefreshToken}, cookieMode)
	expectStatus(t, res, 200, "refresh asking for the cookie")
	token := expectSessionCookies(t, res, rpc.SecureSessionCookie, "refresh over HTTPS")
	for _, name := range []string{rpc.SecureSessionCookie, rpc.SecureSignedInCookie} {
		if !setCookie(t, res, name).Secure {
			t.Fatalf("cookie %s is not Secure", name)
		}
	}
	// The plain name is not read: a page on plain http could have set it.
	withCookie := func(cookie string) func(*http.Request) {
		return func(r *http.Request) { r.Header.Set("Cookie", cookie+"; fairplay_csrf="+c.CSRF()) }
	}
	res = c.DoWith("POST", "/api/auth/refresh", map[string]any{}, withCookie(rpc.SessionCookie+"="+token))
	expectStatus(t, res, 400, "refresh with the plain-named cookie over HTTPS")
	res = c.DoWith("POST", "/api/auth/refresh", map[string]any{}, withCookie(rpc.SecureSessionCookie+"="+token))
	expectStatus(t, res, 200, "refresh with the __Host- cookie")
	expectSessionCookies(t, res, rpc.SecureSessionCookie, "refresh by the __Host- cookie")
}

// A refresh the server cannot answer for the moment (a rate limit) keeps
// the browser's cookies: only a refusal of the token clears them.
func TestRateLimitedCookieRefreshKeepsTheCookie(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t, apitest.WithConfig(func(c *settings.Config) {
		c.SessionPerIP = settings.Rate{N: 2, Period: time.Minute}
	}))
	c := env.Client()
	c.Register("cookie_limited")
	expectStatus(t, c.DoWith("POST", "/api/auth/refresh", map[string]any{"refreshToken": c.RefreshToken}, cookieMode), 200, "first refresh")
	expectStatus(t, c.Do("POST", "/api/auth/refresh", map[string]any{}), 200, "second refresh")
	res := c.Do("POST", "/api/auth/refresh", map[string]any{})
	expectStatus(t, res, 429, "third refresh in a minute")
	if cookies := res.Header.Values("Set-Cookie"); len(cookies) != 0 {
		t.Fatalf("a rate-limited refresh set cookies: %q", cookies)
	}
	if c.Cookie(rpc.SessionCookie) == "" || c.Cookie(rpc.SignedInCookie) != "1" {
		t.Fatal("the cookies are gone after a rate-limited refresh")
	}

	// A logout refused for the moment still clears them: whoever used up
	// the address's limit (someone behind the same NAT) must not leave the
	// browser holding a session its owner believes ended.
	res = c.Do("POST", "/api/auth/logout", map[string]any{})
	expectStatus(t, res, 429, "a logout past the limit")
	expectCleared(t, res, rpc.SessionCookie, "a rate-limited logout by the cookie")
	if c.Cookie(rpc.SessionCookie) != "" || c.Cookie(rpc.SignedInCookie) != "" {
		t.Fatal("the browser still holds the session after a rate-limited logout")
	}
}

// A refused refresh token sent in the body (an older app's, to move into
// the cookie) leaves the cookie of the browser's session alone.
func TestRefusedBodyTokenKeepsTheCookie(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	c := env.Client()
	c.Register("cookie_body")
	stale := c.RefreshToken
	expectStatus(t, c.DoWith("POST", "/api/auth/refresh", map[string]any{"refreshToken": stale}, cookieMode), 200, "moving the session into the cookie")
	other := env.Client()
	other.Register("cookie_body_other")
	res := c.DoWith("POST", "/api/auth/refresh", map[string]any{"refreshToken": "not-a-token-of-anyone"}, cookieMode)
	expectStatus(t, res, 401, "an unknown body token")
	if cookies := res.Header.Values("Set-Cookie"); len(cookies) != 0 {
		t.Fatalf("a refused body token changed the cookies: %q", cookies)
	}
	res = c.Do("POST", "/api/auth/refresh", map[string]any{})
	expectStatus(t, res, 200, "the cookie's session after a refused body token")
	if res.Str("user.username") != "cookie_body" {
		t.Fatalf("the cookie's session is %s", res.Raw)
	}
}
