package security_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/fairplay/fairplay/test/apitest"
)

// TestPlantedCSRFCookieDoesNotLockThePlayerOut: a sibling subdomain, or
// anyone on the path of a plain-http request, can set a fairplay_csrf
// cookie of their own (Domain=.parent, Path=/api/games), which the browser
// sends before the server's. The server compared the header with the first
// cookie only, so every bet and game action of that browser failed with 403
// until its cookies were cleared. Now the header may match any of the
// request's fairplay_csrf cookies; a header matching none, a short planted
// value echoed back, or no header at all is still refused. Found by a
// review.
func TestPlantedCSRFCookieDoesNotLockThePlayerOut(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	c := env.Client()
	c.Register("victim")
	own := c.CSRF()
	planted := strings.Repeat("p", 43)
	bet := func(cookies []string, header string) int {
		t.Helper()
		req, _ := http.NewRequest("POST", env.URL+"/api/games/dice", strings.NewReader(`{"betAmount": 1, "rollTarget": 50}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+c.Token)
		req.Header.Set("Cookie", strings.Join(cookies, "; "))
		if header != "" {
			req.Header.Set("X-CSRF-Token", header)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	for _, tc := range []struct {
		what    string
		cookies []string
		header  string
		status  int
	}{
		{"the server's cookie after a planted one", []string{"fairplay_csrf=" + planted, "fairplay_csrf=" + own}, own, 200},
		{"a short planted cookie first", []string{"fairplay_csrf=x", "fairplay_csrf=" + own}, own, 200},
		{"the planted value echoed", []string{"fairplay_csrf=" + planted, "fairplay_csrf=" + own}, planted, 200},
		{"a header matching no cookie", []string{"fairplay_csrf=" + planted, "fairplay_csrf=" + own}, strings.Repeat("z", 43), 403},
		{"a short value echoed", []string{"fairplay_csrf=x", "fairplay_csrf=" + own}, "x", 403},
		{"no header", []string{"fairplay_csrf=" + planted, "fairplay_csrf=" + own}, "", 403},
		{"no cookie", nil, own, 403},
	} {
		if got := bet(tc.cookies, tc.header); got != tc.status {
			t.Errorf("%s: %d, want %d", tc.what, got, tc.status)
		}
	}
	env.LedgerClean(t)
}
