package server

import "net/http"

// TurnstileOrigin serves Cloudflare Turnstile's script (api.js) and the
// frames of its widget; the web app loads it for the bot check.
const TurnstileOrigin = "https://challenges.cloudflare.com"

// ContentSecurityPolicy is sent with every response. The web app's HTML
// and every script and stylesheet are files of this origin (the Vite build
// inlines nothing: no inline <script>, no event-handler attribute), so:
//
//   - script-src: this origin and Turnstile's api.js only. No
//     'unsafe-inline', no 'unsafe-eval': an injected <script> or handler
//     attribute does not run.
//   - style-src: this origin plus 'unsafe-inline'. Radix's dialogs lock the
//     page's scroll by inserting a <style> element whose rules are computed
//     at run time (react-remove-scroll-bar: the scrollbar's width), which
//     neither a hash nor the static, embedded index.html's (absent) nonce can
//     allow; React's style props are CSSOM writes CSP does not govern. Inline
//     CSS cannot run script, and img-src/font-src/connect-src (default-src
//     'self') keep a CSS injection from loading or sending anything elsewhere.
//   - frame-src: Turnstile's widget only. frame-ancestors 'none': nobody
//     frames us (clickjacking). object-src 'none', base-uri 'none' and
//     form-action 'self' close plugins, <base> hijacking and forms that post
//     elsewhere.
//
// connect-src stays 'self' (default-src), which is also what Turnstile's
// pre-clearance mode needs. The JSON API and every other response carry
// the same policy: it costs nothing there and covers a response a browser
// is tricked into rendering.
const ContentSecurityPolicy = "default-src 'self'; " +
	"script-src 'self' " + TurnstileOrigin + "; " +
	"style-src 'self' 'unsafe-inline'; " +
	"frame-src " + TurnstileOrigin + "; " +
	"object-src 'none'; " +
	"base-uri 'none'; " +
	"form-action 'self'; " +
	"frame-ancestors 'none'"

// PermissionsPolicy turns off the powerful browser features the casino
// never uses, for the page and any frame in it.
const PermissionsPolicy = "accelerometer=(), autoplay=(), camera=(), display-capture=(), geolocation=(), gyroscope=(), " +
	"magnetometer=(), microphone=(), midi=(), payment=(), usb=()"

// HSTS is Strict-Transport-Security when FAIRPLAY_SECURE_COOKIES says the
// server is reached over HTTPS: two years, subdomains included.
const HSTS = "max-age=63072000; includeSubDomains"

// securityHeaders sets the security headers on every response before any
// handler runs, so pages, files, API answers, errors, 404s and recovered
// panics all carry them.
//
// The values are built once and shared by every response: Header.Set
// allocates a one-element slice per header, six per request (make bench's
// profile counted them among the largest allocators of a dice bet). A
// shared slice is safe: net/http only reads it, and Set or Add elsewhere
// replaces or grows a full (len == cap) slice into a new one.
func securityHeaders(hsts bool, next http.Handler) http.Handler {
	type header struct {
		key string
		val []string
	}
	set := []header{
		{"Content-Security-Policy", []string{ContentSecurityPolicy}},
		{"X-Content-Type-Options", []string{"nosniff"}},
		{"X-Frame-Options", []string{"DENY"}},
		{"Referrer-Policy", []string{"strict-origin-when-cross-origin"}},
		{"Permissions-Policy", []string{PermissionsPolicy}},
		{"Cross-Origin-Opener-Policy", []string{"same-origin"}},
	}
	if hsts {
		set = append(set, header{"Strict-Transport-Security", []string{HSTS}})
	}
	for _, h := range set {
		if h.key != http.CanonicalHeaderKey(h.key) {
			panic("server: security header " + h.key + " is not in canonical form")
		}
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		for _, x := range set {
			h[x.key] = x.val
		}
		next.ServeHTTP(w, r)
	})
}
