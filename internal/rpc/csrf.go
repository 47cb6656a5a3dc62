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
func CSRF(secure bool) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			cookie, err := r.Cookie(CSRFCookie)
			valid := err == nil && len(cookie.Value) >= 32
			switch r.Method {
			case http.MethodGet, http.MethodHead, http.MethodOptions:
				token := ""
				if valid {
					token = cookie.Value
				} else {
					b := make([]byte, 32)
					_, _ = rand.Read(b)
					token = base64.RawURLEncoding.EncodeToString(b)
					http.SetCookie(w, &http.Cookie{Name: CSRFCookie, Value: token, Path: "/", SameSite: http.SameSiteStrictMode,
						Secure: secure, MaxAge: 7 * 24 * 3600})
				}
				r = r.WithContext(context.WithValue(r.Context(), csrfKey{}, token))
			default:
				header := r.Header.Get(CSRFHeader)
				if !valid || subtle.ConstantTimeCompare([]byte(header), []byte(cookie.Value)) != 1 {
					writeMessage(w, http.StatusForbidden, "Invalid CSRF token")
					return
				}
			}
			next.ServeHTTP(w, r)
		})
	}
}

// csrfToken serves GET /api/csrf: {"csrfToken": "..."}, the cookie's value.
func csrfToken(w http.ResponseWriter, r *http.Request) {
	token, _ := r.Context().Value(csrfKey{}).(string)
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, map[string]string{"csrfToken": token})
}
