package security_test

import (
	"context"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/fairplay/fairplay/internal/settings"
	"github.com/fairplay/fairplay/test/apitest"
	"github.com/fairplay/fairplay/web"
)

// turnstileOrigin is where Cloudflare Turnstile's script and frames come from.
const turnstileOrigin = "https://challenges.cloudflare.com"

// probe is one request of the header tests.
type probe struct {
	name, method, path string
	header             map[string]string
	body               string
	// status is the status the probe expects (so that each kind of
	// response — page, asset, API, error — is really covered).
	status int
}

// headerProbes are responses of every kind: the web app, a static file,
// JSON, Connect, health, and errors (400, 401, 403, 404, 405, 415).
func headerProbes(t *testing.T) []probe {
	t.Helper()
	asset := ""
	_ = fs.WalkDir(web.Dist(), ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && p != "index.html" && asset == "" {
			asset = "/" + p
		}
		return nil
	})
	if asset == "" {
		t.Fatal("the embedded web app holds no file but index.html")
	}
	connect := map[string]string{"Content-Type": "application/json", "Connect-Protocol-Version": "1"}
	return []probe{
		{name: "app", method: "GET", path: "/", status: 200},
		{name: "app route", method: "GET", path: "/games/dice", status: 200},
		{name: "static file", method: "GET", path: asset, status: 200},
		{name: "missing asset", method: "GET", path: "/assets/missing-0000.js", status: 404},
		{name: "app, wrong method", method: "POST", path: "/", status: 405},
		{name: "api json", method: "GET", path: "/api/csrf", status: 200},
		{name: "api config", method: "GET", path: "/api/auth/config", status: 200},
		{name: "api 401", method: "GET", path: "/api/auth/user", status: 401},
		{name: "api 403", method: "POST", path: "/api/auth/login", body: `{}`, status: 403},
		{name: "api 404", method: "GET", path: "/api/no-such-route", status: 404},
		{name: "connect", method: "POST", path: "/fairplay.v1.AuthService/GetConfig", header: connect, body: `{}`, status: 200},
		{name: "connect 401", method: "POST", path: "/fairplay.v1.AuthService/GetUser", header: connect, body: `{}`, status: 401},
		{name: "connect 404", method: "POST", path: "/fairplay.v1.AuthService/NoSuchMethod", header: connect, body: `{}`, status: 404},
		{name: "healthz", method: "GET", path: "/healthz", status: 200},
		{name: "readyz", method: "GET", path: "/readyz", status: 200},
	}
}

func (p probe) do(t *testing.T, base string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(p.method, base+p.path, strings.NewReader(p.body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range p.header {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != p.status {
		t.Fatalf("%s %s: status %d, want %d", p.method, p.path, res.StatusCode, p.status)
	}
	return res, string(body)
}

// csp parses a Content-Security-Policy into its directives.
func csp(header string) map[string][]string {
	out := map[string][]string{}
	for _, d := range strings.Split(header, ";") {
		f := strings.Fields(d)
		if len(f) > 0 {
			out[strings.ToLower(f[0])] = f[1:]
		}
	}
	return out
}

// checkSecurityHeaders asserts the headers every response carries.
func checkSecurityHeaders(t *testing.T, what string, h http.Header) {
	t.Helper()
	policy := h.Get("Content-Security-Policy")
	if policy == "" {
		t.Errorf("%s: no Content-Security-Policy", what)
		return
	}
	d := csp(policy)
	want := map[string][]string{
		"frame-ancestors": {"'none'"},
		"object-src":      {"'none'"},
		"base-uri":        {"'none'"},
	}
	for name, sources := range want {
		if !slices.Equal(d[name], sources) {
			t.Errorf("%s: CSP %s = %q, want %q (policy %q)", what, name, d[name], sources, policy)
		}
	}
	if src := d["default-src"]; !slices.Equal(src, []string{"'self'"}) && !slices.Equal(src, []string{"'none'"}) {
		t.Errorf("%s: CSP default-src = %q", what, src)
	}
	// Scripts: this origin and Turnstile's, nothing inline, no eval.
	scripts := d["script-src"]
	if !slices.Contains(scripts, "'self'") || !slices.Contains(scripts, turnstileOrigin) {
		t.Errorf("%s: CSP script-src = %q, want 'self' and %s", what, scripts, turnstileOrigin)
	}
	for _, bad := range []string{"'unsafe-inline'", "'unsafe-eval'", "*", "data:", "blob:", "https:", "http:"} {
		for _, name := range []string{"script-src", "script-src-elem", "script-src-attr", "object-src", "default-src"} {
			if slices.Contains(d[name], bad) {
				t.Errorf("%s: CSP %s allows %s", what, name, bad)
			}
		}
	}
	if frames := d["frame-src"]; !slices.Equal(frames, []string{turnstileOrigin}) {
		t.Errorf("%s: CSP frame-src = %q, want only %s", what, frames, turnstileOrigin)
	}
	for _, name := range []string{"style-src", "connect-src", "img-src", "font-src"} {
		if slices.Contains(d[name], "*") || slices.Contains(d[name], "https:") {
			t.Errorf("%s: CSP %s = %q allows any origin", what, name, d[name])
		}
	}
	for header, ok := range map[string]func(string) bool{
		"X-Content-Type-Options": func(v string) bool { return v == "nosniff" },
		"X-Frame-Options":        func(v string) bool { return v == "DENY" },
		"Referrer-Policy": func(v string) bool {
			return v == "strict-origin-when-cross-origin" || v == "no-referrer" || v == "same-origin"
		},
		"Permissions-Policy": func(v string) bool {
			for _, feature := range []string{"camera=()", "microphone=()", "geolocation=()", "payment=()", "usb=()"} {
				if !strings.Contains(v, feature) {
					return false
				}
			}
			return true
		},
	} {
		if v := h.Get(header); !ok(v) {
			t.Errorf("%s: %s = %q", what, header, v)
		}
	}
}

// TestSecurityHeadersOnEveryResponse: the web app, its files, the JSON API,
// Connect, the probes and every error answer with a strict
// Content-Security-Policy (scripts only from this origin and Turnstile's,
// no framing, no plugins, no <base>), nosniff, a referrer policy, a
// permissions policy that turns off the sensors, camera, microphone and
// payments, and X-Frame-Options for old browsers; and, over plain HTTP
// without FAIRPLAY_SECURE_COOKIES, no HSTS. The app's HTML has no inline
// script the policy would have to allow.
func TestSecurityHeadersOnEveryResponse(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	for _, p := range headerProbes(t) {
		res, body := p.do(t, env.URL)
		checkSecurityHeaders(t, p.name, res.Header)
		if h := res.Header.Get("Strict-Transport-Security"); h != "" {
			t.Errorf("%s: HSTS %q without FAIRPLAY_SECURE_COOKIES", p.name, h)
		}
		if p.path == "/" {
			checkNoInlineScript(t, body)
		}
	}

	// A server error (Postgres gone) carries them too.
	env.App.Postgres.Close()
	c := env.Client()
	res := c.Do("POST", "/api/auth/login", map[string]any{"username": "nobody", "password": "secret123", "turnstileToken": apitest.BotToken})
	if res.Status < 500 {
		t.Fatalf("login without Postgres: %d %s", res.Status, res.Raw)
	}
	checkSecurityHeaders(t, "login without Postgres", res.Header)
	env.WaitReadyz(t, http.StatusServiceUnavailable)
	ready, _ := probe{method: "GET", path: "/readyz", status: 503}.do(t, env.URL)
	checkSecurityHeaders(t, "readyz without Postgres", ready.Header)
}

// TestSecurityHeadersOnTheLiveStream: the live bets stream (Server-Sent
// Events, a response that never ends) carries the same headers as every
// other response, and is neither cached nor buffered by a proxy. Its body
// is not read to the end, so it has a test of its own.
func TestSecurityHeadersOnTheLiveStream(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", env.URL+"/api/live/bets", nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET /api/live/bets: status %d", res.StatusCode)
	}
	checkSecurityHeaders(t, "live stream", res.Header)
	if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Errorf("live stream: Content-Type %q, want text/event-stream", ct)
	}
	if cc := res.Header.Get("Cache-Control"); !strings.Contains(cc, "no-store") {
		t.Errorf("live stream: Cache-Control %q, want no-store", cc)
	}
	if h := res.Header.Get("X-Accel-Buffering"); h != "no" {
		t.Errorf("live stream: X-Accel-Buffering %q, want no", h)
	}
}

// checkNoInlineScript fails on a <script> without src, an inline event
// handler or a javascript: URL in the app's HTML.
func checkNoInlineScript(t *testing.T, html string) {
	t.Helper()
	for _, m := range regexp.MustCompile(`(?is)<script\b([^>]*)>(.*?)</script>`).FindAllStringSubmatch(html, -1) {
		if !strings.Contains(strings.ToLower(m[1]), "src=") || strings.TrimSpace(m[2]) != "" {
			t.Errorf("inline script in index.html: %s", m[0])
		}
	}
	if m := regexp.MustCompile(`(?i)\son[a-z]+\s*=|javascript:`).FindString(html); m != "" {
		t.Errorf("inline event handler or javascript: URL in index.html: %q", m)
	}
}

// TestHSTSOnlyWithSecureCookies: FAIRPLAY_SECURE_COOKIES (set behind
// HTTPS) adds Strict-Transport-Security to every response.
func TestHSTSOnlyWithSecureCookies(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t, apitest.WithConfig(func(c *settings.Config) { c.SecureCookies = true }))
	for _, p := range headerProbes(t) {
		res, _ := p.do(t, env.URL)
		if got := res.Header.Get("Strict-Transport-Security"); got != "max-age=63072000; includeSubDomains" {
			t.Errorf("%s: Strict-Transport-Security = %q", p.name, got)
		}
		checkSecurityHeaders(t, p.name, res.Header)
	}
}

// TestConnectAnswersAreNotStored: a Connect answer is never kept by a
// cache, as no answer of an /api call is. The procedures without side effects
// (ListBets, GetBet, GetUser, the limits) may be called with GET, whose
// answers a browser would otherwise keep: a player's bets and account, there
// to read after they signed out. Found by a review playing a hostile player.
func TestConnectAnswersAreNotStored(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	c := env.Client()
	c.Register("nostore_player")
	get := func(procedure string) string {
		return "/fairplay.v1." + procedure + "?connect=v1&encoding=json&message=" + url.QueryEscape("{}")
	}
	bearer := map[string]string{"Authorization": "Bearer " + c.Token}
	post := map[string]string{"Content-Type": "application/json", "Connect-Protocol-Version": "1"}
	for _, p := range []probe{
		{name: "GET ListBets", method: "GET", path: get("GameService/ListBets"), header: bearer, status: 200},
		{name: "GET GetUser", method: "GET", path: get("AuthService/GetUser"), header: bearer, status: 200},
		{name: "GET GetLimits", method: "GET", path: get("WalletService/GetLimits"), header: bearer, status: 200},
		{name: "GET GetUser, signed out", method: "GET", path: get("AuthService/GetUser"), status: 401},
		{name: "POST GetConfig", method: "POST", path: "/fairplay.v1.AuthService/GetConfig", header: post, body: `{}`, status: 200},
	} {
		res, body := p.do(t, env.URL)
		if got := res.Header.Values("Cache-Control"); !slices.Equal(got, []string{"no-store"}) {
			t.Errorf("%s: Cache-Control %q, want no-store (%s)", p.name, got, body)
		}
	}
}
