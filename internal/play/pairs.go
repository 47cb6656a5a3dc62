package play

import (
	"context"
	"errors"
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

// turns lets one request of a player at a time through this server: the
// next waits until the previous has its answer. For bets (Service.turns) so
// the pair the next draws from is the one the previous bet left (not a
// nonce both would draw from, one to be refused as stale); Postgres would
// make them wait for the player's row anyway, and a batch holds one bet of
// a player. For game actions (Service.actionTurns) so they wait here, not
// for their game's row on connections of the pool (see maxActionsWaiting).
type turns struct {
	mu sync.Mutex
	m  map[uuid.UUID]*turn
}

type turn struct {
	token   chan struct{} // full while a bet of the player's runs
	waiting int           // bets running or waiting, guarded by turns.mu
}

// errTooManyWaiting is wait's refusal of a request that finds limit of its
// player's running or waiting.
var errTooManyWaiting = errors.New("too many of the player's requests wait for their turn")

// wait returns userID's turn once it is its request's (or with ctx's
// cause); the caller passes it to done when the request has its answer.
// With limit above zero, a request that finds limit of the player's running
// or waiting is refused at once with errTooManyWaiting.
func (t *turns) wait(ctx context.Context, userID uuid.UUID, limit int) (*turn, error) {
	t.mu.Lock()
	if t.m == nil {
		t.m = make(map[uuid.UUID]*turn)
	}
	tu := t.m[userID]
	if tu == nil {
		tu = turnPool.Get().(*turn)
		t.m[userID] = tu
	}
	if limit > 0 && tu.waiting >= limit {
		t.mu.Unlock()
		return nil, errTooManyWaiting
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
