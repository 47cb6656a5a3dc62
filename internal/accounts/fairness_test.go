package accounts

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
)

// One computation per account at a time: the account's other requests wait
// in line, other accounts do not, and the line is gone once it empties.
func TestPasswordGateOnePerAccount(t *testing.T) {
	t.Parallel()
	var g passwordGate
	ctx := context.Background()
	var mu sync.Mutex
	holders, maxHolders, done := 0, 0, 0
	var wg sync.WaitGroup
	for range gateQueue + 1 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			leave, err := g.enter(ctx, "u:hot")
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			holders++
			maxHolders = max(maxHolders, holders)
			mu.Unlock()
			// Another account is never held up by this one.
			other, err := g.enter(ctx, "u:other"+uuid.NewString())
			if err != nil {
				t.Error(err)
			} else {
				other()
			}
			time.Sleep(time.Millisecond)
			mu.Lock()
			holders--
			done++
			mu.Unlock()
			leave()
		}()
	}
	wg.Wait()
	if maxHolders != 1 || done != gateQueue+1 {
		t.Fatalf("%d holders of one account at once, %d done; want 1 and %d", maxHolders, done, gateQueue+1)
	}
	if len(g.accounts) != 0 {
		t.Fatalf("%d lines left", len(g.accounts))
	}
}

// A full line refuses at once; a waiting request gives up with its context.
func TestPasswordGateBounds(t *testing.T) {
	t.Parallel()
	var g passwordGate
	ctx := context.Background()
	leave, err := g.enter(ctx, "u:a")
	if err != nil {
		t.Fatal(err)
	}
	cancels := make([]context.CancelFunc, gateQueue)
	errs := make(chan error, gateQueue)
	for i := range cancels {
		c, cancel := context.WithCancel(ctx)
		cancels[i] = cancel
		go func() {
			_, err := g.enter(c, "u:a")
			errs <- err
		}()
	}
	// Wait until the line is full.
	for {
		g.mu.Lock()
		n := g.accounts["u:a"].n
		g.mu.Unlock()
		if n == gateQueue+1 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if _, err := g.enter(ctx, "u:a"); !errors.Is(err, ErrPasswordBusy) {
		t.Fatalf("a full line: %v, want ErrPasswordBusy", err)
	}
	for _, cancel := range cancels {
		cancel()
	}
	for range cancels {
		if err := <-errs; !errors.Is(err, context.Canceled) {
			t.Fatalf("a canceled wait: %v", err)
		}
	}
	leave()
	if len(g.accounts) != 0 {
		t.Fatalf("%d lines left", len(g.accounts))
	}
}

func TestLoginKey(t *testing.T) {
	t.Parallel()
	if a, b := loginKey("Ghost"), loginKey("gHOST"); a != b {
		t.Fatalf("case variants of a login differ: %q %q", a, b)
	}
	// A username and an email address are two names, whether or not they
	// are one account's: nothing in the key depends on the account.
	if a := loginKey("ghost@example.com"); len(a) != 34 || a == loginKey("ghost") {
		t.Fatalf("an email address's key %q: want a fixed-length digest per login", a)
	}
}
