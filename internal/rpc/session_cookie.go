package rpc

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/fairplay/fairplay/internal/problem"
)

// The web app's refresh token lives in an HttpOnly cookie the server sets,
// out of reach of any script in the page: an injected script can use the
// session while the page is open, but cannot carry the refresh token away
// and keep the account for 30 days. API clients keep sending and receiving
// refresh tokens in JSON bodies, as SPEC.md's table gives them.
//
// A login, registration or refresh asks for the cookie with the header
// RefreshCookieHeader: 1. Its answer then sets the session cookie and the
// hint cookie, and its body's refreshToken is empty. A refresh or logout
// whose body has no refresh token uses the cookie, and a refresh token read
// from the cookie is never written to a body, whatever the request asks:
// else a script in the page could call /api/auth/refresh without the header
// and read the rotated token from the answer.
//
// The cookie is only read by refresh and logout, POSTs that need the
// anti-forgery header (/api) or the Connect protocol header: a cross-site
// page can make neither, and SameSite=Strict keeps the cookie off
// cross-site requests anyway. Over HTTPS (FAIRPLAY_SECURE_COOKIES) its name
// has the __Host- prefix, which a sibling subdomain or a plain-http page
// cannot set or shadow.
const (
	// RefreshCookieHeader asks for the refresh token in the session cookie.
	RefreshCookieHeader = "X-Fairplay-Refresh-Cookie"
	// SessionCookie holds the refresh token (HttpOnly); SecureSessionCookie
	// is its name over HTTPS.
	SessionCookie       = "fairplay_session"
	SecureSessionCookie = "__Host-fairplay_session"
	// SignedInCookie tells the web app, which cannot read the session
	// cookie, that there is one: a page load then refreshes to sign in,
	// and a guest's page load sends no refresh at all. SecureSignedInCookie
	// is its name over HTTPS, which no other site can plant.
	SignedInCookie       = "fairplay_signed_in"
	SecureSignedInCookie = "__Host-fairplay_signed_in"
	// sessionCookieAge is how long the cookies last without a refresh:
	// sessions expire after 30 days of inactivity (SPEC.md §3).
	sessionCookieAge = 30 * 24 * time.Hour
)

// sessionCookies writes and reads the session cookie of one server.
type sessionCookies struct{ secure bool }

func (s sessionCookies) name() string {
	if s.secure {
		return SecureSessionCookie
	}
	return SessionCookie
}

func (s sessionCookies) hintName() string {
	if s.secure {
		return SecureSignedInCookie
	}
	return SignedInCookie
}

// wanted reports whether the request asks for the refresh token in the cookie.
func (sessionCookies) wanted(h http.Header) bool { return h.Get(RefreshCookieHeader) == "1" }

// token is the refresh token of the request's session cookie, "" if none.
func (s sessionCookies) token(h http.Header) string {
	if len(h.Values("Cookie")) == 0 {
		return ""
	}
	for _, c := range (&http.Request{Header: h}).CookiesNamed(s.name()) {
		if c.Value != "" {
			return c.Value
		}
	}
	return ""
}

// set adds the cookies of a session whose refresh token is token to h.
func (s sessionCookies) set(h http.Header, token string) {
	s.write(h, token, int(sessionCookieAge/time.Second))
}

// clear adds the cookies that end the browser's session to h.
func (s sessionCookies) clear(h http.Header) { s.write(h, "", -1) }

func (s sessionCookies) write(h http.Header, token string, maxAge int) {
	hint := ""
	if maxAge > 0 {
		hint = "1"
	}
	for _, c := range []*http.Cookie{
		{Name: s.name(), Value: token, HttpOnly: true},
		{Name: s.hintName(), Value: hint},
	} {
		c.Path, c.MaxAge, c.Secure, c.SameSite = "/", maxAge, s.secure, http.SameSiteStrictMode
		h.Add("Set-Cookie", c.String())
	}
}

// refusal returns err as the caller sees it, with the cookies that end
// the browser's session when err refuses its refresh token (not when the
// server cannot answer for the moment: a 429, a database failing over).
func (s sessionCookies) refusal(ctx context.Context, log *slog.Logger, err error) error {
	p, ok := problem.As(err)
	if !ok || (p.Kind != problem.KindUnauthenticated && p.Kind != problem.KindInvalid) {
		return err
	}
	return s.cleared(ctx, log, err)
}

// cleared returns err as the caller sees it, with the cookies that end the
// browser's session.
func (s sessionCookies) cleared(ctx context.Context, log *slog.Logger, err error) error {
	ce := connectError(ctx, log, err)
	s.clear(ce.Meta())
	return ce
}
