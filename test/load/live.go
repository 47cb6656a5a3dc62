package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// liveWatchers holds open n GET /api/live/bets streams while the load runs
// (BENCH_WATCHERS), reading every event as a browser would, and counts the
// bets they receive, so a run measures bets with the feed's fan-out on.
type liveWatchers struct {
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	bets     atomic.Int64
	messages atomic.Int64
	ended    atomic.Int64
}

func startWatchers(base string, n int) (*liveWatchers, error) {
	ctx, cancel := context.WithCancel(context.Background())
	w := &liveWatchers{cancel: cancel}
	client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 0, MaxIdleConnsPerHost: n}}
	for range n {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/live/bets", nil)
		if err != nil {
			cancel()
			return nil, err
		}
		res, err := client.Do(req)
		if err != nil {
			cancel()
			return nil, err
		}
		if res.StatusCode != http.StatusOK {
			res.Body.Close()
			cancel()
			return nil, fmt.Errorf("GET /api/live/bets: %d", res.StatusCode)
		}
		w.wg.Go(func() {
			defer res.Body.Close()
			r := bufio.NewReader(res.Body)
			for {
				line, err := r.ReadString('\n')
				if err != nil {
					if ctx.Err() == nil {
						w.ended.Add(1)
					}
					return
				}
				if data, ok := strings.CutPrefix(line, "data: "); ok {
					var msg struct {
						Bets []json.RawMessage `json:"bets"`
					}
					if json.Unmarshal([]byte(data), &msg) == nil {
						w.messages.Add(1)
						w.bets.Add(int64(len(msg.Bets)))
					}
				}
			}
		})
	}
	return w, nil
}

func (w *liveWatchers) stop() {
	w.cancel()
	w.wg.Wait()
}

// runLiveLatency measures how long a settled bet takes to reach a second
// client's live stream: one player places n dice bets one after another,
// and for each, the time from its response arriving (the bet has
// committed) to the bet's id arriving on a GET /api/live/bets stream
// opened by another client. It prints p50, p90, p99 and the maximum.
func runLiveLatency(ctx context.Context, base string, p *player, n int) error {
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	req, err := http.NewRequestWithContext(sctx, http.MethodGet, base+"/api/live/bets", nil)
	if err != nil {
		return err
	}
	res, err := http.DefaultClient.Do(req) //nolint:bodyclose // closed by the deferred close below
	if err != nil {
		return err
	}
	defer func() { _ = res.Body.Close() }()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("GET /api/live/bets: %d", res.StatusCode)
	}
	var mu sync.Mutex
	seen := map[string]time.Time{}
	arrived := make(chan struct{}, 1)
	go func() {
		r := bufio.NewReader(res.Body)
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			data, ok := strings.CutPrefix(line, "data: ")
			if !ok {
				continue
			}
			at := time.Now()
			var msg struct {
				Bets []struct {
					ID string `json:"_id"`
				} `json:"bets"`
			}
			if json.Unmarshal([]byte(data), &msg) != nil {
				continue
			}
			mu.Lock()
			for _, b := range msg.Bets {
				seen[b.ID] = at
			}
			mu.Unlock()
			select {
			case arrived <- struct{}{}:
			default:
			}
		}
	}()
	var lat []time.Duration
	missing := 0
	for range n {
		var out struct {
			BetID string `json:"betId"`
		}
		if err := p.do(ctx, "POST", "/api/games/dice", map[string]any{"betAmount": 1, "rollTarget": 50}, &out); err != nil {
			return err
		}
		answered := time.Now()
		deadline := time.NewTimer(5 * time.Second)
		got := false
		for !got {
			mu.Lock()
			at, ok := seen[out.BetID]
			mu.Unlock()
			if ok {
				lat = append(lat, max(0, at.Sub(answered)))
				got = true
				break
			}
			select {
			case <-arrived:
			case <-deadline.C:
				missing++
				got = true
			}
		}
		deadline.Stop()
		// Bets a little apart, as a player clicks: each message then holds
		// one bet and the figure is the feed's own delay, not the
		// coalescing of a burst (a message per 100 ms at most).
		time.Sleep(120 * time.Millisecond)
	}
	if len(lat) == 0 {
		return fmt.Errorf("no bet reached the live stream (%d missing)", missing)
	}
	slices.Sort(lat)
	q := func(p float64) time.Duration { return lat[min(len(lat)-1, int(p*float64(len(lat))))] }
	fmt.Printf("\nlive-bet latency, commit (response) to a second client's SSE stream, %d bets: p50 %.1f ms, p90 %.1f ms, "+
		"p99 %.1f ms, max %.1f ms; %d missing\n", len(lat), ms(q(0.5)), ms(q(0.9)), ms(q(0.99)), ms(lat[len(lat)-1]), missing)
	return nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// abRun is one run of the -watchers-ab comparison.
type abRun struct {
	rps, p99, cpuUs float64
	errors          int
}

// runWatchersAB measures what n open live bets streams cost the bets: it
// alternates runs of the scenario without and with the streams open (the
// same players, server and database; pairs, so a machine growing busier
// or quieter during the measurement weighs on both sides alike) and prints
// each run and the medians' difference in throughput, p99 and the server's
// CPU per operation.
func runWatchersAB(ctx context.Context, cfg runConfig, base string, sc scenario, conc, n, rounds int) error {
	fmt.Printf("\n== live streams A/B: %s at %d concurrent players, %s per run, %d pairs; B holds %d live bets streams open ==\n",
		sc.name, conc, cfg.dur, rounds, n)
	fmt.Printf("%-6s %-4s %10s %9s %12s %7s\n", "round", "side", "req/s", "p99 ms", "srv µs/op", "errors")
	var off, on []abRun
	measure := func(round int, side string) abRun {
		before := takeSample(cfg.pid)
		r := run(ctx, cfg, sc, conc)
		after := takeSample(cfg.pid)
		out := abRun{rps: r.RPS, p99: r.P99ms, errors: r.Errors}
		if before.ok && after.ok && r.Requests > 0 {
			out.cpuUs = float64((after.serverCPU - before.serverCPU).Microseconds()) / float64(r.Requests)
		}
		fmt.Printf("%-6d %-4s %10.1f %9.2f %12.1f %7d\n", round, side, out.rps, out.p99, out.cpuUs, out.errors)
		return out
	}
	for i := 1; i <= rounds; i++ {
		off = append(off, measure(i, "A"))
		w, err := startWatchers(base, n)
		if err != nil {
			return fmt.Errorf("live watchers: %w", err)
		}
		b := measure(i, "B")
		w.stop()
		if w.bets.Load() == 0 {
			return fmt.Errorf("round %d: %d streams open but none received a bet", i, n)
		}
		on = append(on, b)
	}
	med := func(runs []abRun, f func(abRun) float64) float64 {
		v := make([]float64, len(runs))
		for i, r := range runs {
			v[i] = f(r)
		}
		slices.Sort(v)
		if len(v)%2 == 1 {
			return v[len(v)/2]
		}
		return (v[len(v)/2-1] + v[len(v)/2]) / 2
	}
	pct := func(a, b float64) string {
		if a == 0 {
			return "n/a"
		}
		return fmt.Sprintf("%+.1f%%", 100*(b-a)/a)
	}
	rpsA, rpsB := med(off, func(r abRun) float64 { return r.rps }), med(on, func(r abRun) float64 { return r.rps })
	p99A, p99B := med(off, func(r abRun) float64 { return r.p99 }), med(on, func(r abRun) float64 { return r.p99 })
	cpuA, cpuB := med(off, func(r abRun) float64 { return r.cpuUs }), med(on, func(r abRun) float64 { return r.cpuUs })
	// Paired: each round's B against its own A, so a drift of the machine
	// or the database over the measurement cancels out.
	paired := func(f func(abRun) float64) string {
		d := make([]abRun, 0, len(off))
		for i := range off {
			if a := f(off[i]); a > 0 {
				d = append(d, abRun{rps: 100 * (f(on[i]) - a) / a})
			}
		}
		if len(d) == 0 {
			return "n/a"
		}
		return fmt.Sprintf("%+.1f%%", med(d, func(r abRun) float64 { return r.rps }))
	}
	defer func() {
		fmt.Printf("median of the paired differences (B against its own round's A): req/s %s, p99 %s, server µs/op %s\n",
			paired(func(r abRun) float64 { return r.rps }), paired(func(r abRun) float64 { return r.p99 }),
			paired(func(r abRun) float64 { return r.cpuUs }))
	}()
	fmt.Printf("\nmedians: without streams %.1f req/s, p99 %.2f ms, %.1f µs/op; with %d streams %.1f req/s (%s), p99 %.2f ms (%s), %.1f µs/op (%s)\n",
		rpsA, p99A, cpuA, n, rpsB, pct(rpsA, rpsB), p99B, pct(p99A, p99B), cpuB, pct(cpuA, cpuB))
	return nil
}
