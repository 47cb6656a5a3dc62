package play

import (
	"context"
	"sync"

	"github.com/google/uuid"
)

// pairCache remembers each player's active seed pair as this server last
// used it, so the next bet can be drawn before Postgres is asked and placed
// in one round trip (Store.PlaceBetAt) without reading the pair first. It
// is only a guess: Postgres refuses a bet drawn from a pair that has moved
// on — a bet through another replica, a rotation, a new client seed — as
// stale, with the pair as it is now, and the bet is drawn again from that.
type pairCache struct {
	mu sync.Mutex
	m  map[uuid.UUID]SeedPair
}

// maxCachedPairs bounds the cache (a few hundred bytes a player); when it is
// full it starts again empty, which costs each player one read of the pair.
const maxCachedPairs = 20_000

func (c *pairCache) get(userID uuid.UUID) (SeedPair, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p, ok := c.m[userID]
	return p, ok
}

// put remembers p, whose Nonce is the last one used.
func (c *pairCache) put(p SeedPair) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxCachedPairs {
		c.m = make(map[uuid.UUID]SeedPair)
	}
	if old, ok := c.m[p.UserID]; ok && old.ID == p.ID && old.Nonce > p.Nonce {
		return // a later bet of the same pair got here first
	}
	c.m[p.UserID] = p
}

func (c *pairCache) drop(userID uuid.UUID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, userID)
}

// turns lets one bet of a player at a time through this server: the next
// waits until the previous has its answer, so the pair it draws from is the
// one the previous bet left (not a nonce both would draw from, one to be
// refused as stale). Postgres would make them wait for the player's row
// anyway; a batch holds one bet of a player.
type turns struct {
	mu sync.Mutex
	m  map[uuid.UUID]*turn
}

type turn struct {
	token   chan struct{} // full while a bet of the player's runs
	waiting int           // bets running or waiting, guarded by turns.mu
}

// wait returns userID's turn once it is its bet's (or with ctx's cause);
// the caller passes it to done when the bet has its answer.
func (t *turns) wait(ctx context.Context, userID uuid.UUID) (*turn, error) {
	t.mu.Lock()
	if t.m == nil {
		t.m = make(map[uuid.UUID]*turn)
	}
	tu := t.m[userID]
	if tu == nil {
		tu = turnPool.Get().(*turn)
		t.m[userID] = tu
	}
	tu.waiting++
	t.mu.Unlock()
	select {
	case tu.token <- struct{}{}: // the usual case, without asking ctx for its channel
		return tu, nil
	default:
	}
	select {
	case tu.token <- struct{}{}:
		return tu, nil
	case <-ctx.Done():
		t.leave(userID, tu)
		return nil, context.Cause(ctx)
	}
}

// done ends a turn wait gave.
func (t *turns) done(userID uuid.UUID, tu *turn) {
	<-tu.token
	t.leave(userID, tu)
}

// leave counts a bet out of tu; the last one's turn is forgotten and kept
// for another player's (its token is empty: every bet that took it gave it
// back).
func (t *turns) leave(userID uuid.UUID, tu *turn) {
	t.mu.Lock()
	tu.waiting--
	last := tu.waiting == 0
	if last {
		delete(t.m, userID)
	}
	t.mu.Unlock()
	if last {
		turnPool.Put(tu)
	}
}

var turnPool = sync.Pool{New: func() any { return &turn{token: make(chan struct{}, 1)} }}
