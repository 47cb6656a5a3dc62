//go:build cluster

package cluster_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/cookiejar"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// botToken passes the development bot check (the chart's default: no
// Turnstile).
const botToken = "XXXX.DUMMY.TOKEN.XXXX"

const playerPassword = "cluster-secret1"

// player is one account with its own cookies and tokens, talking to the
// Service like a browser.
type player struct {
	base, name   string
	hc           *http.Client
	csrf, token  string
	refreshToken string
	tokenAt      time.Time
	minesGame    string // a Mines round still running
}

func newPlayer(t testing.TB, base, name string) *player {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	p := &player{base: base, name: name, hc: &http.Client{Jar: jar, Timeout: 20 * time.Second,
		Transport: &http.Transport{DialContext: (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
			MaxIdleConnsPerHost: 4, IdleConnTimeout: 90 * time.Second}}}
	var csrf struct {
		CSRFToken string `json:"csrfToken"`
	}
	if st, raw, err := p.call(context.Background(), "GET", "/api/csrf", nil, &csrf); err != nil || st != 200 {
		t.Fatalf("GET /api/csrf: %d %s %v", st, raw, err)
	}
	p.csrf = csrf.CSRFToken
	return p
}

// call sends one request; status 0 means a transport error.
func (p *player) call(ctx context.Context, method, path string, body, out any) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, p.base+path, rd)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "Mozilla/5.0 (X11; Linux x86_64) fairplay-cluster-test")
	if p.csrf != "" && method != "GET" {
		req.Header.Set("X-CSRF-Token", p.csrf)
	}
	if p.token != "" {
		req.Header.Set("Authorization", "Bearer "+p.token)
	}
	res, err := p.hc.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		return res.StatusCode, raw, err
	}
	if out != nil && res.StatusCode/100 == 2 {
		if err := json.Unmarshal(raw, out); err != nil {
			return res.StatusCode, raw, fmt.Errorf("decode %s %s: %w", method, path, err)
		}
	}
	return res.StatusCode, raw, nil
}

func (p *player) register(t testing.TB) {
	t.Helper()
	var out struct{ Token, RefreshToken string }
	st, raw, err := p.call(context.Background(), "POST", "/api/auth/register", map[string]any{
		"username": p.name, "email": p.name + "@cluster.test", "password": playerPassword, "turnstileToken": botToken,
	}, &out)
	if err != nil || st != 200 {
		t.Fatalf("register %s: %d %s %v", p.name, st, raw, err)
	}
	p.token, p.refreshToken, p.tokenAt = out.Token, out.RefreshToken, time.Now()
}

// fresh renews the access token when it is getting old (they last 15
// minutes), as the web app does.
func (l *load) fresh(p *player) {
	if time.Since(p.tokenAt) < 8*time.Minute {
		return
	}
	var out struct{ Token, RefreshToken string }
	if l.do(p, "POST", "/api/auth/refresh", map[string]any{"refreshToken": p.refreshToken}, &out) {
		p.token, p.refreshToken, p.tokenAt = out.Token, out.RefreshToken, time.Now()
	}
}

// mustCall is call that fails the test unless the answer is 200.
func (p *player) mustCall(t testing.TB, method, path string, body, out any) {
	t.Helper()
	st, raw, err := p.call(context.Background(), method, path, body, out)
	if err != nil || st != 200 {
		t.Fatalf("%s %s: %d %s %v", method, path, st, raw, err)
	}
}

// ack is a bet the server acknowledged with a 200: its id and payout as
// answered, checked against the database afterwards.
type ack struct {
	id     string
	game   string
	payout json.Number
}

// load is a load generator: players placing dice bets and playing Mines
// rounds through the Service until stopped, recording every answer.
type load struct {
	mu        sync.Mutex
	latencies []time.Duration
	failures  []string
	statuses  map[int]int
	acks      []ack
	requests  atomic.Int64
	stop      chan struct{}
	wg        sync.WaitGroup
}

// startLoad registers n players and starts them playing.
func startLoad(t testing.TB, base, prefix string, n int) *load {
	t.Helper()
	l := &load{statuses: map[int]int{}, stop: make(chan struct{})}
	players := make([]*player, n)
	for i := range players {
		players[i] = newPlayer(t, base, fmt.Sprintf("%s%d", prefix, i))
		players[i].register(t)
	}
	for i, p := range players {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			l.play(p, uint64(i))
		}()
	}
	return l
}

func (l *load) record(method, path string, st int, raw []byte, err error, d time.Duration) bool {
	l.requests.Add(1)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.statuses[st]++
	if err != nil || st != 200 {
		if len(l.failures) < 50 {
			l.failures = append(l.failures, fmt.Sprintf("%s %s: %d %.200s %v", method, path, st, raw, err))
		} else {
			l.failures = append(l.failures, "")
		}
		return false
	}
	l.latencies = append(l.latencies, d)
	return true
}

func (l *load) do(p *player, method, path string, body, out any) bool {
	start := time.Now()
	st, raw, err := p.call(context.Background(), method, path, body, out)
	return l.record(method, path, st, raw, err, time.Since(start))
}

func (l *load) play(p *player, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 42))
	for i := 0; ; i++ {
		select {
		case <-l.stop:
			return
		default:
		}
		l.fresh(p)
		switch {
		case i%6 == 5:
			l.mines(p, rng)
		case i%6 == 4:
			l.do(p, "GET", "/api/auth/user", nil, nil)
		default:
			var bet struct {
				ID     string      `json:"betId"`
				Payout json.Number `json:"winAmount"`
			}
			if l.do(p, "POST", "/api/games/dice", map[string]any{"betAmount": 0.1, "rollTarget": 50}, &bet) {
				l.mu.Lock()
				l.acks = append(l.acks, ack{id: bet.ID, game: "dice", payout: bet.Payout})
				l.mu.Unlock()
			}
		}
		time.Sleep(time.Duration(10+rng.IntN(20)) * time.Millisecond)
	}
}

// mines plays one round: start, reveal one tile, cash out unless it hit.
// A round a failed request left running is cashed out first (a 409 for the
// next start would only repeat that failure).
func (l *load) mines(p *player, rng *rand.Rand) {
	if p.minesGame != "" {
		if l.do(p, "POST", "/api/games/mines/cashout", map[string]any{"gameId": p.minesGame}, nil) {
			p.minesGame = ""
		}
		return
	}
	var st struct {
		GameID string `json:"gameId"`
	}
	if !l.do(p, "POST", "/api/games/mines/start", map[string]any{"betAmount": 0.1, "mineCount": 3}, &st) {
		return
	}
	var r struct {
		HitMine  bool `json:"hitMine"`
		GameOver bool `json:"gameOver"`
	}
	p.minesGame = st.GameID
	if !l.do(p, "POST", "/api/games/mines/click", map[string]any{"gameId": st.GameID, "row": rng.IntN(5), "col": rng.IntN(5)}, &r) {
		return
	}
	if r.HitMine || r.GameOver || l.do(p, "POST", "/api/games/mines/cashout", map[string]any{"gameId": st.GameID}, nil) {
		p.minesGame = ""
	}
}

// finish stops the players and waits for them.
func (l *load) finish() {
	close(l.stop)
	l.wg.Wait()
}

// summary is the load's figures: requests, failures, statuses, p50/p99.
func (l *load) summary() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	lat := slices.Clone(l.latencies)
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	q := func(p float64) time.Duration {
		if len(lat) == 0 {
			return 0
		}
		return lat[min(len(lat)-1, int(float64(len(lat))*p))]
	}
	var codes []string
	for st, n := range l.statuses {
		codes = append(codes, fmt.Sprintf("%d×%d", n, st))
	}
	sort.Strings(codes)
	return fmt.Sprintf("%d requests, %d failed, %d bets acknowledged, statuses [%s], p50 %s, p99 %s, max %s",
		l.requests.Load(), len(l.failures), len(l.acks), strings.Join(codes, " "),
		q(0.50).Round(100*time.Microsecond), q(0.99).Round(100*time.Microsecond), q(1).Round(100*time.Microsecond))
}

// assertNoFailures fails the test when any request failed.
func (l *load) assertNoFailures(t testing.TB, during string) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.failures) > 0 {
		t.Errorf("%s: %d failed requests, first: %s", during, len(l.failures), strings.Join(l.failures[:min(len(l.failures), 10)], "\n  "))
	}
}
