package accounts

import (
	"sync"
	"testing"

	"github.com/google/uuid"
)

func TestPasswordGateOnePerAccount(t *testing.T) {
	t.Parallel()
	var g passwordGate
	unlock, ok := g.tryLock("u:a")
	if !ok {
		t.Fatal("first lock refused")
	}
	if _, ok := g.tryLock("u:a"); ok {
		t.Fatal("second lock of one account granted")
	}
	unlockB, ok := g.tryLock("u:b")
	if !ok {
		t.Fatal("another account's lock refused")
	}
	unlock()
	unlock2, ok := g.tryLock("u:a")
	if !ok {
		t.Fatal("lock after unlock refused")
	}
	unlock2()
	unlockB()
	if len(g.busy) != 0 {
		t.Fatalf("%d accounts still held", len(g.busy))
	}

	// Racing for one account, exactly one wins at a time.
	var wg sync.WaitGroup
	var mu sync.Mutex
	holders, maxHolders := 0, 0
	for range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				unlock, ok := g.tryLock("u:hot")
				if !ok {
					continue
				}
				mu.Lock()
				holders++
				maxHolders = max(maxHolders, holders)
				mu.Unlock()
				mu.Lock()
				holders--
				mu.Unlock()
				unlock()
			}
		}()
	}
	wg.Wait()
	if maxHolders != 1 {
		t.Fatalf("%d holders of one account at once", maxHolders)
	}
}

func TestAccountKey(t *testing.T) {
	t.Parallel()
	id := uuid.New()
	found := Credentials{User: User{ID: id}}
	if a, b := accountKey(found, true, "Alice"), accountKey(found, true, "alice@example.com"); a != b || a != "u:"+id.String() {
		t.Fatalf("an existing account's keys: %q %q", a, b)
	}
	if a, b := accountKey(Credentials{}, false, "Ghost"), accountKey(Credentials{}, false, "gHOST"); a != b {
		t.Fatalf("case variants of a missing account differ: %q %q", a, b)
	}
	if a := accountKey(Credentials{}, false, "ghost@example.com"); len(a) != 34 || a == accountKey(Credentials{}, false, "ghost") {
		t.Fatalf("a missing account's key %q: want a fixed-length digest per login", a)
	}
}
