package replicas_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fairplay/fairplay/internal/accounts"
	"github.com/fairplay/fairplay/internal/cache/redistest"
	"github.com/fairplay/fairplay/internal/money"
	"github.com/fairplay/fairplay/internal/postgres"
	"github.com/fairplay/fairplay/internal/postgres/pgtest"
	"github.com/fairplay/fairplay/internal/wallet"
	"github.com/fairplay/fairplay/test/proc"
)

// The suite runs the real `fairplay serve` binary three times on one
// database, one Redis prefix and one signing key, as three replicas behind a
// load balancer would run, and drives them with a client that sends each
// request to the next replica in turn.

// binary is the server built once by TestMain.
var binary string

func TestMain(m *testing.M) {
	os.Exit(proc.RunWithServer(m, &binary))
}

// replica is one running server process.
type replica struct {
	url string
	*proc.Process
}

// cluster is three replicas and a pool on their database for the checks.
type cluster struct {
	replicas []*replica
	db       *pgxpool.Pool
	served   []atomic.Int64 // requests answered, per replica
}

func (c *cluster) urls() []string {
	out := make([]string, len(c.replicas))
	for i, r := range c.replicas {
		out[i] = r.url
	}
	return out
}

// startCluster starts n server processes on a fresh database; they are
// stopped with SIGTERM when the test ends, and must exit 0.
func startCluster(t *testing.T, n int) *cluster {
	t.Helper()
	dbURL := pgtest.URL(t)
	_, prefix := redistest.New(t) // deletes the prefix's keys when the test ends
	keyDir := t.TempDir()
	if _, err := accounts.WriteNewKey(keyDir, time.Now().Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	pool, err := postgres.Open(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"DATABASE_URL=" + dbURL,
		"REDIS_URL=" + os.Getenv("REDIS_URL"),
		"FAIRPLAY_REDIS_PREFIX=" + prefix,
		"FAIRPLAY_SIGNING_KEYS_DIR=" + keyDir,
		"FAIRPLAY_HTTP_ADDR=127.0.0.1:0", "FAIRPLAY_METRICS_ADDR=127.0.0.1:0",
		"FAIRPLAY_RATE_LOGIN_IP=0", "FAIRPLAY_RATE_LOGIN_ACCOUNT_IP=0", "FAIRPLAY_RATE_LOGIN_ACCOUNT_FAILURES=0",
		"FAIRPLAY_RATE_PASSWORD_USER=0", "FAIRPLAY_RATE_PASSWORD_IP=0", "FAIRPLAY_RATE_REGISTER_IP=0", "FAIRPLAY_RATE_BETS_USER=0", "FAIRPLAY_RATE_SESSION_IP=0",
		"FAIRPLAY_LOG_FORMAT=json", "FAIRPLAY_LOG_LEVEL=info", "FAIRPLAY_SHUTDOWN_TIMEOUT=10s",
		"FAIRPLAY_DRAIN_DELAY=1s", // SIGTERM at the end still drains, briefly
		"OTEL_SDK_DISABLED=true",
	}
	c := &cluster{db: pool, served: make([]atomic.Int64, n)}
	t.Cleanup(func() { c.stop(t) })
	for i := range n {
		p, err := proc.StartServer(fmt.Sprintf("replica %d", i), binary, env, nil)
		if err != nil {
			t.Fatal(err)
		}
		c.replicas = append(c.replicas, &replica{Process: p})
	}
	for _, r := range c.replicas {
		url, err := r.WaitServing(30 * time.Second)
		if err != nil {
			t.Fatal(err)
		}
		r.url = url
	}
	for _, r := range c.replicas {
		if err := proc.WaitReady(r.url, 30*time.Second); err != nil {
			t.Fatalf("%s: %v\n%s", r.Name, err, r.Log.Tail(4000))
		}
	}
	return c
}

// stop sends SIGTERM to every replica and requires a clean exit.
func (c *cluster) stop(t *testing.T) {
	for _, r := range c.replicas {
		_ = r.Signal(syscall.SIGTERM)
	}
	for _, r := range c.replicas {
		switch err := r.Wait(30 * time.Second); {
		case errors.Is(err, proc.ErrStopTimeout):
			t.Errorf("%s ignored SIGTERM for 30s:\n%s", r.Name, r.Log.Tail(4000))
		case err != nil:
			t.Errorf("%s did not shut down cleanly: %v\n%s", r.Name, err, r.Log.Tail(4000))
		case t.Failed():
			t.Logf("%s log:\n%s", r.Name, r.Log.Tail(4000))
		}
	}
}

// ledger runs the wallet audit and fails the test unless it is exact.
func (c *cluster) ledger(t *testing.T) wallet.Report {
	t.Helper()
	r, err := wallet.Verify(context.Background(), postgres.NewLedgerStore(c.db))
	if err != nil {
		t.Fatal(err)
	}
	if !r.Clean() {
		t.Fatalf("ledger not clean: %+v", r)
	}
	return r
}

// tb is what the helpers need of a test. A worker goroutine cannot call
// t.Fatal, so it gets a worker instead.
type tb interface {
	Helper()
	Fatalf(format string, args ...any)
}

// worker fails the test and ends its goroutine (running its deferred calls).
type worker struct {
	t    *testing.T
	name string
}

func (w worker) Helper() {}

func (w worker) Fatalf(format string, args ...any) {
	w.t.Errorf(w.name+": "+format, args...)
	runtime.Goexit()
}

// client is one browser behind a round-robin load balancer: one cookie jar
// (the replicas share a host, so the anti-forgery cookie serves all of them),
// the bearer token, and a base URL that moves on with every request.
type client struct {
	t            tb
	urls         []string
	served       []atomic.Int64
	next         atomic.Uint64
	http         *http.Client
	UserAgent    string
	Token        string
	RefreshToken string
	UserID       string
}

func newClient(t tb, cl *cluster) *client {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &client{t: t, urls: cl.urls(), served: cl.served, http: &http.Client{Jar: jar, Timeout: 30 * time.Second},
		UserAgent: "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36"}
	if res := c.Do("GET", "/api/csrf", nil); res.Status != 200 {
		t.Fatalf("GET /api/csrf: %d", res.Status)
	}
	return c
}

// clone is another browser tab: the same cookies and tokens, its own rotation.
func (c *client) clone(t tb) *client {
	n := &client{t: t, urls: c.urls, served: c.served, http: c.http, UserAgent: c.UserAgent, Token: c.Token, RefreshToken: c.RefreshToken, UserID: c.UserID}
	n.next.Store(c.next.Load())
	return n
}

func (c *client) csrf() string {
	u, _ := url.Parse(c.urls[0])
	for _, ck := range c.http.Jar.Cookies(u) {
		if ck.Name == "fairplay_csrf" {
			return ck.Value
		}
	}
	return ""
}

// response is a decoded /api response and the replica that served it.
type response struct {
	Replica int
	Status  int
	Body    map[string]any
	Raw     []byte
}

func (r response) Message() string { s, _ := r.Body["message"].(string); return s }

func (r response) Str(path string) string { s, _ := r.Get(path).(string); return s }

func (r response) Get(path string) any {
	var v any = r.Body
	for _, k := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// Do sends a request to the next replica; it fails the test on a transport error.
func (c *client) Do(method, path string, body any) response {
	c.t.Helper()
	return c.On(int(c.next.Add(1)-1)%len(c.urls), method, path, body)
}

// On sends a request to replica i; it fails the test on a transport error.
func (c *client) On(i int, method, path string, body any) response {
	c.t.Helper()
	res, err := c.send(i, method, path, body)
	if err != nil {
		c.t.Fatalf("%s %s on replica %d: %v", method, path, i, err)
	}
	return res
}

// send is On for other goroutines: it returns the error.
func (c *client) send(i int, method, path string, body any) (response, error) {
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		raw, err := json.Marshal(body)
		if err != nil {
			return response{}, err
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, c.urls[i]+path, rd)
	if err != nil {
		return response{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", c.UserAgent)
	if csrf := c.csrf(); csrf != "" && method != "GET" {
		req.Header.Set("X-CSRF-Token", csrf)
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	res, err := c.http.Do(req)
	if err != nil {
		return response{}, err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		return response{}, err
	}
	c.served[i].Add(1)
	out := response{Replica: i, Status: res.StatusCode, Raw: raw}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	_ = dec.Decode(&out.Body)
	return out, nil
}

func (c *client) keep(res response) {
	c.Token, c.RefreshToken = res.Str("token"), res.Str("refreshToken")
	if id := res.Str("user._id"); id != "" {
		c.UserID = id
	}
}

// Register signs up username with password "secret123" and keeps the tokens.
func (c *client) Register(username string) response {
	c.t.Helper()
	res := c.Do("POST", "/api/auth/register", map[string]any{
		"username": username, "email": username + "@example.com", "password": "secret123", "turnstileToken": accounts.DevelopmentBotToken,
	})
	if res.Status != 200 {
		c.t.Fatalf("register %s: %d %s", username, res.Status, res.Raw)
	}
	c.keep(res)
	if c.UserID == "" {
		c.UserID = c.Do("GET", "/api/auth/user", nil).Str("user._id")
	}
	return res
}

// Login signs in and keeps the tokens.
func (c *client) Login(login, password string) response {
	c.t.Helper()
	res := c.Do("POST", "/api/auth/login", map[string]any{"username": login, "password": password, "turnstileToken": accounts.DevelopmentBotToken})
	if res.Status != 200 {
		c.t.Fatalf("login %s: %d %s", login, res.Status, res.Raw)
	}
	c.keep(res)
	return res
}

// ok requires a successful game response (the instant games' lack the
// success field).
func ok(t tb, res response) response {
	t.Helper()
	if success, has := res.Body["success"]; res.Status != 200 || has && success != true {
		t.Fatalf("replica %d: got %d %s", res.Replica, res.Status, res.Raw)
	}
	return res
}

func amount(t tb, v any) money.Amount {
	t.Helper()
	a, err := money.Parse(fmt.Sprint(v))
	if err != nil {
		t.Fatalf("amount %v: %v", v, err)
	}
	return a
}

// totals are the database's sums over every user and bet.
type totals struct {
	Users, Bets, Active int64
	Balances            money.Amount
	Staked, Paid        money.Amount
}

func (c *cluster) totals(t *testing.T) totals {
	t.Helper()
	var s totals
	err := c.db.QueryRow(context.Background(), `
		SELECT (SELECT count(*) FROM users), (SELECT coalesce(sum(balance), 0)::bigint FROM users),
		       count(*), count(*) FILTER (WHERE status = 'active'),
		       coalesce(sum(amount), 0)::bigint, coalesce(sum(payout), 0)::bigint
		FROM bets`).Scan(&s.Users, &s.Balances, &s.Bets, &s.Active, &s.Staked, &s.Paid)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// settledOnce fails the test unless every bet is settled and has at most
// one payout entry, present exactly when it paid something.
func (c *cluster) settledOnce(t *testing.T) {
	t.Helper()
	var active, wrong, twice int
	err := c.db.QueryRow(context.Background(), `
		SELECT count(*) FILTER (WHERE b.status <> 'settled'),
		       count(*) FILTER (WHERE (b.payout > 0) <> (p.n > 0)),
		       count(*) FILTER (WHERE p.n > 1)
		FROM bets b CROSS JOIN LATERAL (
			SELECT count(*) AS n FROM ledger_entries l WHERE l.ref_id = b.id AND l.kind = 'payout') p`).Scan(&active, &wrong, &twice)
	if err != nil {
		t.Fatal(err)
	}
	if active+wrong+twice != 0 {
		t.Fatalf("%d bets still active, %d paid inconsistently, %d paid more than once", active, wrong, twice)
	}
}
