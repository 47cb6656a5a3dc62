// Package turns gives each player a line of their own on one server: at
// most a few of a player's requests run at once, the next waits in the
// server (holding nothing else: no database connection, no row) until one
// of them has its answer, and past a bound the next is refused at once.
//
// The server uses it for every signed-in player's calls (internal/rpc: two
// at a time, with a bound per session too), a player's bets (one at a time,
// so each draws from the pair the previous one left) and a player's game
// actions (one at a time). Whatever a player's own requests wait for —
// their own row, held by another of them, another replica or a slow disk —
// they then wait for it with at most two of the pool's connections per
// account, however many they send.
package turns

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/google/uuid"
)

// ErrTooMany is Wait's refusal of a request that finds Limit of its
// player's requests running or waiting, or that waited MaxWait.
var ErrTooMany = errors.New("too many of the player's requests run or wait at once")

// Lines is a line per player (or per any id: a session's).
type Lines struct {
	// Slots is how many of a player's requests run at once (zero is one).
	Slots int
	// Limit, when above zero, is how many of a player's requests may run or
	// wait at once: the next is refused at once (ErrTooMany).
	Limit int
	// MaxWait, when above zero, is how long a request waits for its turn
	// before it is refused (ErrTooMany).
	MaxWait time.Duration

	mu   sync.Mutex
	m    map[uuid.UUID]*Turn
	pool sync.Pool
}

// Turn is one player's line, while any of their requests runs or waits.
type Turn struct {
	slots   chan struct{} // a token per request running
	waiting int           // requests running or waiting, guarded by Lines.mu
}

// Wait returns userID's turn once one of its slots is the request's (or
// ctx's cause, when ctx ends first; or ErrTooMany, at once past Limit or
// after MaxWait). The caller passes it to Done when the request has its
// answer.
func (l *Lines) Wait(ctx context.Context, userID uuid.UUID) (*Turn, error) {
	l.mu.Lock()
	if l.m == nil {
		l.m = make(map[uuid.UUID]*Turn)
	}
	tu := l.m[userID]
	if tu == nil {
		tu, _ = l.pool.Get().(*Turn)
		if tu == nil {
			tu = &Turn{slots: make(chan struct{}, max(1, l.Slots))}
		}
		l.m[userID] = tu
	}
	if l.Limit > 0 && tu.waiting >= l.Limit {
		l.mu.Unlock()
		return nil, ErrTooMany
	}
	tu.waiting++
	l.mu.Unlock()
	select {
	case tu.slots <- struct{}{}: // the usual case, without asking ctx for its channel
		return tu, nil
	default:
	}
	var expired <-chan time.Time
	if l.MaxWait > 0 {
		t := time.NewTimer(l.MaxWait)
		defer t.Stop()
		expired = t.C
	}
	select {
	case tu.slots <- struct{}{}:
		return tu, nil
	case <-ctx.Done():
		l.leave(userID, tu)
		return nil, context.Cause(ctx)
	case <-expired:
		l.leave(userID, tu)
		return nil, ErrTooMany
	}
}

// Done ends a request's turn that Wait gave.
func (l *Lines) Done(userID uuid.UUID, tu *Turn) {
	<-tu.slots
	l.leave(userID, tu)
}

// leave counts a request out of tu; the last one's line is forgotten and
// kept for another player's (its slots are empty: every request that took
// one gave it back).
func (l *Lines) leave(userID uuid.UUID, tu *Turn) {
	l.mu.Lock()
	tu.waiting--
	last := tu.waiting == 0
	if last {
		delete(l.m, userID)
	}
	l.mu.Unlock()
	if last {
		l.pool.Put(tu)
	}
}

// waiting is how many of userID's requests run or wait (for tests).
func (l *Lines) waiting(userID uuid.UUID) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if tu := l.m[userID]; tu != nil {
		return tu.waiting
	}
	return 0
}
