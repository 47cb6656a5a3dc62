// Command load drives a running Fairplay server over its JSON /api and prints
// throughput and latency percentiles per scenario. It is what `make bench`
// runs; it sends traffic only to the -url it is given (a local server).
//
//	go run ./test/load -url http://127.0.0.1:18090 -scenario dice -c 32 -d 15s
//
// Scenarios: login (sign-in with the development bot token), user (GET
// /api/auth/user), dice (one bet per request), mix (dice, plinko, keno and
// balance reads). Players are registered first; the server must run with its
// rate limits off (FAIRPLAY_RATE_*=0).
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/cookiejar"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
)

type player struct {
	name, token string
	http        *http.Client
	csrf        string
	base        string
}

func newPlayer(base, name string, transport http.RoundTripper) (*player, error) {
	jar, _ := cookiejar.New(nil)
	p := &player{name: name, base: base, http: &http.Client{Jar: jar, Transport: transport, Timeout: 30 * time.Second}}
	res, err := p.http.Get(base + "/api/csrf")
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	var body struct {
		CSRFToken string `json:"csrfToken"`
	}
	if err := json.NewDecoder(res.Body).Decode(&body); err != nil {
		return nil, fmt.Errorf("csrf: %w", err)
	}
	p.csrf = body.CSRFToken
	return p, nil
}

var errStatus = errors.New("unexpected status")

// do sends one request and returns its status; non-2xx is an error.
func (p *player) do(ctx context.Context, method, path string, body any, out any) error {
	var rd io.Reader
	if body != nil {
		raw, _ := json.Marshal(body)
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, p.base+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-CSRF-Token", p.csrf)
	if p.token != "" {
		req.Header.Set("Authorization", "Bearer "+p.token)
	}
	res, err := p.http.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	if res.StatusCode/100 != 2 {
		return fmt.Errorf("%w %d: %s", errStatus, res.StatusCode, strings.TrimSpace(string(raw)))
	}
	if out != nil {
		return json.Unmarshal(raw, out)
	}
	return nil
}

const botToken = "XXXX.DUMMY.TOKEN.XXXX"

func (p *player) register(ctx context.Context) error {
	var out struct{ Token string }
	err := p.do(ctx, "POST", "/api/auth/register", map[string]any{"username": p.name, "email": p.name + "@load.test",
		"password": "loadtest1", "turnstileToken": botToken}, &out)
	p.token = out.Token
	return err
}

// Result is one scenario's figures.
type Result struct {
	Scenario    string  `json:"scenario"`
	Concurrency int     `json:"concurrency"`
	Seconds     float64 `json:"seconds"`
	Requests    int     `json:"requests"`
	Errors      int     `json:"errors"`
	RPS         float64 `json:"rps"`
	P50ms       float64 `json:"p50_ms"`
	P95ms       float64 `json:"p95_ms"`
	P99ms       float64 `json:"p99_ms"`
	// ByOp splits a mixed scenario by operation.
	ByOp      map[string]*Result `json:"by_op,omitempty"`
	FirstErr  string             `json:"first_error,omitempty"`
	latencies []time.Duration
}

func (r *Result) finish(elapsed time.Duration) {
	r.Seconds = elapsed.Seconds()
	r.Requests = len(r.latencies) + r.Errors
	r.RPS = float64(len(r.latencies)) / r.Seconds
	slices.Sort(r.latencies)
	pct := func(q float64) float64 {
		if len(r.latencies) == 0 {
			return 0
		}
		return float64(r.latencies[int(q*float64(len(r.latencies)-1))].Microseconds()) / 1000
	}
	r.P50ms, r.P95ms, r.P99ms = pct(.50), pct(.95), pct(.99)
	for _, sub := range r.ByOp {
		sub.Concurrency = r.Concurrency
		sub.finish(elapsed)
	}
}

type op struct {
	name string
	fn   func(ctx context.Context, p *player) error
}

func scenarioOps(name string) ([]op, error) {
	dice := op{"dice", func(ctx context.Context, p *player) error {
		return p.do(ctx, "POST", "/api/games/dice", map[string]any{"betAmount": 0.01, "rollTarget": 50}, nil)
	}}
	plinko := op{"plinko", func(ctx context.Context, p *player) error {
		return p.do(ctx, "POST", "/api/games/plinko", map[string]any{"betAmount": 0.01, "rows": 12, "risk": "medium"}, nil)
	}}
	keno := op{"keno", func(ctx context.Context, p *player) error {
		return p.do(ctx, "POST", "/api/games/keno", map[string]any{"betAmount": 0.01, "selectedNumbers": []int{3, 7, 11, 19, 23}, "riskLevel": "classic"}, nil)
	}}
	user := op{"balance", func(ctx context.Context, p *player) error { return p.do(ctx, "GET", "/api/auth/user", nil, nil) }}
	login := op{"login", func(ctx context.Context, p *player) error {
		return p.do(ctx, "POST", "/api/auth/login", map[string]any{"username": p.name, "password": "loadtest1", "turnstileToken": botToken}, nil)
	}}
	switch name {
	case "dice":
		return []op{dice}, nil
	case "user":
		return []op{user}, nil
	case "login":
		return []op{login}, nil
	case "mix":
		return []op{dice, dice, plinko, keno, user}, nil
	}
	return nil, fmt.Errorf("unknown scenario %q", name)
}

func run(ctx context.Context, players []*player, scenario string, conc int, d time.Duration) (*Result, error) {
	ops, err := scenarioOps(scenario)
	if err != nil {
		return nil, err
	}
	res := &Result{Scenario: scenario, Concurrency: conc}
	if len(ops) > 1 {
		res.ByOp = map[string]*Result{}
		for _, o := range ops {
			res.ByOp[o.name] = &Result{Scenario: o.name}
		}
	}
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var mu sync.Mutex
	var wg sync.WaitGroup
	start := time.Now()
	for w := range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := players[w%len(players)]
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			var lat []time.Duration
			sub := map[string][]time.Duration{}
			errs, subErrs := 0, map[string]int{}
			var first string
			for ctx.Err() == nil {
				o := ops[rng.IntN(len(ops))]
				t0 := time.Now()
				err := o.fn(ctx, p)
				if ctx.Err() != nil {
					break // the run ended mid-request; do not count it
				}
				if err != nil {
					errs++
					subErrs[o.name]++
					if first == "" {
						first = err.Error()
					}
					continue
				}
				el := time.Since(t0)
				lat = append(lat, el)
				sub[o.name] = append(sub[o.name], el)
			}
			mu.Lock()
			res.latencies = append(res.latencies, lat...)
			res.Errors += errs
			if res.FirstErr == "" {
				res.FirstErr = first
			}
			if res.ByOp != nil {
				for k, v := range sub {
					res.ByOp[k].latencies = append(res.ByOp[k].latencies, v...)
				}
				for k, v := range subErrs {
					res.ByOp[k].Errors += v
				}
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	res.finish(time.Since(start))
	return res, nil
}

func main() {
	url := flag.String("url", "http://127.0.0.1:8080", "server base URL (a local server)")
	scenarios := flag.String("scenario", "dice", "comma-separated scenarios: login, user, dice, mix")
	concs := flag.String("c", "32", "comma-separated concurrency levels")
	dur := flag.Duration("d", 10*time.Second, "duration of each run")
	users := flag.Int("users", 64, "players to register")
	jsonOut := flag.String("json", "", "write results as JSON to this file")
	flag.Parse()

	ctx := context.Background()
	transport := &http.Transport{MaxIdleConnsPerHost: 512, MaxConnsPerHost: 0, IdleConnTimeout: time.Minute}
	prefix := fmt.Sprintf("l%x", time.Now().UnixNano()&0xffffff)
	players := make([]*player, *users)
	var wg sync.WaitGroup
	errc := make(chan error, *users)
	sem := make(chan struct{}, 8)
	for i := range players {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			p, err := newPlayer(*url, fmt.Sprintf("%s_%d", prefix, i), transport)
			if err == nil {
				err = p.register(ctx)
			}
			players[i] = p
			if err != nil {
				errc <- err
			}
		}()
	}
	wg.Wait()
	close(errc)
	if err := <-errc; err != nil {
		fmt.Fprintln(os.Stderr, "register players:", err)
		os.Exit(1)
	}

	var results []*Result
	fmt.Printf("%-10s %5s %9s %8s %9s %8s %8s %8s\n", "scenario", "conc", "requests", "errors", "req/s", "p50 ms", "p95 ms", "p99 ms")
	for _, sc := range strings.Split(*scenarios, ",") {
		for _, cs := range strings.Split(*concs, ",") {
			var c int
			if _, err := fmt.Sscan(cs, &c); err != nil || c < 1 {
				fmt.Fprintln(os.Stderr, "bad concurrency", cs)
				os.Exit(2)
			}
			r, err := run(ctx, players, strings.TrimSpace(sc), c, *dur)
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(2)
			}
			results = append(results, r)
			print := func(name string, r *Result) {
				fmt.Printf("%-10s %5d %9d %8d %9.1f %8.2f %8.2f %8.2f\n", name, r.Concurrency, r.Requests, r.Errors, r.RPS, r.P50ms, r.P95ms, r.P99ms)
			}
			print(r.Scenario, r)
			for _, k := range slices.Sorted(func(yield func(string) bool) {
				for k := range r.ByOp {
					if !yield(k) {
						return
					}
				}
			}) {
				print("  "+k, r.ByOp[k])
			}
			if r.FirstErr != "" {
				fmt.Printf("  first error: %s\n", r.FirstErr)
			}
		}
	}
	if *jsonOut != "" {
		raw, _ := json.MarshalIndent(results, "", "  ")
		if err := os.WriteFile(*jsonOut, raw, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}
