package chaos_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fairplay/fairplay/internal/postgres"
	"github.com/fairplay/fairplay/test/proc"
)

// standbyName is the standby's application_name, whichever node it is, and
// so what the primary's synchronous_standby_names names.
const standbyName = "fairplay_standby"

// failoverConfig is the failover drill's length: FAILOVER_ROUNDS rounds in
// each replication mode of FAILOVER_REPLICATION, with FAILOVER_PAUSE of load
// after each step.
type failoverConfig struct {
	rounds int
	modes  []string
	pause  time.Duration
}

func loadFailoverConfig(t *testing.T) failoverConfig {
	t.Helper()
	c := failoverConfig{rounds: 1, modes: []string{"sync", "async"}, pause: 2 * time.Second}
	if s := os.Getenv("FAILOVER_ROUNDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("FAILOVER_ROUNDS=%q: want a positive number", s)
		}
		c.rounds = n
	}
	if s := os.Getenv("FAILOVER_REPLICATION"); s != "" {
		c.modes = nil
		for m := range strings.SplitSeq(s, ",") {
			if m = strings.TrimSpace(m); m != "sync" && m != "async" {
				t.Fatalf("FAILOVER_REPLICATION=%q: want sync, async or sync,async", s)
			}
			c.modes = append(c.modes, strings.TrimSpace(m))
		}
	}
	if s := os.Getenv("FAILOVER_PAUSE"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			t.Fatalf("FAILOVER_PAUSE=%q: want a positive duration such as 5s", s)
		}
		c.pause = d
	}
	return c
}

// TestFailover is the drill of the database's machine going away for good
// (see the package comment for the checks every drill shares). Two Postgres
// servers run: a primary and a streaming standby cloned from it
// (pg_basebackup -R). The server's DATABASE_URL names both with
// target_session_attrs=read-write. Under the mixed load, each round
//
//  1. waits for a bet to be acknowledged and at once SIGKILLs the primary's
//     whole process group (postmaster and backends: nothing is flushed or
//     sent after that instant);
//  2. waits for readiness to turn false (the pool finds no server that takes
//     writes: one refuses connections, the other is in recovery), then
//     promotes the standby with pg_ctl promote, as a failover manager would;
//  3. waits for readiness to turn true and bets to succeed again, without
//     touching the server;
//  4. rebuilds the dead primary as the new primary's standby
//     (pg_basebackup from it, started under the load) and, in synchronous
//     mode, names it in synchronous_standby_names again once it streams;
//
// and the two servers swap roles for the next round. At the end every check
// of TestChaos runs; in synchronous mode every bet and game a player saw
// acknowledged must exist exactly as answered, and in asynchronous mode the
// acknowledged bets the failovers lost are counted and reported, not failed
// (with them, a few 4xx answers to actions on games the failover lost are
// allowed too). The outage each round cost the players is logged: the time
// from the kill to the first acknowledged bet sent after it, and the 503s.
//
// # Synchronous replication after a promotion
//
// With synchronous_standby_names set and the only standby gone, every commit
// waits until a standby is back: strict synchronous replication (Patroni's
// synchronous_mode_strict, CloudNativePG's dataDurability: required) trades
// the site's availability for never acknowledging a commit held by one
// server only. With two servers that means the casino stops whenever either
// one fails, not only the primary. The drill does what Patroni's
// synchronous_mode (not strict) and CloudNativePG's dataDurability: preferred
// do: the promoted server starts with synchronous_standby_names empty (the
// manager clears it on the standby before promoting), takes bets alone while
// its new standby is being built, and asks for synchronous commit again as
// soon as that standby streams. The window without a second copy is the
// rebuild (seconds here; minutes to hours for a large database): a second
// failure inside it loses the bets acknowledged since the first.
// docs/deploy.md gives the production advice (three instances, so that one
// standby is left after a failover and strict mode costs nothing).
//
// The short form (one round in each mode, about 30 s each on a busy 2-core
// machine, plus the build) runs in `make test`. Knobs: FAILOVER_ROUNDS
// (default 1), FAILOVER_REPLICATION (sync, async, or both: sync,async, the
// default), FAILOVER_PAUSE (default 2s of load after each step). A long run:
//
//	FAILOVER_ROUNDS=10 FAILOVER_PAUSE=5s go test -race -count=1 -v -timeout 60m -run Failover ./test/chaos/
func TestFailover(t *testing.T) {
	cfg := loadFailoverConfig(t)
	for _, mode := range cfg.modes {
		t.Run(mode, func(t *testing.T) { failoverDrill(t, cfg, mode == "sync") })
	}
}

// roundFigures is what one failover cost the players.
type roundFigures struct {
	unready, promoted, firstBet time.Duration // after the kill
	promote                     time.Duration // pg_ctl promote's own time
	errors503, noAnswer         int
	span503                     time.Duration // first to last 503
}

func (f roundFigures) String() string {
	return fmt.Sprintf("not ready after %.2fs, promoted after %.2fs (pg_ctl promote %.2fs), first acknowledged bet after %.2fs; %d bet answers 503 over %.2fs, %d without an answer",
		f.unready.Seconds(), f.promoted.Seconds(), f.promote.Seconds(), f.firstBet.Seconds(), f.errors503, f.span503.Seconds(), f.noAnswer)
}

// outage measures, from the bet requests, what the kill at killed cost.
func (s *stats) outage(killed time.Time) roundFigures {
	s.mu.Lock()
	defer s.mu.Unlock()
	var f roundFigures
	var first503, last503 time.Time
	for _, b := range s.bets {
		if b.end.Before(killed) {
			continue
		}
		switch {
		case b.ok && b.start.After(killed):
			if f.firstBet == 0 || b.end.Sub(killed) < f.firstBet {
				f.firstBet = b.end.Sub(killed)
			}
		case b.status == http.StatusServiceUnavailable:
			f.errors503++
			if first503.IsZero() || b.end.Before(first503) {
				first503 = b.end
			}
			if b.end.After(last503) {
				last503 = b.end
			}
		case !b.ok && b.status == 0:
			f.noAnswer++
		}
	}
	if f.errors503 > 0 {
		f.span503 = last503.Sub(first503)
	}
	return f
}

// newNode makes the directory of one Postgres server of the pair.
func newNode(t *testing.T, dir, name string) string {
	t.Helper()
	d := filepath.Join(dir, name)
	if err := os.Mkdir(d, 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}

func failoverDrill(t *testing.T, cfg failoverConfig, synchronous bool) {
	ctx := t.Context()
	dir := tempDir(t)
	primary, err := proc.NewPostgres(newNode(t, dir, "a"))
	if err != nil {
		t.Fatal(err)
	}
	startPostgres(t, primary)
	if err := primary.CreateDatabase(ctx, "fairplay"); err != nil {
		t.Fatal(err)
	}
	standby, err := proc.NewStandby(newNode(t, dir, "b"), primary, standbyName)
	if err != nil {
		t.Fatal(err)
	}
	startPostgres(t, standby)
	replicate := func(primary *proc.Postgres) {
		t.Helper()
		if err := primary.WaitStreaming(standbyName, "async", time.Minute); err != nil {
			t.Fatal(err)
		}
		if !synchronous {
			return
		}
		if err := primary.SetSynchronousStandbys(ctx, standbyName); err != nil {
			t.Fatal(err)
		}
		if err := primary.WaitStreaming(standbyName, "sync", time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	replicate(primary)
	nodeLogs := map[string]*proc.Log{"a": primary.Log(), "b": standby.Log()}

	dbURL := fmt.Sprintf("postgres://postgres@127.0.0.1:%d,127.0.0.1:%d/fairplay?sslmode=disable&target_session_attrs=read-write&connect_timeout=5",
		primary.Port, standby.Port)
	e := startStack(t, dir, dbURL, "FAIRPLAY_READINESS_FAILURES=2")

	ph := &phases{}
	ph.enter("setup")
	st := newStats(ph)
	st.clientErrorsOK = !synchronous
	ps := make([]*player, players)
	for i := range ps {
		ps[i] = newPlayer(i, e.url, st, ph)
		if err := ps[i].register(); err != nil {
			t.Fatal(err)
		}
	}
	ready := newReadiness(e.url, ph, st)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { ready.run(stop) })
	for i, p := range ps {
		wg.Go(func() { p.run(stop, i) })
	}
	stopLoad := sync.OnceFunc(func() { close(stop); wg.Wait() })
	t.Cleanup(func() {
		stopLoad()
		if t.Failed() {
			t.Logf("requests by phase:\n%s\nreadiness:\n%s", st.summary(), ready)
			t.Logf("server log:\n%s", e.srvLog.Tail(6000))
			for name, l := range nodeLogs {
				t.Logf("postgres %s log:\n%s", name, l.Tail(3000))
			}
		}
	})
	running := func(phase, n int) {
		t.Helper()
		start := time.Now()
		for time.Since(start) < cfg.pause || st.phase(phase).Bets < n {
			if time.Since(start) > cfg.pause+time.Minute {
				t.Fatalf("[%s] only %d bets succeeded in %s", ph.name(phase), st.phase(phase).Bets, time.Since(start).Round(time.Second))
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	await := func(want bool, timeout time.Duration) {
		t.Helper()
		if err := ready.await(want, timeout); err != nil {
			t.Fatalf("[%s] %v", ph.name(ph.current()), err)
		}
	}

	running(ph.enter("warm-up"), 20)
	var figures []roundFigures
	for round := 1; round <= cfg.rounds; round++ {
		// 1. The primary's machine goes away, right after a bet was
		// acknowledged: with asynchronous replication its commit has the
		// least chance of having reached the standby.
		ph.enter(fmt.Sprintf("r%d primary killed", round))
		select {
		case <-st.acked: // an old signal
		default:
		}
		select {
		case <-st.acked:
		case <-time.After(time.Minute):
			t.Fatalf("round %d: no bet acknowledged in a minute", round)
		}
		primary.Crash()
		killed := time.Now() // every process of the primary is gone

		// 2. The server has no primary: it stops being ready. The standby
		// refuses writes, and readiness says why.
		await(false, 30*time.Second)
		unready := time.Since(killed)
		checkStandbyRefusesWrites(t, standby)
		// The manager promotes, first clearing synchronous_standby_names
		// (non-strict: the new primary has no standby yet).
		if err := standby.SetSynchronousStandbys(ctx, ""); err != nil {
			t.Fatal(err)
		}
		promoting := time.Now()
		if err := standby.Promote(); err != nil {
			t.Fatal(err)
		}
		promoted, promote := time.Since(killed), time.Since(promoting)

		// 3. The server finds the new primary by itself.
		ph.enter(fmt.Sprintf("r%d promoted", round))
		await(true, time.Minute)
		if e.srv.Exited() {
			t.Fatalf("the server exited during the failover (%v):\n%s", e.srv.Err(), e.srvLog.Tail(4000))
		}
		running(ph.current(), 20)

		// 4. The old primary comes back as the new primary's standby.
		ph.enter(fmt.Sprintf("r%d rebuilding", round))
		if err := primary.CloneFrom(standby, standbyName); err != nil {
			t.Fatal(err)
		}
		startPostgres(t, primary)
		replicate(standby)
		running(ph.enter(fmt.Sprintf("r%d standby back", round)), 20)

		f := st.outage(killed)
		f.unready, f.promoted, f.promote = unready, promoted, promote
		figures = append(figures, f)
		t.Logf("round %d: %s", round, f)
		primary, standby = standby, primary
	}
	stopLoad()

	ph.enter("finish games")
	for _, p := range ps {
		for attempt := 0; !p.finish(); attempt++ {
			if attempt == 5 {
				t.Fatalf("%s: the running games could not be finished", p.name)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	ph.enter("done")

	t.Logf("requests by phase:\n%s", st.summary())
	t.Logf("readiness:\n%s", ready)
	st.mu.Lock()
	for _, pr := range st.problems {
		t.Error(pr)
	}
	st.mu.Unlock()
	for _, p := range ps {
		for _, b := range p.broken {
			t.Error(b)
		}
	}
	serverLogErrors(t, e.srvLog.String())

	out := e.fairplay("ledger", "verify")
	t.Logf("fairplay ledger verify:\n%s", out)
	if !strings.Contains(out, "ledger verify: clean") {
		t.Errorf("fairplay ledger verify exited 0 without saying clean:\n%s", out)
	}
	lost := audit(t, e.dbURL, ps, !synchronous)
	auditStats(t, e.dbURL, newClient(e.url, st, ph))

	mode := "async"
	if synchronous {
		mode = "sync"
	}
	var acked int
	for _, p := range ps {
		acked += len(p.seen)
	}
	var outages []string
	for _, f := range figures {
		outages = append(outages, fmt.Sprintf("%.2fs", f.firstBet.Seconds()))
	}
	// One line with the figures, for the closing notes and for grep.
	t.Logf("FAILOVER %s: %d rounds; outage per round (kill to the first acknowledged bet) %s; acknowledged bets and games lost: %d of %d settled bets seen",
		mode, cfg.rounds, strings.Join(outages, " "), lost, acked)
	if synchronous && lost != 0 {
		t.Errorf("synchronous replication lost %d acknowledged bets or games", lost)
	}
}

// checkStandbyRefusesWrites checks what readiness relies on: the standby is
// not writable, and a pool connected to it says so with ErrReadOnly.
func checkStandbyRefusesWrites(t *testing.T, standby *proc.Postgres) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	pool, err := postgres.Open(ctx, standby.URL("fairplay"))
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if err := postgres.CheckWritable(ctx, pool); !errors.Is(err, postgres.ErrReadOnly) {
		t.Errorf("CheckWritable on the standby: %v, want ErrReadOnly", err)
	}
}
