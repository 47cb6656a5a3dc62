package play

import (
	"context"
	"errors"
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
	ta, err := tt.wait(context.Background(), alice)
	if err != nil {
		t.Fatal(err)
	}
	tb, err := tt.wait(context.Background(), bob)
	if err != nil {
		t.Fatal(err)
	}

	// Alice's second bet waits; one that gives up returns its cause.
	ctx, cancel := context.WithCancelCause(context.Background())
	gaveUp := errors.New("client went away")
	cancel(gaveUp)
	if _, err := tt.wait(ctx, alice); !errors.Is(err, gaveUp) {
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
			tu, err := tt.wait(context.Background(), alice)
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
