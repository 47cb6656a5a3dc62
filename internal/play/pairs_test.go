package play

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"
)

// turns lets one bet of a player through at a time, and bets of different
// players side by side; a bet that gives up waiting leaves the turn as it
// was, and a player with no bet left is forgotten.
func TestTurnsOneBetOfAPlayerAtATime(t *testing.T) {
	var tt turns
	alice, bob := uuid.New(), uuid.New()

	// Two players at once.
	ta, err := tt.wait(context.Background(), alice, 0)
	if err != nil {
		t.Fatal(err)
	}
	tb, err := tt.wait(context.Background(), bob, 0)
	if err != nil {
		t.Fatal(err)
	}

	// Alice's second bet waits; one that gives up returns its cause.
	ctx, cancel := context.WithCancelCause(context.Background())
	gaveUp := errors.New("client went away")
	cancel(gaveUp)
	if _, err := tt.wait(ctx, alice, 0); !errors.Is(err, gaveUp) {
		t.Fatalf("a bet that gave up waiting: %v", err)
	}
	tt.done(bob, tb)
	tt.done(alice, ta)
	if len(tt.m) != 0 {
		t.Fatalf("turns remembered after every bet ended: %d", len(tt.m))
	}

	// Many bets of one player, each alone while it runs.
	var running, most atomic.Int32
	var wg sync.WaitGroup
	for range 64 {
		wg.Go(func() {
			tu, err := tt.wait(context.Background(), alice, 0)
			if err != nil {
				t.Error(err)
				return
			}
			n := running.Add(1)
			for {
				m := most.Load()
				if n <= m || most.CompareAndSwap(m, n) {
					break
				}
			}
			running.Add(-1)
			tt.done(alice, tu)
		})
	}
	wg.Wait()
	if most.Load() != 1 {
		t.Errorf("%d bets of one player ran at once", most.Load())
	}
	if len(tt.m) != 0 {
		t.Errorf("turns remembered after every bet ended: %d", len(tt.m))
	}
}

// With a limit, a request that finds limit of its player's running or
// waiting is refused at once, changing nothing; another player's is not,
// and once one ends the next is let in.
func TestTurnsRefusePastTheLimit(t *testing.T) {
	var tt turns
	alice, bob := uuid.New(), uuid.New()
	const limit = 3
	first, err := tt.wait(context.Background(), alice, limit)
	if err != nil {
		t.Fatal(err)
	}
	// Two more wait (limit in all).
	got := make(chan *turn, limit-1)
	for range limit - 1 {
		go func() {
			tu, err := tt.wait(context.Background(), alice, limit)
			if err != nil {
				t.Error(err)
			}
			got <- tu
		}()
	}
	for {
		tt.mu.Lock()
		n := tt.m[alice].waiting
		tt.mu.Unlock()
		if n == limit {
			break
		}
		runtime.Gosched()
	}
	if _, err := tt.wait(context.Background(), alice, limit); !errors.Is(err, errTooManyWaiting) {
		t.Fatalf("a request past the limit: %v, want errTooManyWaiting", err)
	}
	if n := tt.m[alice].waiting; n != limit {
		t.Fatalf("a refused request changed the count: %d", n)
	}
	tb, err := tt.wait(context.Background(), bob, limit)
	if err != nil {
		t.Fatalf("another player's request: %v", err)
	}
	tt.done(bob, tb)
	tt.done(alice, first)
	next := <-got
	// One ended: the next request is let in to wait.
	if _, err := tt.wait(context.Background(), alice, limit-1); !errors.Is(err, errTooManyWaiting) {
		t.Fatalf("with %d running or waiting, a limit of %d: %v", limit-1, limit-1, err)
	}
	done := make(chan struct{})
	go func() {
		tu, err := tt.wait(context.Background(), alice, limit)
		if err != nil {
			t.Error(err)
		}
		tt.done(alice, tu)
		close(done)
	}()
	tt.done(alice, next)
	tt.done(alice, <-got)
	<-done
	if len(tt.m) != 0 {
		t.Errorf("turns remembered after every request ended: %d", len(tt.m))
	}
}
