package main

import (
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// The allocation totals are read from the exposition a server's Go collector
// writes, and grow by what is allocated between two readings.
func TestAllocationsFromTheGoCollector(t *testing.T) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector())
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer srv.Close()

	var c0, c1 counts
	ok := allocations(srv.URL, &c0)
	o0, b0 := c0.objects, c0.bytes
	if !ok || o0 <= 0 || b0 <= o0 {
		t.Fatalf("allocations = %v objects, %v bytes, ok %v; want positive totals, more bytes than objects", o0, b0, ok)
	}
	keep := make([][]byte, 0, 1000)
	for range 1000 {
		keep = append(keep, make([]byte, 4096))
	}
	ok = allocations(srv.URL, &c1)
	o1, b1 := c1.objects, c1.bytes
	if !ok || o1 < o0+1000 || b1 < b0+1000*4096 {
		t.Fatalf("after 1000 allocations of 4 kB: objects %v -> %v, bytes %v -> %v (ok %v)", o0, o1, b0, b1, ok)
	}
	_ = keep

	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
		promhttp.HandlerFor(reg, promhttp.HandlerOpts{}).ServeHTTP(w, r)
	}))
	defer failing.Close()
	if allocations(failing.URL, &counts{}) {
		t.Fatal("a 503's body was read as totals")
	}
	empty := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer empty.Close()
	if allocations(empty.URL, &counts{}) {
		t.Fatal("an exposition without the Go collector's totals was read as totals")
	}
}

// The bets and game actions per batch statement come from the server's
// batch counters between two readings.
func TestBetsPerBatchFromTheServersCounters(t *testing.T) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector())
	batches := prometheus.NewCounter(prometheus.CounterOpts{Name: "fairplay_bet_batches_total"})
	bets := prometheus.NewCounter(prometheus.CounterOpts{Name: "fairplay_bet_batched_bets_total"})
	actionBatches := prometheus.NewCounter(prometheus.CounterOpts{Name: "fairplay_action_batches_total"})
	actions := prometheus.NewCounter(prometheus.CounterOpts{Name: "fairplay_action_batched_actions_total"})
	betSeconds := prometheus.NewCounter(prometheus.CounterOpts{Name: "fairplay_bet_batch_seconds_total"})
	actionSeconds := prometheus.NewCounter(prometheus.CounterOpts{Name: "fairplay_action_batch_seconds_total"})
	reg.MustRegister(batches, bets, actionBatches, actions, betSeconds, actionSeconds)
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer srv.Close()
	batches.Add(3)
	bets.Add(10)
	actionBatches.Add(2)
	actions.Add(7)
	read := func() counts {
		var c counts
		c.allocOK = allocations(srv.URL, &c)
		return c
	}
	betSeconds.Add(1)
	actionSeconds.Add(0.5)
	a := read()
	if !a.allocOK || a.batches != 3 || a.batched != 10 || a.actionBatches != 2 || a.actionBatched != 7 ||
		a.batchSeconds != 1 || a.actionBatchSeconds != 0.5 {
		t.Fatalf("first reading: %+v; want 3 batches of 10 bets in 1 s, 2 of 7 actions in 0.5 s", a)
	}
	batches.Add(4)
	bets.Add(50)
	actionBatches.Add(5)
	actions.Add(40)
	betSeconds.Add(0.008)
	actionSeconds.Add(0.0025)
	b := read()
	a.at, b.at = time.Unix(100, 0), time.Unix(100, 0).Add(10*time.Millisecond)
	w := workPer(a, b, 50)
	if w == nil || w.BetsPerBatch != 12.5 || w.ActionsPerBatch != 8 {
		t.Fatalf("work = %+v; want 12.5 bets per batch (50 bets in 4 statements), 8 actions (40 in 5)", w)
	}
	// 8 ms in 4 statements over 10 ms; 2.5 ms in 5.
	near := func(got, want float64) bool { return math.Abs(got-want) < 1e-9 }
	if !near(w.BetStatementMs, 2) || !near(w.BetStatementsRunning, 0.8) ||
		!near(w.ActionStatementMs, 0.5) || !near(w.ActionStatementsRunning, 0.25) {
		t.Fatalf("work = %+v; want bet statements of 2 ms, 0.8 running; action statements of 0.5 ms, 0.25 running", w)
	}
	if got, want := w.String(), "12.5 bets per batch statement (2.00 ms each, 0.80 running at once on average)"; !strings.Contains(got, want) {
		t.Fatalf("report %q; want it to say %q", got, want)
	}
	if w := workPer(a, a, 50); w == nil || w.BetsPerBatch != 0 || w.ActionsPerBatch != 0 {
		t.Fatalf("no batch between the readings: work = %+v; want no bets nor actions per batch", w)
	}
}

// A process's read and write system calls are counted from /proc, and a
// read adds at least one.
func TestSystemCallsOfAProcess(t *testing.T) {
	if _, err := os.ReadFile("/proc/self/io"); err != nil {
		t.Skipf("no /proc/<pid>/io on this system: %v", err)
	}
	a := readCounts(os.Getpid())
	if !a.syscallsOK {
		t.Fatal("/proc/<pid>/io is readable, but its syscr was not read")
	}
	f, err := os.Open("/proc/self/stat")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 64)
	for range 10 {
		if _, err := f.ReadAt(buf, 0); err != nil {
			t.Fatal(err)
		}
	}
	b := readCounts(os.Getpid())
	if b.reads < a.reads+10 || b.switches < a.switches {
		t.Fatalf("reads %d -> %d, context switches %d -> %d after ten reads", a.reads, b.reads, a.switches, b.switches)
	}
	w := workPer(a, b, 10)
	if w == nil || w.Reads < 1 || w.Objects != 0 {
		t.Fatalf("work per read = %+v, want at least one read system call and no allocations (none read)", w)
	}
	if workPer(counts{}, counts{}, 10) != nil || workPer(a, b, 0) != nil {
		t.Fatal("work without counts or operations")
	}
}
