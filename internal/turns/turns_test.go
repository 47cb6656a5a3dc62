package turns

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
)

// One request of a player through at a time (Slots 1), and requests of
// different players side by side; a request that gives up waiting leaves
// the line as it was, and a player with no request left is forgotten.
func TestOneAtATime(t *testing.T) {
	l := &Lines{Slots: 1}
	alice, bob := uuid.New(), uuid.New()

	// Two players at once.
	ta, err := l.Wait(context.Background(), alice)
	if err != nil {
		t.Fatal(err)
	}
	tb, err := l.Wait(context.Background(), bob)
	if err != nil {
		t.Fatal(err)
	}

	// Alice's second request waits; one that gives up returns its cause.
	ctx, cancel := context.WithCancelCause(context.Background())
	gaveUp := errors.New("client went away")
	cancel(gaveUp)
	if _, err := l.Wait(ctx, alice); !errors.Is(err, gaveUp) {
		t.Fatalf("a request that gave up waiting: %v", err)
	}
	l.Done(bob, tb)
	l.Done(alice, ta)
	if len(l.m) != 0 {
		t.Fatalf("lines remembered after every request ended: %d", len(l.m))
	}
	if most := mostAtOnce(t, l, alice, 64); most != 1 {
		t.Errorf("%d requests of one player ran at once", most)
	}
}

// With Slots 2, two of a player's requests run at once and the third
// waits until one of them ends; under load never more than two.
func TestTwoAtATime(t *testing.T) {
	l := &Lines{Slots: 2}
	alice := uuid.New()
	first, err := l.Wait(context.Background(), alice)
	if err != nil {
		t.Fatal(err)
	}
	second, err := l.Wait(context.Background(), alice)
	if err != nil {
		t.Fatal(err)
	}
	third := make(chan *Turn)
	go func() {
		tu, err := l.Wait(context.Background(), alice)
		if err != nil {
			t.Error(err)
		}
		third <- tu
	}()
	for l.waiting(alice) != 3 {
		runtime.Gosched()
	}
	select {
	case <-third:
		t.Fatal("a third request ran while two did")
	default:
	}
	l.Done(alice, first)
	l.Done(alice, <-third)
	l.Done(alice, second)
	if len(l.m) != 0 {
		t.Fatalf("lines remembered after every request ended: %d", len(l.m))
	}
	if most := mostAtOnce(t, l, alice, 64); most > 2 {
		t.Errorf("%d requests of one player ran at once, want at most 2", most)
	}
}

// A request that waits MaxWait for its turn is refused with ErrTooMany and
// leaves the line as it was.
func TestRefusedAfterMaxWait(t *testing.T) {
	l := &Lines{Slots: 1, MaxWait: time.Millisecond}
	alice := uuid.New()
	first, err := l.Wait(context.Background(), alice)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Wait(context.Background(), alice); !errors.Is(err, ErrTooMany) {
		t.Fatalf("a request that waited MaxWait: %v, want ErrTooMany", err)
	}
	if n := l.waiting(alice); n != 1 {
		t.Fatalf("%d requests counted after the refusal, want 1", n)
	}
	l.Done(alice, first)
	if len(l.m) != 0 {
		t.Fatalf("lines remembered after every request ended: %d", len(l.m))
	}
}

// mostAtOnce runs n requests of one player at once, each yielding once
// while it holds its turn, and returns the most that ran at once.
func mostAtOnce(t *testing.T, l *Lines, player uuid.UUID, n int) int32 {
	t.Helper()
	var running, most atomic.Int32
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			tu, err := l.Wait(context.Background(), player)
			if err != nil {
				t.Error(err)
				return
			}
			r := running.Add(1)
			for {
				m := most.Load()
				if r <= m || most.CompareAndSwap(m, r) {
					break
				}
			}
			runtime.Gosched()
			running.Add(-1)
			l.Done(player, tu)
		})
	}
	wg.Wait()
	if len(l.m) != 0 {
		t.Errorf("lines remembered after every request ended: %d", len(l.m))
	}
	return most.Load()
}

// With a limit, a request that finds Limit of its player's running or
// waiting is refused at once, changing nothing; another player's is not,
// and once one ends the next is let in.
func TestRefusedPastTheLimit(t *testing.T) {
	const limit = 3
	l := &Lines{Slots: 1, Limit: limit}
	alice, bob := uuid.New(), uuid.New()
	first, err := l.Wait(context.Background(), alice)
	if err != nil {
		t.Fatal(err)
	}
	// Two more wait (limit in all).
	got := make(chan *Turn, limit-1)
	for range limit - 1 {
		go func() {
			tu, err := l.Wait(context.Background(), alice)
			if err != nil {
				t.Error(err)
			}
			got <- tu
		}()
	}
	for l.waiting(alice) != limit {
		runtime.Gosched()
	}
	if _, err := l.Wait(context.Background(), alice); !errors.Is(err, ErrTooMany) {
		t.Fatalf("a request past the limit: %v, want ErrTooMany", err)
	}
	if n := l.waiting(alice); n != limit {
		t.Fatalf("a refused request changed the count: %d", n)
	}
	tb, err := l.Wait(context.Background(), bob)
	if err != nil {
		t.Fatalf("another player's request: %v", err)
	}
	l.Done(bob, tb)
	l.Done(alice, first)
	next := <-got
	// One ended: the next request is let in to wait.
	done := make(chan struct{})
	go func() {
		defer close(done)
		tu, err := l.Wait(context.Background(), alice)
		if err != nil {
			t.Error(err)
			return
		}
		l.Done(alice, tu)
	}()
	l.Done(alice, next)
	l.Done(alice, <-got)
	<-done
	if len(l.m) != 0 {
		t.Errorf("lines remembered after every request ended: %d", len(l.m))
	}
}
