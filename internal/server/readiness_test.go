package server

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

var errDown = errors.New("dial tcp 10.0.0.7:5432: connect: connection refused")

// A dependency goes down only after Failures failed pings in a row and up
// again only after Successes answered pings in a row.
func TestDependencyHysteresis(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		pings string // f = failed, o = answered
		want  string // the state after each ping: u = up, d = down
	}{
		{name: "one blip", pings: "ofoo", want: "uuuu"},
		{name: "two failures", pings: "ffoff", want: "uuuuu"},
		{name: "three failures", pings: "fff", want: "uud"},
		{name: "one answer is not enough", pings: "fffoffoo", want: "uudddddu"},
		{name: "answers must be in a row", pings: "fffofoo", want: "uuddddu"},
		{name: "failures must be in a row", pings: "ffoffoff", want: "uuuuuuuu"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := newDependency("postgres", nil, ReadinessPolicy{Interval: time.Second, Failures: 3, Successes: 2},
				slog.New(slog.DiscardHandler), nil, "down", "up")
			var got strings.Builder
			for _, p := range tc.pings {
				var err error
				if p == 'f' {
					err = errDown
				}
				d.observe(context.Background(), err)
				got.WriteByte(map[bool]byte{true: 'u', false: 'd'}[d.up.Load()])
			}
			if got.String() != tc.want {
				t.Fatalf("pings %s: states %s, want %s", tc.pings, got.String(), tc.want)
			}
		})
	}
}

// countingLog counts the records logged at warn or above.
type countingLog struct {
	slog.Handler
	warnings *atomic.Int32
}

func (h countingLog) Enabled(_ context.Context, l slog.Level) bool { return true }
func (h countingLog) Handle(_ context.Context, r slog.Record) error {
	if r.Level >= slog.LevelWarn {
		h.warnings.Add(1)
	}
	return nil
}

// readyzServer is a Server with only what /readyz reads: scripted
// dependencies whose pings are counted.
func readyzServer(t *testing.T, warnings *atomic.Int32) (s *Server, pings *atomic.Int32) {
	t.Helper()
	pings = new(atomic.Int32)
	log := slog.New(countingLog{Handler: slog.DiscardHandler, warnings: warnings})
	p := ReadinessPolicy{Interval: time.Second, Failures: 3, Successes: 2}
	ping := func(context.Context) error { pings.Add(1); return nil }
	s = &Server{deps: Deps{Logger: log}}
	s.postgres = newDependency("postgres", ping, p, log, nil, "not ready: postgres does not answer", "ready again")
	s.redis = newDependency("redis", ping, p, log, nil, "redis does not answer", "redis answers again")
	return s, pings
}

func getReadyz(s *Server) (int, string) {
	rec := httptest.NewRecorder()
	s.readyz(rec, httptest.NewRequest("GET", "/readyz", nil))
	return rec.Code, rec.Body.String()
}

// /readyz answers from the background checks' state: no ping per request,
// Redis never makes it fail, Postgres does after the policy's failures, and
// the body names what is not ready without the error.
func TestReadyzAnswersFromTheChecks(t *testing.T) {
	t.Parallel()
	warnings := new(atomic.Int32)
	s, pings := readyzServer(t, warnings)
	ctx := context.Background()
	for range 20 {
		if code, body := getReadyz(s); code != http.StatusOK || body != "ok\n" {
			t.Fatalf("readyz: %d %q, want 200 ok", code, body)
		}
	}
	if n := pings.Load(); n != 0 {
		t.Fatalf("20 probes pinged %d times; want 0 (the background checks ping)", n)
	}

	for range 10 {
		s.redis.observe(ctx, errDown)
	}
	if s.redis.up.Load() {
		t.Fatal("redis still up after 10 failed pings")
	}
	if code, body := getReadyz(s); code != http.StatusOK {
		t.Fatalf("readyz with Redis down: %d %q, want 200", code, body)
	}
	if n := warnings.Load(); n != 1 {
		t.Fatalf("the Redis outage was logged %d times at warn, want once", n)
	}

	for range 3 {
		s.postgres.observe(ctx, errDown)
	}
	code, body := getReadyz(s)
	if code != http.StatusServiceUnavailable || body != "not ready: postgres\n" {
		t.Fatalf("readyz with Postgres down: %d %q", code, body)
	}
	for _, leak := range []string{"10.0.0.7", "dial", "refused", "redis"} {
		if strings.Contains(body, leak) {
			t.Errorf("readyz body %q shows %q", body, leak)
		}
	}
	if s.ready() {
		t.Error("ready() (fairplay_ready) is true with Postgres down")
	}
	s.postgres.observe(ctx, nil)
	s.postgres.observe(ctx, nil)
	if code, _ := getReadyz(s); code != http.StatusOK {
		t.Fatalf("readyz after Postgres answered twice: %d", code)
	}

	s.draining.Store(true)
	if code, body := getReadyz(s); code != http.StatusServiceUnavailable || body != "not ready: draining\n" {
		t.Fatalf("readyz while draining: %d %q", code, body)
	}
}

// Run pings every interval until its context ends, and readiness follows.
func TestRunWatchesUntilCancelled(t *testing.T) {
	t.Parallel()
	var failing atomic.Bool
	var pings atomic.Int32
	ping := func(ctx context.Context) error {
		pings.Add(1)
		if failing.Load() {
			return errDown
		}
		return nil
	}
	p := ReadinessPolicy{Interval: time.Millisecond, Failures: 3, Successes: 2}
	s := &Server{deps: Deps{Logger: slog.New(slog.DiscardHandler)}}
	s.postgres = newDependency("postgres", ping, p, s.deps.Logger, nil, "down", "up")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Run(ctx); close(done) }()

	waitFor := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within 30s", what)
			}
			time.Sleep(time.Millisecond)
		}
	}
	failing.Store(true)
	waitFor("not ready after failed pings", func() bool { return !s.ready() })
	failing.Store(false)
	waitFor("ready after answered pings", s.ready)
	cancel()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return after its context ended")
	}
	n := pings.Load()
	time.Sleep(20 * time.Millisecond)
	if pings.Load() != n {
		t.Fatal("pings went on after Run returned")
	}
}
