package postgres

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
)

// A batcher's failures are logged at most once per failureLogEvery, the
// next line counting those left out.
func TestFailureLogAtMostOncePerInterval(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	var f failureLog
	f.log(log, "failed", errors.New("first"), 3)
	f.log(log, "failed", errors.New("second"), 4)
	f.log(log, "failed", errors.New("third"), 5)
	if lines := strings.Count(buf.String(), "\n"); lines != 1 || !strings.Contains(buf.String(), "error=first requests=3 failures_not_logged=0") {
		t.Fatalf("after three failures at once: %q, want the first alone", buf.String())
	}
	f.last.Store(time.Now().Add(-failureLogEvery).UnixNano())
	f.log(log, "failed", errors.New("fourth"), 6)
	if !strings.Contains(buf.String(), "error=fourth requests=6 failures_not_logged=2") {
		t.Fatalf("a failure after the interval: %q, want it with the two left out", buf.String())
	}
	f.log(nil, "failed", errors.New("no logger"), 1) // no logger: nothing, no panic
}

// testItem is a request of a batchQueue under test.
type testItem struct {
	ctx context.Context
	id  uuid.UUID
}

func (t *testItem) waiting() context.Context { return t.ctx }
func (t *testItem) player() uuid.UUID        { return t.id }
func (t *testItem) giveUp(error)             {}

// A second batch leaves while one runs only once a full one waits; until
// then requests gather for the running batch's end, and every request is
// sent once.
func TestSecondBatchLeavesOnlyWhenFull(t *testing.T) {
	started := make(chan int, 16)
	release := make(chan struct{})
	var mu sync.Mutex
	sent := map[*testItem]int{}
	b := &batchQueue[*testItem]{maxBatches: 2, maxSize: 4}
	b.exec = func(batch []*testItem) {
		mu.Lock()
		for _, q := range batch {
			sent[q]++
		}
		mu.Unlock()
		started <- len(batch)
		<-release
	}
	add := func(n int) []*testItem {
		var qs []*testItem
		for range n {
			q := &testItem{ctx: context.Background(), id: uuid.New()}
			qs = append(qs, q)
			b.add(q)
		}
		return qs
	}
	idle := func(what string) {
		t.Helper()
		select {
		case n := <-started:
			t.Fatalf("%s: a batch of %d left", what, n)
		case <-time.After(50 * time.Millisecond):
		}
	}
	all := add(1)
	if n := <-started; n != 1 {
		t.Fatalf("first request: a batch of %d, want it alone at once", n)
	}
	all = append(all, add(3)...)
	idle("three waiting while one batch runs")
	all = append(all, add(1)...)
	if n := <-started; n != 4 {
		t.Fatalf("a full batch waiting: a batch of %d left, want 4", n)
	}
	all = append(all, add(5)...)
	idle("two batches running")
	close(release)
	deadline := time.Now().Add(10 * time.Second)
	for {
		b.mu.Lock()
		running, queued := b.running, len(b.queue)
		b.mu.Unlock()
		if running == 0 && queued == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d batches running and %d requests queued after every batch ended", running, queued)
		}
		time.Sleep(time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	for i, q := range all {
		if sent[q] != 1 {
			t.Errorf("request %d was sent %d times, want once", i, sent[q])
		}
	}
}
