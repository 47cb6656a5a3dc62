package postgres

import (
	"bytes"
	"context"
	"errors"
	"fmt"
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
// then requests gather for the running batch's end, whether they are few,
// given up or a player's second; a batch that ends while the other runs
// leaves what waits to it; and every live request is sent once.
func TestSecondBatchLeavesOnlyWhenFull(t *testing.T) {
	type running struct {
		n       int
		release chan struct{}
	}
	started := make(chan running, 16)
	var mu sync.Mutex
	sent := map[*testItem]int{}
	b := &batchQueue[*testItem]{maxBatches: 2, maxSize: 4}
	b.exec = func(batch []*testItem) {
		mu.Lock()
		for _, q := range batch {
			sent[q]++
		}
		mu.Unlock()
		r := running{n: len(batch), release: make(chan struct{})}
		started <- r
		<-r.release
	}
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	var live []*testItem
	add := func(n int, ctx context.Context, id uuid.UUID) {
		for range n {
			q := &testItem{ctx: ctx, id: id}
			if id == uuid.Nil {
				q.id = uuid.New()
			}
			if ctx.Err() == nil {
				live = append(live, q)
			}
			b.add(q)
		}
	}
	next := func(what string, want int) running {
		t.Helper()
		select {
		case r := <-started:
			if r.n != want {
				t.Fatalf("%s: a batch of %d left, want %d", what, r.n, want)
			}
			return r
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: no batch left, want one of %d", what, want)
		}
		return running{}
	}
	idle := func(what string) {
		t.Helper()
		select {
		case r := <-started:
			t.Fatalf("%s: a batch of %d left", what, r.n)
		case <-time.After(50 * time.Millisecond):
		}
	}
	ctx := context.Background()
	add(1, ctx, uuid.Nil)
	first := next("the first request", 1)
	add(3, ctx, uuid.Nil)
	idle("three waiting while one batch runs")
	add(1, gone, uuid.Nil)
	idle("three waiting and one given up")
	add(2, ctx, uuid.Nil)
	second := next("a full batch waiting", 4)
	one := uuid.New()
	add(4, ctx, one)
	idle("one player's four requests while two batches run")
	close(first.release)
	idle("the first batch ended while the second runs with one player's requests waiting")
	close(second.release)
	// The request left over from the full batch's gathering, and the
	// player's first; then the player's others, one a batch.
	close(next("what waited for the second batch", 2).release)
	for i := range 3 {
		close(next(fmt.Sprintf("the player's request %d", i+2), 1).release)
	}
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
	for i, q := range live {
		if sent[q] != 1 {
			t.Errorf("request %d was sent %d times, want once", i, sent[q])
		}
	}
	if len(sent) != len(live) {
		t.Errorf("%d requests sent, want the %d live ones", len(sent), len(live))
	}
}
