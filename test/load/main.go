// Command load drives a running Fairplay server over its JSON /api and prints
// throughput and latency percentiles per scenario, operation and endpoint. It
// is what `make bench` runs; it sends traffic only to the -url it is given (a
// local server).
//
//	go run ./test/load -url http://127.0.0.1:18090 -scenario dice,mix -c 32,64 -d 15s
//	go run ./test/load -compare .data/bench/bench-OLD.json .data/bench/bench-NEW.json
//
// Scenarios: login (sign-in with the development bot token; slow by design,
// it hashes a password), user or balance (GET /api/auth/user), dice, plinko,
// keno (one bet per request), mines (a full round: start with 3 mines, reveal
// 1 to 3 hidden tiles, cash out unless a mine ended it), blackjack (a full
// hand: deal, double on a first-two-card 10 or 11, hit below 17, stand on 17
// or more), pump (start, pump 1 to 3 times, cash out unless it burst), and
// mix (dice twice as often as each of plinko, keno, mines, pump, blackjack
// and balance reads). A round is one operation; its requests are also reported
// per endpoint. pwflood is different: -signers players sign in over and over
// with the server otherwise idle, then while one more player floods POST
// /api/auth/change-password with as many parallel requests as the
// concurrency level (ignoring 429 and Retry-After), the two phases
// alternating -rounds times for -d in all each; it prints the other players'
// sign-in p50 and p99 in both phases and how the flood's requests were
// answered.
//
// Every bet stakes 0.01 against the starting balance (1000 by default); a
// player that goes broke anyway shows up as errors. Each worker drives its own
// player, finishes its round when the run's time is up, and before a run (and
// after a failed round) finishes the player's running games from GET
// /api/games/active. Players are registered first (with -prefix, an existing
// player signs in instead); the server must run with its rate limits off
// (FAIRPLAY_RATE_*=0). The exit status is 3 when any request failed.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// runConfig is what every run shares.
type runConfig struct {
	players []*player
	pid     int
	dur     time.Duration
}

// run drives conc workers, each with its own player, through sc for cfg.dur.
// Operations under way when the time is up are finished and counted; the
// run's rates divide by the time until the last one ended.
func run(ctx context.Context, cfg runConfig, sc scenario, conc int) *Result {
	players := cfg.players[:conc]
	if sc.stateful() {
		finishRunning(ctx, players)
	}
	kinds := map[string]string{"resume": kindAux, "refresh": kindAux}
	res := &Result{Scenario: sc.name, Concurrency: conc, ByOp: map[string]*Result{}}
	single := len(sc.ops) == 1
	for _, o := range sc.ops {
		kinds[o.name] = kindOp
		if !single {
			res.ByOp[o.name] = &Result{Scenario: o.name, Kind: kindOp}
			res.Order = append(res.Order, o.name)
		}
		for _, c := range o.calls {
			kinds[c] = kindCall
			res.ByOp[c] = &Result{Scenario: c, Kind: kindCall}
			res.Order = append(res.Order, c)
		}
	}

	var mu sync.Mutex
	var wg sync.WaitGroup
	before := takeSample(cfg.pid)
	deadline := before.at.Add(cfg.dur)
	for i, p := range players {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := &worker{p: p, rng: rand.New(rand.NewPCG(uint64(i), uint64(conc))), rec: newRecorder()}
			for time.Now().Before(deadline) && ctx.Err() == nil {
				if err := p.fresh(ctx); err != nil {
					w.rec.fail("refresh", err)
				}
				o := sc.pick(w.rng)
				t0 := time.Now()
				err := o.fn(ctx, w)
				if err == nil {
					w.rec.ok(o.name, time.Since(t0))
					continue
				}
				w.rec.fail(o.name, err)
				if len(o.calls) > 0 {
					t1 := time.Now()
					if err := w.resume(ctx); err != nil {
						w.rec.fail("resume", err)
					} else {
						w.rec.ok("resume", time.Since(t1))
					}
				}
				time.Sleep(5 * time.Millisecond) // do not spin on a failing server
			}
			mu.Lock()
			defer mu.Unlock()
			res.HTTPRequests += w.rec.calls
			for name, s := range w.rec.by {
				switch kinds[name] {
				case kindOp:
					res.add(s)
				case kindAux:
					res.add(&stats{errors: s.errors, firstErr: s.firstErr, kinds: s.kinds})
				}
				if kinds[name] == kindOp && single {
					continue
				}
				sub := res.ByOp[name]
				if sub == nil {
					sub = &Result{Scenario: name, Kind: kinds[name]}
					res.ByOp[name] = sub
				}
				sub.add(s)
			}
		}()
	}
	wg.Wait()
	after := takeSample(cfg.pid)
	for _, name := range slices.Sorted(maps.Keys(res.ByOp)) {
		if !slices.Contains(res.Order, name) {
			res.Order = append(res.Order, name)
		}
	}
	if len(res.ByOp) == 0 {
		res.ByOp = nil
	}
	res.Server = usageBetween(cfg.pid, before, after)
	res.finish(after.at.Sub(before.at))
	return res
}

// finishRunning ends the players' running games before a run, so a round an
// earlier run left open does not fail the first start.
func finishRunning(ctx context.Context, players []*player) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for i, p := range players {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			w := &worker{p: p, rng: rand.New(rand.NewPCG(uint64(i), 1)), rec: newRecorder()}
			if err := w.resume(ctx); err != nil {
				fmt.Fprintf(os.Stderr, "warning: finishing %s's running games: %v\n", p.name, err)
			}
		}()
	}
	wg.Wait()
}

// registerPlayers creates n players (signing in those that exist).
func registerPlayers(ctx context.Context, url, prefix string, n int) ([]*player, error) {
	players := make([]*player, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for i := range players {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			p, err := newPlayer(ctx, url, fmt.Sprintf("%s_%d", prefix, i))
			if err == nil {
				err = p.register(ctx)
			}
			players[i], errs[i] = p, err
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return players, nil
}

// setLimits gives every player all six limits, each far above what a bench
// run can reach (the top-up is 1,000 a day), so no bet is refused but every
// bet's statement evaluates each against the player's counters.
func setLimits(ctx context.Context, players []*player) error {
	huge := map[string]any{"day": "1000000000", "week": "2000000000", "month": "4000000000"}
	for _, p := range players {
		if err := p.do(ctx, "POST", "/api/limits", map[string]any{"loss": huge, "wager": huge}, nil); err != nil {
			return fmt.Errorf("%s: %w", p.name, err)
		}
	}
	return nil
}

func parseList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// parsePgbench reads "32=1234.5,64=1300" (clients=tps).
func parsePgbench(s string) (map[string]float64, error) {
	if s == "" {
		return nil, nil
	}
	m := map[string]float64{}
	for _, f := range parseList(s) {
		c, v, ok := strings.Cut(f, "=")
		tps, err := strconv.ParseFloat(v, 64)
		if _, cerr := strconv.Atoi(c); !ok || err != nil || cerr != nil {
			return nil, fmt.Errorf("-pgbench %q: want clients=tps,...", f)
		}
		m[c] = tps
	}
	return m, nil
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
	os.Exit(2)
}

func main() {
	url := flag.String("url", "http://127.0.0.1:8080", "server base URL (a local server)")
	scenarios := flag.String("scenario", "dice", "comma-separated scenarios: "+strings.Join(scenarioNames, ", "))
	concs := flag.String("c", "32", "comma-separated concurrency levels (one player per worker)")
	dur := flag.Duration("d", 10*time.Second, "duration of each run")
	users := flag.Int("users", 64, "players to register (at least the highest concurrency)")
	prefix := flag.String("prefix", "", "player name prefix (default random; reuse one to rerun with the same players)")
	serverPID := flag.Int("server-pid", 0, "the server's process id, to report its CPU and memory")
	flag.StringVar(&serverMetricsURL, "server-metrics", "", "the server's Prometheus metrics URL, to report the objects and bytes it allocates per operation")
	flag.IntVar(&postgresPID, "postgres-pid", 0, "the postmaster's process id, to report the CPU of Postgres (all its processes)")
	pgbench := flag.String("pgbench", "", "pgbench -N tps by client count, e.g. 32=1234,64=1300, to compare dice bets/s with")
	label := flag.String("label", "", "a label for the report (e.g. the git version)")
	flag.IntVar(&pwfloodSigners, "signers", pwfloodSigners, "pwflood: players signing in, one sign-in at a time each, while the flood is measured")
	flag.IntVar(&pwfloodRounds, "rounds", pwfloodRounds, "pwflood: how many times the idle and flooded phases alternate within -d each")
	jsonOut := flag.String("json", "", "write the report as JSON to this file")
	watchers := flag.Int("watchers", 0, "live bets streams (GET /api/live/bets) to hold open while the load runs")
	watchersAB := flag.Int("watchers-ab", 0, "instead of the load: measure what this many open live bets streams cost the first scenario at the first level, alternating runs without and with them (-ab-rounds pairs), then exit")
	abRounds := flag.Int("ab-rounds", 3, "with -watchers-ab: how many pairs of runs (without, with)")
	liveLatency := flag.Int("live-latency", 0, "measure commit-to-stream latency of the live feed over this many bets, then exit")
	withLimits := flag.Bool("limits", false, "give every player loss and wager limits for the day, week and month, far above what a run can lose or wager, so each bet checks all six against its counters")
	compareOld := flag.String("compare", "", "print a before/after table of this older report against the report given as the argument, and exit")
	flag.Parse()

	if *compareOld != "" {
		if flag.NArg() != 1 {
			fail("usage: load -compare OLD.json NEW.json")
		}
		out, err := compare(*compareOld, flag.Arg(0))
		if err != nil {
			fail("compare: %v", err)
		}
		fmt.Print(out)
		return
	}

	var scs []scenario
	for _, name := range parseList(*scenarios) {
		sc, err := scenarioFor(name)
		if err != nil {
			fail("%v", err)
		}
		scs = append(scs, sc)
	}
	var levels []int
	for _, s := range parseList(*concs) {
		c, err := strconv.Atoi(s)
		if err != nil || c < 1 {
			fail("bad concurrency %q", s)
		}
		levels = append(levels, c)
	}
	if len(scs) == 0 || len(levels) == 0 {
		fail("no scenario or no concurrency level")
	}
	pg, err := parsePgbench(*pgbench)
	if err != nil {
		fail("%v", err)
	}
	if *prefix == "" {
		*prefix = fmt.Sprintf("l%x", time.Now().UnixNano()&0xffffff)
	}

	ctx := context.Background()
	n := max(*users, slices.Max(levels), pwfloodSigners+1)
	t0 := time.Now()
	players, err := registerPlayers(ctx, *url, *prefix, n)
	if err != nil {
		fmt.Fprintln(os.Stderr, "register players:", err)
		os.Exit(1)
	}
	fmt.Printf("registered %d players (%s_*) in %.1fs\n", n, *prefix, time.Since(t0).Seconds())
	if *withLimits {
		if err := setLimits(ctx, players); err != nil {
			fail("set limits: %v", err)
		}
		fmt.Printf("limits set: loss and wager, day/week/month, on all %d players\n", n)
	}

	if *liveLatency > 0 {
		if err := runLiveLatency(ctx, *url, players[0], *liveLatency); err != nil {
			fail("live latency: %v", err)
		}
		return
	}
	if *watchersAB > 0 {
		if *abRounds < 1 || *abRounds > 20 {
			fail("-ab-rounds %d: want 1 to 20", *abRounds)
		}
		cfg := runConfig{players: players, pid: *serverPID, dur: *dur}
		if err := runWatchersAB(ctx, cfg, *url, scs[0], levels[0], *watchersAB, *abRounds); err != nil {
			fail("%v", err)
		}
		return
	}

	var lw *liveWatchers
	if *watchers > 0 {
		if lw, err = startWatchers(*url, *watchers); err != nil {
			fail("live watchers: %v", err)
		}
		fmt.Printf("%d live bets streams open\n", *watchers)
	}

	cfg := runConfig{players: players, pid: *serverPID, dur: *dur}
	report := &Report{When: time.Now().UTC().Format(time.RFC3339), Label: *label, Duration: dur.String(), Users: n, PgbenchTPS: pg}
	start := takeSample(*serverPID)
	for _, c := range levels {
		fmt.Printf("\n== %d concurrent players, %s per scenario ==\n", c, *dur)
		var t table
		t.header()
		fmt.Print(t.String())
		for _, sc := range scs {
			var r *Result
			before, beforeCounts := takeSample(*serverPID), readCounts(*serverPID)
			if sc.name == "pwflood" {
				if r, err = runPwflood(ctx, cfg, c); err != nil {
					fail("%v", err)
				}
			} else {
				r = run(ctx, cfg, sc, c)
			}
			if after := takeSample(*serverPID); before.ok && after.ok && r.Requests > 0 {
				r.ServerCPUus = float64((after.serverCPU - before.serverCPU).Microseconds()) / float64(r.Requests)
				r.ServerWork = workPer(beforeCounts, readCounts(*serverPID), r.Requests)
			}
			report.Runs = append(report.Runs, r)
			var t table
			t.result(r)
			t.errors(r)
			fmt.Print(t.String())
			if r.ServerCPUus > 0 {
				fmt.Printf("  server CPU: %.1f µs per %s operation (%d operations)\n", r.ServerCPUus, r.Scenario, r.Requests)
			}
			if r.ServerWork != nil {
				fmt.Printf("  server work per %s operation: %s\n", r.Scenario, r.ServerWork)
			}
			if sc.name == "pwflood" {
				fmt.Print(pwfloodSummary(r))
			}
		}
	}
	report.Server = usageBetween(*serverPID, start, takeSample(*serverPID))
	if lw != nil {
		lw.stop()
		fmt.Printf("\nlive bets streams: %d open, %d messages and %d bets received in all, %d ended by the server\n",
			*watchers, lw.messages.Load(), lw.bets.Load(), lw.ended.Load())
	}

	if u := report.Server; u != nil {
		fmt.Printf("\nserver (pid %d): RSS now %.1f MB, peak (VmHWM) %.1f MB, CPU %.0f%% of one core on average over the load "+
			"(the load generator itself: %.0f%%)\n", *serverPID, u.RSSMB, u.PeakRSSMB, u.CPUPercent, u.LoadCPUPercent)
	}
	if len(pg) > 0 {
		report.DiceToPgbench = map[string]float64{}
		fmt.Printf("\n%-8s %12s %14s %8s\n", "clients", "dice bets/s", "pgbench -N tps", "ratio")
		for _, c := range levels {
			key := strconv.Itoa(c)
			tps, ok := pg[key]
			if !ok {
				continue
			}
			dice, ratio := "-", "n/a"
			for _, r := range report.Runs {
				if r.Scenario == "dice" && r.Concurrency == c {
					dice = fmt.Sprintf("%.1f", r.RPS)
					if tps > 0 {
						report.DiceToPgbench[key] = r.RPS / tps
						ratio = fmt.Sprintf("%.3f", r.RPS/tps)
					}
				}
			}
			fmt.Printf("%-8d %12s %14.1f %8s\n", c, dice, tps, ratio)
		}
	}
	errors := 0
	for _, r := range report.Runs {
		errors += r.Errors
	}
	if errors > 0 {
		fmt.Printf("\n%d errors in all (see the ! lines above)\n", errors)
	}
	if *jsonOut != "" {
		raw, _ := json.MarshalIndent(report, "", "  ")
		if err := os.WriteFile(*jsonOut, append(raw, '\n'), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	if errors > 0 {
		os.Exit(3) // the figures stand, but the run was not clean
	}
}
