package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// pwfloodSigners is how many other players sign in, one sign-in after
// another each, while the pwflood scenario measures them.
var pwfloodSigners = 4

// pwfloodBody is the flood's request: a wrong current password, so every
// request that gets through costs the server one argon2 verification and
// changes nothing.
var pwfloodBody = mustJSON(map[string]any{"currentPassword": "not-the-password", "newPassword": "Flood-pass1!"})

// pwfloodRounds is how many times the pwflood scenario alternates its idle
// and flooded phases, so that whatever else the machine runs weighs on both
// alike.
var pwfloodRounds = 3

// runPwflood measures what one account flooding POST
// /api/auth/change-password costs everyone else. Other players
// (pwfloodSigners of them, each signing in again as soon as its last
// sign-in ended) sign in with nothing else running ("signin idle"), then
// while one more player keeps conc change-password requests in flight
// ("signin flooded"); the two phases alternate pwfloodRounds times, cfg.dur
// in all for each. The flood behaves as a hostile client would: it ignores
// Retry-After and sends its next request as soon as an answer comes,
// whatever the answer; its answers are counted by status ("flood"), and only
// a status other than 400 (the wrong current password) and 429 (refused)
// counts as an error.
func runPwflood(ctx context.Context, cfg runConfig, conc int) (*Result, error) {
	if len(cfg.players) < pwfloodSigners+1 {
		return nil, fmt.Errorf("pwflood needs %d players (-users)", pwfloodSigners+1)
	}
	signers, flooder := cfg.players[:pwfloodSigners], cfg.players[len(cfg.players)-1]
	// The flood: conc connections of the flooder, each with its own CSRF
	// cookie and the flooder's access token.
	floods := make([]*player, conc)
	for i := range floods {
		p, err := newPlayer(ctx, flooder.base, flooder.name)
		if err != nil {
			return nil, fmt.Errorf("pwflood: %w", err)
		}
		p.token = flooder.token
		floods[i] = p
	}
	rounds := max(pwfloodRounds, 1)
	phase := cfg.dur / time.Duration(rounds)
	before := takeSample(cfg.pid)
	idle, flooded, flood := &stats{kinds: map[string]int{}}, &stats{kinds: map[string]int{}}, &stats{kinds: map[string]int{}}
	statuses := map[string]int{}
	var idleTime, floodedTime, floodTime time.Duration
	for range rounds {
		s, d := signIns(ctx, signers, "signin idle", phase)
		idle.merge(s)
		idleTime += d
		stop := make(chan struct{})
		done := make(chan struct{})
		t0 := time.Now()
		go func() {
			defer close(done)
			floodUntil(ctx, floods, stop, flood, statuses)
		}()
		// Let the flood reach full strength before measuring.
		time.Sleep(500 * time.Millisecond)
		s, d = signIns(ctx, signers, "signin flooded", phase)
		flooded.merge(s)
		floodedTime += d
		close(stop)
		<-done
		floodTime += time.Since(t0)
	}
	after := takeSample(cfg.pid)

	res := &Result{Scenario: "pwflood", Concurrency: conc, Order: []string{"signin idle", "signin flooded", "flood"},
		ByOp: map[string]*Result{
			"signin idle":    {Scenario: "signin idle", Kind: kindOp, Concurrency: len(signers)},
			"signin flooded": {Scenario: "signin flooded", Kind: kindOp, Concurrency: len(signers)},
			"flood":          {Scenario: "flood", Kind: kindCall, Concurrency: conc, Statuses: statuses},
		}}
	res.ByOp["signin idle"].add(idle)
	res.ByOp["signin idle"].finish(idleTime)
	res.ByOp["signin flooded"].add(flooded)
	res.ByOp["signin flooded"].finish(floodedTime)
	res.ByOp["flood"].add(flood)
	res.ByOp["flood"].finish(floodTime)
	// The scenario's own row is the figure that matters: other players'
	// sign-ins under the flood.
	f := res.ByOp["signin flooded"]
	res.Seconds, res.Requests, res.Errors, res.RPS = f.Seconds, f.Requests, f.Errors+res.ByOp["flood"].Errors, f.RPS
	res.P50ms, res.P95ms, res.P99ms = f.P50ms, f.P95ms, f.P99ms
	res.FirstErr, res.ErrorKinds = f.FirstErr, f.ErrorKinds
	if res.FirstErr == "" {
		res.FirstErr, res.ErrorKinds = res.ByOp["flood"].FirstErr, res.ByOp["flood"].ErrorKinds
	}
	res.HTTPRequests = idle.calls() + flooded.calls() + res.ByOp["flood"].Requests
	res.HTTPRPS = float64(res.HTTPRequests) / after.at.Sub(before.at).Seconds()
	res.Server = usageBetween(cfg.pid, before, after)
	return res, nil
}

// floodUntil keeps one change-password request in flight on each of floods
// until stop is closed, and adds what it saw to flood and statuses.
func floodUntil(ctx context.Context, floods []*player, stop <-chan struct{}, flood *stats, statuses map[string]int) {
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, p := range floods {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rec := newRecorder()
			seen := map[string]int{}
			for {
				select {
				case <-stop:
					mu.Lock()
					defer mu.Unlock()
					for k, n := range seen {
						statuses[k] += n
					}
					flood.merge(rec.get("flood"))
					return
				default:
				}
				t0 := time.Now()
				err := p.do(ctx, "POST", "/api/auth/change-password", pwfloodBody, nil)
				var he *httpError
				switch {
				case errors.As(err, &he) && (he.status == 400 || he.status == 429):
					seen[strconv.Itoa(he.status)]++
					rec.ok("flood", time.Since(t0))
				case err != nil:
					seen[errorKind(err)]++
					rec.fail("flood", err)
					time.Sleep(5 * time.Millisecond)
				default:
					seen["200"]++
					rec.fail("flood", protocolErrorf("POST /api/auth/change-password with a wrong current password: 200"))
				}
			}
		}()
	}
	wg.Wait()
}

// merge adds o's figures to s.
func (s *stats) merge(o *stats) {
	s.lat = append(s.lat, o.lat...)
	s.errors += o.errors
	for k, n := range o.kinds {
		s.kinds[k] += n
	}
	if s.firstErr == "" {
		s.firstErr = o.firstErr
	}
}

// calls is how many requests the stats saw.
func (s *stats) calls() int { return len(s.lat) + s.errors }

// signIns has each player sign in again and again for dur and returns the
// sign-ins' figures under name and the time they took.
func signIns(ctx context.Context, players []*player, name string, dur time.Duration) (*stats, time.Duration) {
	var mu sync.Mutex
	all := &stats{kinds: map[string]int{}}
	var wg sync.WaitGroup
	start := time.Now()
	deadline := start.Add(dur)
	for _, p := range players {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rec := newRecorder()
			body := map[string]any{"username": p.name, "password": password, "turnstileToken": botToken}
			for time.Now().Before(deadline) && ctx.Err() == nil {
				t0 := time.Now()
				if err := p.do(ctx, "POST", "/api/auth/login", body, nil); err != nil {
					rec.fail(name, err)
					time.Sleep(5 * time.Millisecond)
					continue
				}
				rec.ok(name, time.Since(t0))
			}
			mu.Lock()
			defer mu.Unlock()
			all.merge(rec.get(name))
		}()
	}
	wg.Wait()
	return all, time.Since(start)
}

// pwfloodSummary states the scenario's finding in one paragraph: other
// players' sign-in latency idle and under the flood, and what the flood got.
func pwfloodSummary(r *Result) string {
	idle, flooded, flood := r.ByOp["signin idle"], r.ByOp["signin flooded"], r.ByOp["flood"]
	if idle == nil || flooded == nil || flood == nil {
		return ""
	}
	ratio := func(a, b float64) string {
		if b == 0 {
			return "-"
		}
		return fmt.Sprintf("×%.2f", a/b)
	}
	var st []string
	for _, k := range slices.Sorted(maps.Keys(flood.Statuses)) {
		st = append(st, fmt.Sprintf("%s×%d", k, flood.Statuses[k]))
	}
	return fmt.Sprintf("  pwflood @%d: other players' sign-in (%d at a time) idle p50 %.2f ms p99 %.2f ms; "+
		"under the change-password flood p50 %.2f ms p99 %.2f ms (%s p50, %s p99)\n"+
		"  pwflood @%d: the flood sent %d requests (%.1f/s): %s\n",
		r.Concurrency, idle.Concurrency, idle.P50ms, idle.P99ms, flooded.P50ms, flooded.P99ms,
		ratio(flooded.P50ms, idle.P50ms), ratio(flooded.P99ms, idle.P99ms),
		r.Concurrency, flood.Requests, flood.RPS, strings.Join(st, " "))
}
