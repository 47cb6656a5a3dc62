package rpc

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
)

// CSRF cookie and header names fixed by DESIGN.md.
const (
	CSRFCookie = "fairplay_csrf"
	CSRFHeader = "X-CSRF-Token"
)

type csrfKey struct{}

// CSRF is the double-submit anti-forgery check for /api: every GET (and
// HEAD) sets the fairplay_csrf cookie when it is missing, and every other
// method must echo the cookie's value in X-CSRF-Token, else 403
// {"message": "Invalid CSRF token"}. A forging site can make the browser send
// the cookie but cannot read it to set the header.
//
// A request may carry more than one fairplay_csrf cookie: one planted by a
// sibling subdomain or over plain http (Domain=.parent, a longer Path) is
// sent before the server's own. The header may match any of them; checking
// only the first let a planted cookie fail every bet and game action of
// that browser until its cookies were cleared (found by a review). It
// gives a forger nothing: whoever plants a cookie still cannot set the
// header cross-site.
func CSRF(secure bool) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch r.Method {
			case http.MethodGet, http.MethodHead, http.MethodOptions:
				token := ""
				for _, c := range r.CookiesNamed(CSRFCookie) {
					if len(c.Value) >= 32 {
						token = c.Value
						break
					}
				}
				if token == "" {
					b := make([]byte, 32)
					_, _ = rand.Read(b)
					token = base64.RawURLEncoding.EncodeToString(b)
					http.SetCookie(w, &http.Cookie{Name: CSRFCookie, Value: token, Path: "/", SameSite: http.SameSiteStrictMode,
						Secure: secure, MaxAge: 7 * 24 * 3600})
				}
				r = r.WithContext(context.WithValue(r.Context(), csrfKey{}, token))
			default:
				if !csrfMatches(r) {
					writeMessage(w, http.StatusForbidden, "Invalid CSRF token")
					return
				}
			}
			next.ServeHTTP(w, r)
		})
	}
}

// csrfMatches reports whether X-CSRF-Token is the value of one of the
// request's fairplay_csrf cookies (of at least 32 characters).
func csrfMatches(r *http.Request) bool {
	header := []byte(r.Header.Get(CSRFHeader))
	if len(header) < 32 {
		return false
	}
	ok := false
	for _, c := range r.CookiesNamed(CSRFCookie) {
		if len(c.Value) >= 32 && subtle.ConstantTimeCompare(header, []byte(c.Value)) == 1 {
			ok = true
		}
	}
	return ok
}

// csrfToken serves GET /api/csrf: {"csrfToken": "..."}, the cookie's value.
func csrfToken(w http.ResponseWriter, r *http.Request) {
	token, _ := r.Context().Value(csrfKey{}).(string)
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, map[string]string{"csrfToken": token})
}
