package rpc

import (
	"context"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"unicode/utf8"

	"github.com/fairplay/fairplay/internal/accounts"
)

type clientKey struct{}

// ClientInfo is middleware that records the caller's address and user agent
// for the handlers. X-Forwarded-For is believed only from trusted proxies:
// the client is the right-most address not in a trusted range. The header's
// lines are one list (RFC 9110, 5.3): a proxy that appends a line of its own
// (HAProxy's option forwardfor) puts the address it saw last, and reading
// only the first line would have believed the one the client wrote.
func ClientInfo(trusted []netip.Prefix) func(http.Handler) http.Handler {
	isTrusted := trustedIn(trusted)
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ip := remoteIP(r.RemoteAddr)
			if a, err := netip.ParseAddr(ip); err == nil && isTrusted(a) {
				hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
				for i := len(hops) - 1; i >= 0; i-- {
					h, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
					if err != nil {
						break
					}
					ip = h.Unmap().String()
					if !isTrusted(h) {
						break
					}
				}
			}
			c := accounts.Client{IP: ip, UserAgent: cleanUserAgent(r.UserAgent())}
			next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), clientKey{}, c)))
		})
	}
}

// PeerIn reports whether a request's peer (the address it came from, not
// one a header names) is in one of prefixes.
func PeerIn(prefixes []netip.Prefix) func(*http.Request) bool {
	isTrusted := trustedIn(prefixes)
	return func(r *http.Request) bool {
		a, err := netip.ParseAddr(remoteIP(r.RemoteAddr))
		return err == nil && isTrusted(a)
	}
}

func trustedIn(trusted []netip.Prefix) func(netip.Addr) bool {
	return func(a netip.Addr) bool {
		for _, p := range trusted {
			if p.Contains(a.Unmap()) {
				return true
			}
		}
		return false
	}
}

// maxUserAgent bounds the User-Agent kept with a session, in bytes.
const maxUserAgent = 512

// cleanUserAgent makes a User-Agent header fit to store and show: valid
// UTF-8 (each run of invalid bytes becomes U+FFFD: header values may carry
// any byte above 0x7f, and Postgres refuses invalid UTF-8 in text), no NUL,
// and at most maxUserAgent bytes, cut on a character boundary.
func cleanUserAgent(ua string) string {
	if len(ua) > 4*maxUserAgent {
		ua = ua[:4*maxUserAgent] // bound the work; the cut below is what counts
	}
	ua = strings.ReplaceAll(strings.ToValidUTF8(ua, "\uFFFD"), "\x00", "")
	if len(ua) > maxUserAgent {
		i := maxUserAgent
		for i > 0 && !utf8.RuneStart(ua[i]) {
			i--
		}
		ua = ua[:i]
	}
	return ua
}

func remoteIP(addr string) string {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	if a, err := netip.ParseAddr(host); err == nil {
		return a.Unmap().String()
	}
	return host
}

// clientFrom returns the caller recorded by ClientInfo.
func clientFrom(ctx context.Context) accounts.Client {
	c, _ := ctx.Value(clientKey{}).(accounts.Client)
	return c
}

// bearer extracts the token of an "Authorization: Bearer <token>" header.
func bearer(h http.Header) string {
	v := h.Get("Authorization")
	if len(v) > 7 && strings.EqualFold(v[:7], "bearer ") {
		return strings.TrimSpace(v[7:])
	}
	return ""
}
