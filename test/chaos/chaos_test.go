package chaos_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fairplay/fairplay/test/proc"
)

// binary is the server built once by TestMain.
var binary string

func TestMain(m *testing.M) {
	os.Exit(proc.RunWithServer(m, &binary))
}

// players is the number of concurrent players of the load.
const players = 8

// adminPassword signs in the administrator who reads the statistics.
const adminPassword = "Chaos-Admin-1!"

// config is the run's length: CHAOS_ROUNDS rounds of the three drills, with
// CHAOS_PAUSE of load after each recovery.
type config struct {
	rounds int
	pause  time.Duration
}

func loadConfig(t *testing.T) config {
	t.Helper()
	c := config{rounds: 1, pause: 2 * time.Second}
	if s := os.Getenv("CHAOS_ROUNDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("CHAOS_ROUNDS=%q: want a positive number", s)
		}
		c.rounds = n
	}
	if s := os.Getenv("CHAOS_PAUSE"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			t.Fatalf("CHAOS_PAUSE=%q: want a positive duration such as 10s", s)
		}
		c.pause = d
	}
	return c
}

// env is the chaos stack: a private Postgres and Redis and the server.
type env struct {
	t      *testing.T
	dir    string
	pg     *proc.Postgres
	redis  *proc.Redis
	dbURL  string
	srvEnv []string
	srvLog *proc.Log
	srv    *proc.Process // the running server; replaced by a restart
	url    string
	// metricsURL is the server's internal listener (/metrics).
	metricsURL string
}

// setUp starts Postgres and Redis, migrates a database, makes a signing key
// and starts the server; everything is stopped when the test ends.
func setUp(t *testing.T) *env {
	t.Helper()
	dir := tempDir(t)
	pg, err := proc.NewPostgres(dir)
	if err != nil {
		t.Fatal(err)
	}
	startPostgres(t, pg)
	if err := pg.CreateDatabase(t.Context(), "fairplay"); err != nil {
		t.Fatal(err)
	}
	e := startStack(t, dir, pg.URL("fairplay"))
	e.pg = pg
	return e
}

// tempDir is a directory removed when the test ends. Not t.TempDir: as
// root, Postgres runs as the postgres user, which must be able to enter it.
func tempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "fairplay-chaos-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// startPostgres starts pg, to be stopped (fast) when the test ends.
func startPostgres(t *testing.T, pg *proc.Postgres) {
	t.Helper()
	if err := pg.Start(time.Minute); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := pg.Stop(proc.Fast); err != nil {
			t.Errorf("stop postgres: %v\n%s", err, pg.Log().Tail(3000))
		}
	})
}

// startStack starts Redis, migrates the database at dbURL, makes a signing
// key, creates the administrator and starts the server, with extra
// environment variables for it; everything is stopped when the test ends.
func startStack(t *testing.T, dir, dbURL string, extra ...string) *env {
	t.Helper()
	e := &env{t: t, dir: dir, srvLog: proc.NewLog(), dbURL: dbURL}
	var err error
	if e.redis, err = proc.NewRedis(dir); err != nil {
		t.Fatal(err)
	}
	if err := e.redis.Start(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.redis.Kill)

	port, err := proc.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	metricsPort, err := proc.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	e.metricsURL = "http://127.0.0.1:" + strconv.Itoa(metricsPort)
	keyDir := filepath.Join(dir, "keys")
	e.srvEnv = []string{
		"PATH=" + os.Getenv("PATH"),
		"DATABASE_URL=" + e.dbURL,
		"REDIS_URL=" + e.redis.URL(),
		"FAIRPLAY_SIGNING_KEYS_DIR=" + keyDir,
		"FAIRPLAY_HTTP_ADDR=127.0.0.1:" + strconv.Itoa(port),
		"FAIRPLAY_METRICS_ADDR=127.0.0.1:" + strconv.Itoa(metricsPort),
		// The limits stay on, so every bet and sign-in asks Redis (and fails
		// open while it is down), but high enough never to refuse the load.
		"FAIRPLAY_RATE_LOGIN_IP=100000/1m", "FAIRPLAY_RATE_LOGIN_ACCOUNT_IP=100000/1m", "FAIRPLAY_RATE_LOGIN_ACCOUNT_FAILURES=100000/1m",
		"FAIRPLAY_RATE_PASSWORD_USER=100000/1m", "FAIRPLAY_RATE_PASSWORD_IP=100000/1m",
		"FAIRPLAY_RATE_REGISTER_IP=100000/1h", "FAIRPLAY_RATE_BETS_USER=100000/1s", "FAIRPLAY_RATE_SESSION_IP=100000/1m",
		"FAIRPLAY_LOG_FORMAT=json", "FAIRPLAY_LOG_LEVEL=info", "FAIRPLAY_SHUTDOWN_TIMEOUT=10s",
		// A short drain (the last SIGTERM still goes through it) and quick
		// readiness checks keep the drills short.
		"FAIRPLAY_DRAIN_DELAY=1s", "FAIRPLAY_READINESS_INTERVAL=500ms",
		"OTEL_SDK_DISABLED=true",
	}
	e.srvEnv = append(e.srvEnv, extra...)
	e.fairplay("keys", "generate", "--dir", keyDir)
	e.fairplay("migrate")
	e.fairplay("admin", "create", "--username", "admin", "--password", adminPassword)
	e.startServer()
	t.Cleanup(func() {
		if e.srv.Exited() {
			return
		}
		if err := e.srv.Stop(syscall.SIGTERM, 30*time.Second); err != nil {
			t.Errorf("server did not shut down cleanly: %v\n%s", err, e.srvLog.Tail(4000))
		}
	})
	return e
}

// fairplay runs a fairplay subcommand with the server's environment and
// fails the test unless it exits 0.
func (e *env) fairplay(args ...string) string {
	e.t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = e.srvEnv
	out, err := cmd.CombinedOutput()
	if err != nil {
		e.t.Fatalf("fairplay %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// startServer starts `fairplay serve` (again) on the same port and keys.
func (e *env) startServer() {
	e.t.Helper()
	p, err := proc.StartServer("fairplay", binary, e.srvEnv, e.srvLog)
	if err != nil {
		e.t.Fatal(err)
	}
	e.srv = p
	url, err := p.WaitServing(time.Minute)
	if err != nil {
		p.Kill()
		e.t.Fatal(err)
	}
	if e.url != "" && url != e.url {
		e.t.Fatalf("the restarted server serves on %s, not %s", url, e.url)
	}
	e.url = url
}

// readiness polls /readyz all along and keeps its transitions.
type readiness struct {
	url    string
	phases *phases
	stats  *stats
	http   *http.Client
	begin  time.Time

	mu          sync.Mutex
	ready       bool
	polled      time.Time // when the poll that set ready began
	unready     time.Time // when the last poll that found it not ready began
	transitions []string
}

func newReadiness(url string, ph *phases, st *stats) *readiness {
	return &readiness{url: url, phases: ph, stats: st, http: &http.Client{Timeout: deadline}, begin: time.Now()}
}

func (r *readiness) run(stop <-chan struct{}) {
	for first := true; ; first = false {
		start := time.Now()
		res, err := r.http.Get(r.url + "/readyz")
		elapsed := time.Since(start)
		ready, detail := false, ""
		if err != nil {
			detail = errorKind(err)
			if elapsed > deadline+hangMargin || strings.Contains(err.Error(), "Client.Timeout") {
				r.stats.problem("[%s] GET /readyz: no answer in %s: %v", r.phases.name(r.phases.current()), elapsed, err)
			}
		} else {
			body, _ := io.ReadAll(io.LimitReader(res.Body, 1024))
			res.Body.Close()
			ready = res.StatusCode == http.StatusOK
			detail = fmt.Sprintf("%d %s", res.StatusCode, strings.Join(strings.Fields(string(body)), " "))
		}
		r.mu.Lock()
		if first || ready != r.ready {
			r.transitions = append(r.transitions, fmt.Sprintf("%7s [%s] ready=%t: %s",
				start.Sub(r.begin).Round(10*time.Millisecond), r.phases.name(r.phases.current()), ready, detail))
		}
		r.ready, r.polled = ready, start
		if !ready {
			r.unready = start
		}
		r.mu.Unlock()
		select {
		case <-stop:
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// await waits for a poll begun after the call to report want.
func (r *readiness) await(want bool, timeout time.Duration) error {
	since := time.Now()
	for {
		r.mu.Lock()
		ready, polled := r.ready, r.polled
		r.mu.Unlock()
		if ready == want && polled.After(since) {
			return nil
		}
		if time.Since(since) > timeout {
			return fmt.Errorf("/readyz did not report ready=%t within %s", want, timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// unreadySince reports whether a poll begun after since found the server not
// ready.
func (r *readiness) unreadySince(since time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.unready.After(since)
}

func (r *readiness) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return "  " + strings.Join(r.transitions, "\n  ")
}

// TestChaos runs the drills under load, then audits the money.
func TestChaos(t *testing.T) {
	cfg := loadConfig(t)
	e := setUp(t)
	ph := &phases{}
	ph.enter("setup")
	st := newStats(ph)
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
			t.Logf("postgres log:\n%s", e.pg.Log().Tail(3000))
			t.Logf("redis log:\n%s", e.redis.Log().Tail(1500))
		}
	})

	// running waits at least cfg.pause, and until the phase has n successful
	// bets: the service works again.
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
	serverUp := func(what string) {
		t.Helper()
		if e.srv.Exited() {
			t.Fatalf("the server exited during the %s (%v):\n%s", what, e.srv.Err(), e.srvLog.Tail(4000))
		}
	}

	running(ph.enter("warm-up"), 20)
	for round := 1; round <= cfg.rounds; round++ {
		// 1. The server dies without a chance to drain and is started again.
		ph.enter(fmt.Sprintf("r%d server killed", round))
		e.srv.Kill()
		await(false, 30*time.Second)
		time.Sleep(500 * time.Millisecond) // the load runs into the closed port
		e.startServer()
		await(true, time.Minute)
		running(ph.enter(fmt.Sprintf("r%d server restarted", round)), 20)

		// 2. Postgres crashes (or shuts down fast) under the running server.
		mode, modeName := proc.Immediate, "crash"
		if round%2 == 0 {
			mode, modeName = proc.Fast, "fast stop"
		}
		ph.enter(fmt.Sprintf("r%d postgres %s", round, modeName))
		if err := e.pg.Stop(mode); err != nil {
			t.Fatalf("stop postgres: %v\n%s", err, e.pg.Log().Tail(3000))
		}
		await(false, 30*time.Second)
		time.Sleep(time.Second)
		if err := e.pg.Start(time.Minute); err != nil {
			t.Fatal(err)
		}
		await(true, time.Minute)
		serverUp("Postgres outage")
		running(ph.enter(fmt.Sprintf("r%d postgres back", round)), 20)

		// 3. Redis dies under the running server; rate limits fail open, so
		// bets go on while it is down, and the server stays ready.
		redisDown := ph.enter(fmt.Sprintf("r%d redis killed", round))
		killed := time.Now()
		e.redis.Kill()
		running(redisDown, 10)
		if n := metric(t, e.metricsURL, "fairplay_rate_limit_errors_total"); n == 0 {
			t.Fatalf("bets went on with Redis down, but fairplay_rate_limit_errors_total is 0: did they ask Redis?")
		}
		for start := time.Now(); metric(t, e.metricsURL, `fairplay_dependency_up{dependency="redis"}`) != 0; time.Sleep(50 * time.Millisecond) {
			if time.Since(start) > 30*time.Second {
				t.Fatalf(`the server did not notice Redis down: fairplay_dependency_up{dependency="redis"} is still 1`)
			}
		}
		if err := ready.await(true, 10*time.Second); err != nil || ready.unreadySince(killed) {
			t.Fatalf("[%s] the server was not ready while only Redis was down (%v)", ph.name(ph.current()), err)
		}
		if err := e.redis.Start(30 * time.Second); err != nil {
			t.Fatal(err)
		}
		await(true, time.Minute)
		serverUp("Redis outage")
		running(ph.enter(fmt.Sprintf("r%d redis back", round)), 20)
	}
	stopLoad()

	// Every game left running by a lost answer can be finished.
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
	audit(t, e.dbURL, ps, false)
	auditStats(t, e.dbURL, newClient(e.url, st, ph))
}

// metric reads one sample (a name with its labels, as /metrics prints it)
// from /metrics on the internal listener at url.
func metric(t *testing.T, url, name string) float64 {
	t.Helper()
	client := &http.Client{Timeout: deadline}
	res, err := client.Get(url + "/metrics")
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	for line := range strings.SplitSeq(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			n, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				t.Fatalf("metric line %q: %v", line, err)
			}
			return n
		}
	}
	t.Fatalf("no %s in /metrics", name)
	return 0
}

// serverLogErrors fails on a panic in the server's log and reports its
// errors and warnings, counted by message and cause.
func serverLogErrors(t *testing.T, log string) {
	t.Helper()
	counts := map[string]int{}
	for line := range strings.SplitSeq(log, "\n") {
		var l struct {
			Level, Msg, Err, Path string
			Status                int
		}
		if json.Unmarshal([]byte(line), &l) != nil || l.Level != "ERROR" && l.Level != "WARN" {
			continue
		}
		if strings.Contains(l.Msg, "panic") {
			t.Errorf("the server panicked: %s", line)
		}
		key := l.Level + " " + l.Msg
		if l.Path != "" {
			key += fmt.Sprintf(" %s %d", l.Path, l.Status)
		}
		if l.Err != "" {
			key += ": " + l.Err
		}
		counts[key]++
	}
	var lines []string
	for k, n := range counts {
		lines = append(lines, fmt.Sprintf("  %5d  %s", n, proc.Tail(k, 300)))
	}
	sort.Strings(lines)
	t.Logf("server log errors and warnings:\n%s", strings.Join(lines, "\n"))
}
