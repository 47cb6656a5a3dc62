// Package apitest runs the real Fairplay server in-process (the production
// wiring of internal/app) against a fresh Postgres database and a private
// Redis key prefix, and gives tests a JSON client for the /api routes that
// handles the anti-forgery cookie and bearer tokens like the web app does.
package apitest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fairplay/fairplay/internal/accounts"
	"github.com/fairplay/fairplay/internal/app"
	"github.com/fairplay/fairplay/internal/cache/redistest"
	"github.com/fairplay/fairplay/internal/postgres"
	"github.com/fairplay/fairplay/internal/postgres/pgtest"
	"github.com/fairplay/fairplay/internal/settings"
	"github.com/fairplay/fairplay/internal/wallet"
)

// BotToken is the development bot-check token the server accepts in tests.
const BotToken = accounts.DevelopmentBotToken

// Clock is a settable clock shared by the server under test.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock forward.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// Env is a running server under test.
type Env struct {
	T   testing.TB
	URL string
	// MetricsURL is the internal listener serving /metrics
	// (FAIRPLAY_METRICS_ADDR in production).
	MetricsURL string
	App        *app.App
	Clock      *Clock
	Config     settings.Config
	KeyDir     string
	// opts is the wiring the server was built with, for Replica.
	opts app.Options
}

// Option adjusts the configuration or wiring before the server starts.
type Option func(*settings.Config, *app.Options)

// WithConfig edits the configuration.
func WithConfig(fn func(*settings.Config)) Option {
	return func(c *settings.Config, _ *app.Options) { fn(c) }
}

// WithBots replaces the bot check.
func WithBots(b accounts.BotChecker) Option {
	return func(_ *settings.Config, o *app.Options) { o.Bots = b }
}

// WithHasher replaces the password hasher (for instance with one whose work
// a test observes).
func WithHasher(h *accounts.Hasher) Option {
	return func(_ *settings.Config, o *app.Options) { o.Hasher = h }
}

// Start runs a server on a fresh database; it stops when the test ends.
// Rate limits are off unless an option sets them.
func Start(t testing.TB, opts ...Option) *Env {
	t.Helper()
	rdb, prefix := redistest.New(t)
	_ = rdb
	cfg, err := settings.Load(func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	cfg.DatabaseURL = pgtest.URL(t)
	cfg.RedisURL = os.Getenv("REDIS_URL")
	cfg.RedisPrefix = prefix
	cfg.LoginPerIP, cfg.LoginPerAccountIP, cfg.LoginFailuresPerAccount = settings.Rate{}, settings.Rate{}, settings.Rate{}
	cfg.PasswordChangePerUser, cfg.PasswordChangePerIP = settings.Rate{}, settings.Rate{}
	cfg.RegisterPerIP, cfg.BetsPerUser, cfg.SessionPerIP = settings.Rate{}, settings.Rate{}, settings.Rate{}
	// Readiness follows an outage within a few tenths of a second, with the
	// production hysteresis (three failures down, two answers up).
	cfg.ReadinessInterval = 50 * time.Millisecond
	keyDir := t.TempDir()
	clock := &Clock{t: time.Now().UTC()}
	if _, err := accounts.WriteNewKey(keyDir, clock.Now().Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	cfg.SigningKeysDir = keyDir
	o := app.Options{Now: clock.Now, Hasher: accounts.NewHasher(64, 1, 1, 8)}
	for _, opt := range opts {
		opt(&cfg, &o)
	}
	return serve(t, cfg, o, clock, keyDir)
}

// serve builds an App from cfg and o and serves it until the test ends.
func serve(t testing.TB, cfg settings.Config, o app.Options, clock *Clock, keyDir string) *Env {
	t.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if testing.Verbose() {
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	ctx, cancel := context.WithCancel(context.Background())
	a, err := app.New(ctx, cfg, log, o)
	if err != nil {
		cancel()
		t.Fatalf("start app: %v", err)
	}
	// Only the readiness checks of the background work: the tests fold bet
	// statistics and reload keys themselves when they need to.
	go a.Server.Run(ctx)
	// The live bets feed too: its bets go through Redis as in production.
	go a.LiveFeed.Run(ctx)
	srv := httptest.NewServer(a.Handler())
	metrics := httptest.NewServer(a.Server.MetricsHandler())
	t.Cleanup(func() {
		// Open streams end first, as a shutdown ends them: Close waits for
		// every request.
		a.Live.Close()
		srv.Close()
		metrics.Close()
		cancel()
		a.Close()
	})
	return &Env{T: t, URL: srv.URL, MetricsURL: metrics.URL, App: a, Clock: clock, Config: cfg, KeyDir: keyDir, opts: o}
}

// Replica starts a second server process-alike on the same Postgres
// database, Redis prefix, signing keys and clock, with its own pools and
// in-memory state: what another replica behind a load balancer would be. It
// stops when the test ends.
func (e *Env) Replica() *Env {
	e.T.Helper()
	return serve(e.T, e.Config, e.opts, e.Clock, e.KeyDir)
}

// WaitReadyz polls GET /readyz until it answers status and returns the
// body; readiness follows the background checks, so it changes a few
// intervals after an outage begins or ends. It fails the test after 30 s.
func (e *Env) WaitReadyz(t testing.TB, status int) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		res, err := http.Get(e.URL + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode == status {
			return string(body)
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz: still %d %q after 30s, want %d", res.StatusCode, body, status)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Client is one browser: a cookie jar, the CSRF token and the stored tokens.
type Client struct {
	env          *Env
	http         *http.Client
	UserAgent    string
	Token        string
	RefreshToken string
	// ForwardedFor, when set, is sent as X-Forwarded-For: the client IP the
	// server believes when the test trusts the loopback proxy
	// (settings.Config.TrustedProxies = ["127.0.0.1/32"]); lines separated
	// by a newline are sent as that many header lines, as a proxy that
	// appends its own sends them.
	ForwardedFor string
}

// Client returns a new browser-like client that has fetched its CSRF cookie.
func (e *Env) Client() *Client {
	jar, _ := cookiejar.New(nil)
	c := &Client{env: e, http: &http.Client{Jar: jar, Timeout: 30 * time.Second},
		UserAgent: "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36"}
	if res := c.Do("GET", "/api/csrf", nil); res.Status != 200 {
		e.T.Fatalf("GET /api/csrf: %d", res.Status)
	}
	return c
}

// Via returns a client for another server (such as a Replica) that shares
// this one's cookies and tokens, as a browser behind a load balancer would.
// Both servers run on the same host, so the cookie jar serves both.
func (c *Client) Via(e *Env) *Client {
	return &Client{env: e, http: c.http, UserAgent: c.UserAgent, Token: c.Token, RefreshToken: c.RefreshToken, ForwardedFor: c.ForwardedFor}
}

// CSRF returns the anti-forgery cookie's value.
func (c *Client) CSRF() string { return c.Cookie("fairplay_csrf") }

// Cookie returns the value of the cookie name the client would send, "" if
// it holds none.
func (c *Client) Cookie(name string) string {
	u, _ := url.Parse(c.env.URL)
	for _, ck := range c.http.Jar.Cookies(u) {
		if ck.Name == name {
			return ck.Value
		}
	}
	return ""
}

// Response is a decoded /api response.
type Response struct {
	Status int
	Header http.Header
	Body   map[string]any
	Raw    []byte
}

// Message is the error body's message.
func (r Response) Message() string { s, _ := r.Body["message"].(string); return s }

// Str returns a string at a dotted path.
func (r Response) Str(path string) string { s, _ := r.Get(path).(string); return s }

// Get returns the value at a dotted path such as "user.balance" or
// "bets.0.id" (a number indexes an array).
func (r Response) Get(path string) any {
	var v any = r.Body
	for _, k := range strings.Split(path, ".") {
		switch x := v.(type) {
		case map[string]any:
			v = x[k]
		case []any:
			i, err := strconv.Atoi(k)
			if err != nil || i < 0 || i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}

// DoWith is Do with the last word on the request: edit may change or
// remove any header Do sets (Content-Type, User-Agent, ...) before it is
// sent.
func (c *Client) DoWith(method, path string, body any, edit func(*http.Request)) Response {
	c.env.T.Helper()
	hc := *c.http
	hc.Transport = editTransport{next: c.http.Transport, edit: edit}
	cc := *c
	cc.http = &hc
	return cc.Do(method, path, body)
}

// editTransport lets DoWith edit a copy of each request on its way out.
type editTransport struct {
	next http.RoundTripper
	edit func(*http.Request)
}

func (t editTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if t.edit != nil {
		r = r.Clone(r.Context())
		t.edit(r)
	}
	next := t.next
	if next == nil {
		next = http.DefaultTransport
	}
	return next.RoundTrip(r)
}

// Do sends a JSON request with the stored token and the CSRF header.
func (c *Client) Do(method, path string, body any) Response {
	c.env.T.Helper()
	res, err := c.DoContext(context.Background(), method, path, body)
	if err != nil {
		c.env.T.Fatalf("%s %s: %v", method, path, err)
	}
	return res
}

// DoContext is Do under ctx, and returns the transport's error (a request
// the client gave up, say) instead of failing the test.
func (c *Client) DoContext(ctx context.Context, method, path string, body any) (Response, error) {
	c.env.T.Helper()
	var rd io.Reader
	if body != nil {
		switch b := body.(type) {
		case string:
			rd = strings.NewReader(b)
		case []byte:
			rd = bytes.NewReader(b)
		default:
			raw, err := json.Marshal(body)
			if err != nil {
				c.env.T.Fatal(err)
			}
			rd = bytes.NewReader(raw)
		}
	}
	req, err := http.NewRequestWithContext(ctx, method, c.env.URL+path, rd)
	if err != nil {
		c.env.T.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", c.UserAgent)
	if csrf := c.CSRF(); csrf != "" && method != "GET" {
		req.Header.Set("X-CSRF-Token", csrf)
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	for line := range strings.SplitSeq(c.ForwardedFor, "\n") {
		if line != "" {
			req.Header.Add("X-Forwarded-For", line)
		}
	}
	res, err := c.http.Do(req)
	if err != nil {
		return Response{}, err
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	out := Response{Status: res.StatusCode, Header: res.Header, Raw: raw}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	_ = dec.Decode(&out.Body)
	return out, nil
}

// Register signs up username (email <username>@example.com, password
// "secret123") and keeps the tokens; it fails the test on error.
func (c *Client) Register(username string) Response {
	c.env.T.Helper()
	res := c.Do("POST", "/api/auth/register", map[string]any{
		"username": username, "email": username + "@example.com", "password": "secret123", "turnstileToken": BotToken,
	})
	if res.Status != 200 {
		c.env.T.Fatalf("register %s: %d %s", username, res.Status, res.Raw)
	}
	c.Token, c.RefreshToken = res.Str("token"), res.Str("refreshToken")
	return res
}

// Login signs in and keeps the tokens; it fails the test on error.
func (c *Client) Login(login, password string) Response {
	c.env.T.Helper()
	res := c.Do("POST", "/api/auth/login", map[string]any{"username": login, "password": password, "turnstileToken": BotToken})
	if res.Status != 200 {
		c.env.T.Fatalf("login %s: %d %s", login, res.Status, res.Raw)
	}
	c.Token, c.RefreshToken = res.Str("token"), res.Str("refreshToken")
	return res
}

// LedgerClean runs the ledger audit (`fairplay ledger verify`) on the
// server's database and fails the test unless every balance is the sum of
// its entries and every bet matches its entries.
func (e *Env) LedgerClean(t testing.TB) wallet.Report {
	t.Helper()
	r, err := wallet.Verify(context.Background(), postgres.NewLedgerStore(e.App.Postgres))
	if err != nil {
		t.Fatal(err)
	}
	if !r.Clean() {
		t.Fatalf("ledger not clean: %+v", r)
	}
	return r
}
