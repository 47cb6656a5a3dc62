package play

import (
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
