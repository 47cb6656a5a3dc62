package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

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

	o0, b0, _, _, ok := allocations(srv.URL)
	if !ok || o0 <= 0 || b0 <= o0 {
		t.Fatalf("allocations = %v objects, %v bytes, ok %v; want positive totals, more bytes than objects", o0, b0, ok)
	}
	keep := make([][]byte, 0, 1000)
	for range 1000 {
		keep = append(keep, make([]byte, 4096))
	}
	o1, b1, _, _, ok := allocations(srv.URL)
	if !ok || o1 < o0+1000 || b1 < b0+1000*4096 {
		t.Fatalf("after 1000 allocations of 4 kB: objects %v -> %v, bytes %v -> %v (ok %v)", o0, o1, b0, b1, ok)
	}
	_ = keep

	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
		promhttp.HandlerFor(reg, promhttp.HandlerOpts{}).ServeHTTP(w, r)
	}))
	defer failing.Close()
	if _, _, _, _, ok := allocations(failing.URL); ok {
		t.Fatal("a 503's body was read as totals")
	}
	empty := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer empty.Close()
	if _, _, _, _, ok := allocations(empty.URL); ok {
		t.Fatal("an exposition without the Go collector's totals was read as totals")
	}
}

// The bets per batch statement come from the server's batch counters
// between two readings.
func TestBetsPerBatchFromTheServersCounters(t *testing.T) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector())
	batches := prometheus.NewCounter(prometheus.CounterOpts{Name: "fairplay_bet_batches_total"})
	bets := prometheus.NewCounter(prometheus.CounterOpts{Name: "fairplay_bet_batched_bets_total"})
	reg.MustRegister(batches, bets)
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer srv.Close()
	batches.Add(3)
	bets.Add(10)
	read := func() counts {
		var c counts
		c.objects, c.bytes, c.batches, c.batched, c.allocOK = allocations(srv.URL)
		return c
	}
	a := read()
	if !a.allocOK || a.batches != 3 || a.batched != 10 {
		t.Fatalf("first reading: %+v; want 3 batches of 10 bets", a)
	}
	batches.Add(4)
	bets.Add(50)
	if w := workPer(a, read(), 50); w == nil || w.BetsPerBatch != 12.5 {
		t.Fatalf("work = %+v; want 12.5 bets per batch (50 bets in 4 statements)", w)
	}
	if w := workPer(a, a, 50); w == nil || w.BetsPerBatch != 0 {
		t.Fatalf("no batch between the readings: work = %+v; want no bets per batch", w)
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
