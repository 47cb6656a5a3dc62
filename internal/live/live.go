// Package live is the casino floor: settled bets of every player, as they
// settle, fanned out to the people watching. internal/play hands each bet to
// a Publisher once its transaction has committed; internal/cache carries the
// bets between replicas through Redis pub/sub; a Hub on every replica hands
// them to its local watchers (the LiveService stream and the SSE route).
//
// Nothing here may slow a bet or grow without bound: publishing never blocks
// (a full queue drops, counted), each watcher keeps at most the newest
// MaxPending bets, and a watcher that stops taking them is disconnected.
package live

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/fairplay/fairplay/internal/money"
)

// Bet is a settled bet as the whole floor sees it: no seeds, no outcome
// details, and no name when the player hides it.
type Bet struct {
	ID   uuid.UUID
	Game string
	// Username is the player's name; empty when Hidden.
	Username string
	// Hidden is true when the player chose to keep their name off the floor.
	Hidden     bool
	Amount     money.Amount
	Multiplier money.Multiplier
	Payout     money.Amount
	SettledAt  time.Time
}

// Publisher takes settled bets for the feed. Publish must never block or
// fail the bet: a feed that cannot keep up drops bets.
type Publisher interface {
	Publish(Bet)
}

// Filter chooses a watcher's bets.
type Filter struct {
	// MinAmount keeps bets whose stake is at least this (0: every bet).
	MinAmount money.Amount
}

func (f Filter) keep(b *Bet) bool { return b.Amount >= f.MinAmount }

// Errors of Watch and Next.
var (
	// ErrFull refuses a watcher beyond the hub's limit.
	ErrFull = errors.New("live: too many watchers")
	// ErrClientFull refuses a watcher beyond one client's limit.
	ErrClientFull = errors.New("live: too many watchers of this client")
	// ErrClosed ends every watcher when the server shuts down.
	ErrClosed = errors.New("live: the feed has closed")
	// ErrTooSlow ends a watcher that stopped taking its bets.
	ErrTooSlow = errors.New("live: the watcher fell behind")
	// ErrDisplaced ends the newest watcher of the group holding the most
	// places of a full hub, whose place goes to a group holding fewer.
	ErrDisplaced = errors.New("live: the place went to another client")
)

// Tuning of the hub; HubOptions' zero fields take these.
const (
	// DefaultMaxPending is how many bets a watcher keeps between two
	// messages: the newest win (the floor shows the latest few anyway), so a
	// watcher's memory is bounded whatever the bet rate.
	DefaultMaxPending = 50
	// DefaultInterval is the least time between two messages to one
	// watcher: bets that settle meanwhile go out together, so a browser gets
	// at most ten messages a second however busy the floor is.
	DefaultInterval = 100 * time.Millisecond
	// DefaultStall is how long a watcher may leave bets untaken before it is
	// disconnected (a reader that does not read blocks its writer, which
	// then stops taking).
	DefaultStall = 5 * time.Second
)

// HubOptions configure a Hub.
type HubOptions struct {
	// MaxWatchers bounds the watchers of this replica (0: unlimited).
	MaxWatchers int
	// MaxPerClient bounds the watchers of one client, as Watch is told
	// who it is (0: unlimited), so one client cannot take every place.
	MaxPerClient int
	// GroupOf names the group a client belongs to (the client itself when
	// nil): a full hub shares its places between groups (Watch), so that
	// one holder of many clients (an IPv6 site's /64s) counts as one.
	GroupOf    func(client string) string
	MaxPending int
	Interval   time.Duration
	Stall      time.Duration
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// Hub fans bets out to this replica's watchers.
type Hub struct {
	opt HubOptions

	mu        sync.Mutex
	watchers  map[*Watcher]struct{}
	perClient map[string]int // watchers by client, those with any
	perGroup  map[string]int // watchers by group, those with any
	seq       uint64         // the last watcher's number
	closed    bool

	dropped   atomic.Int64 // watchers disconnected for falling behind
	displaced atomic.Int64 // watchers whose place went to another client
}

// NewHub returns a hub.
func NewHub(o HubOptions) *Hub {
	if o.MaxPending <= 0 {
		o.MaxPending = DefaultMaxPending
	}
	if o.Interval <= 0 {
		o.Interval = DefaultInterval
	}
	if o.Stall <= 0 {
		o.Stall = DefaultStall
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.GroupOf == nil {
		o.GroupOf = func(client string) string { return client }
	}
	return &Hub{opt: o, watchers: map[*Watcher]struct{}{}, perClient: map[string]int{}, perGroup: map[string]int{}}
}

// HubStats are the hub's figures for the metrics.
type HubStats struct {
	// Watchers is how many watchers are connected now.
	Watchers int
	// Dropped counts watchers disconnected for falling behind.
	Dropped int64
	// Displaced counts watchers whose place in a full hub went to a
	// client holding fewer.
	Displaced int64
}

// Stats returns the hub's figures.
func (h *Hub) Stats() HubStats {
	h.mu.Lock()
	n := len(h.watchers)
	h.mu.Unlock()
	return HubStats{Watchers: n, Dropped: h.dropped.Load(), Displaced: h.displaced.Load()}
}

// Watch adds a watcher for client (whom the caller names: an address, say;
// "" is one client too); ErrClientFull beyond the client's limit, ErrClosed
// once the hub has closed. A full hub gives the new watcher the place of
// the newest watcher of the group (GroupOf) holding the most, if that group
// holds at least two more than the new watcher's (ErrDisplaced ends it),
// and refuses it otherwise (ErrFull). The caller must Stop it.
//
// Without that, a few clients at their own limit took every place for as
// long as they liked (25 addresses, or 25 /64s of one IPv6 /56, at 20 each
// fill 500; a heartbeat keeps a stream that never reads alive) and every
// other visitor was refused (found by a review playing a hostile client).
// Now they keep at most an even share: a group with a stream or two keeps
// it, and a newcomer gets in as long as some group holds more than its
// share. The newest goes, not the oldest: whoever shares an address with
// someone watching (a carrier's NAT) and fills it cannot have that
// viewer's older stream ended by opening one more elsewhere.
func (h *Hub) Watch(f Filter, client string) (*Watcher, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case h.closed:
		return nil, ErrClosed
	case h.opt.MaxPerClient > 0 && h.perClient[client] >= h.opt.MaxPerClient:
		return nil, ErrClientFull
	case h.opt.MaxWatchers > 0 && len(h.watchers) >= h.opt.MaxWatchers && !h.makeRoom(client):
		return nil, ErrFull
	}
	h.seq++
	w := &Watcher{hub: h, filter: f, client: client, seq: h.seq, ring: make([]Bet, h.opt.MaxPending),
		notify: make(chan struct{}, 1), done: make(chan struct{})}
	w.group = h.opt.GroupOf(client)
	h.watchers[w] = struct{}{}
	h.perClient[client]++
	h.perGroup[w.group]++
	return w, nil
}

// Broadcast hands bets (oldest first) to every watcher whose filter keeps
// them. It never blocks on a watcher: a watcher that has left bets untaken
// for longer than the stall time is disconnected instead.
func (h *Hub) Broadcast(bets []Bet) {
	if len(bets) == 0 {
		return
	}
	now := h.opt.Now()
	h.mu.Lock()
	defer h.mu.Unlock()
	for w := range h.watchers {
		if !w.add(bets, now, h.opt.Stall) {
			h.dropped.Add(1)
			h.remove(w, ErrTooSlow)
		}
	}
}

// Close ends every watcher (their streams end, and clients reconnect to
// another replica) and refuses new ones: the server is shutting down.
func (h *Hub) Close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for w := range h.watchers {
		h.remove(w, ErrClosed)
	}
}

// makeRoom ends the newest watcher of the group holding the most, if it
// holds at least two more than client's; h.mu is held.
func (h *Hub) makeRoom(client string) bool {
	top, most := "", 0
	for g, n := range h.perGroup {
		if n > most {
			top, most = g, n
		}
	}
	if most < h.perGroup[h.opt.GroupOf(client)]+2 {
		return false
	}
	var newest *Watcher
	for w := range h.watchers {
		if w.group == top && (newest == nil || w.seq > newest.seq) {
			newest = w
		}
	}
	h.displaced.Add(1)
	h.remove(newest, ErrDisplaced)
	return true
}

// remove ends w with err; h.mu is held.
func (h *Hub) remove(w *Watcher, err error) {
	if _, ok := h.watchers[w]; !ok {
		return
	}
	delete(h.watchers, w)
	h.perClient[w.client]--
	if h.perClient[w.client] == 0 {
		delete(h.perClient, w.client)
	}
	h.perGroup[w.group]--
	if h.perGroup[w.group] == 0 {
		delete(h.perGroup, w.group)
	}
	w.err = err
	close(w.done)
}

// Watcher is one reader of the feed.
type Watcher struct {
	hub    *Hub
	filter Filter
	client string // whom Watch counted it for
	group  string // the client's group (HubOptions.GroupOf)
	seq    uint64 // its number: the newest has the most

	mu           sync.Mutex
	ring         []Bet // the newest pending bets, ring[start:start+n] modulo len
	start, n     int
	pendingSince time.Time // when the oldest untaken bet arrived; zero when none
	notify       chan struct{}

	done chan struct{} // closed when the hub ends the watcher
	err  error         // why, set before done is closed

	last time.Time // when Next last returned (used by Next's goroutine only)
}

// add appends the bets the filter keeps, overwriting the oldest when the
// ring is full, and reports false when the watcher has stalled.
func (w *Watcher) add(bets []Bet, now time.Time, stall time.Duration) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.n > 0 && now.Sub(w.pendingSince) > stall {
		return false
	}
	added := false
	for i := range bets {
		if !w.filter.keep(&bets[i]) {
			continue
		}
		size := len(w.ring)
		if w.n < size {
			w.ring[(w.start+w.n)%size] = bets[i]
			w.n++
		} else {
			w.ring[w.start] = bets[i]
			w.start = (w.start + 1) % size
		}
		added = true
	}
	if added {
		if w.pendingSince.IsZero() {
			w.pendingSince = now
		}
		select {
		case w.notify <- struct{}{}:
		default:
		}
	}
	return true
}

// take removes and returns the pending bets, oldest first.
func (w *Watcher) take() []Bet {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.n == 0 {
		return nil
	}
	out := make([]Bet, w.n)
	for i := range out {
		out[i] = w.ring[(w.start+i)%len(w.ring)]
	}
	w.start, w.n, w.pendingSince = 0, 0, time.Time{}
	return out
}

// Next waits for the watcher's next message: the bets (oldest first, at
// most MaxPending, the newest kept) that settled since the previous one,
// never sooner than the hub's interval after it. With idle > 0 it returns
// no bets and no error once idle has passed without any (time for a
// heartbeat). It returns ErrTooSlow or ErrClosed once the hub has ended the
// watcher, or ctx's error.
func (w *Watcher) Next(ctx context.Context, idle time.Duration) ([]Bet, error) {
	var idleC <-chan time.Time
	if idle > 0 {
		t := time.NewTimer(idle)
		defer t.Stop()
		idleC = t.C
	}
	if wait := w.last.Add(w.hub.opt.Interval).Sub(w.hub.opt.Now()); wait > 0 {
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-w.done:
			t.Stop()
			return nil, w.err
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		}
	}
	for {
		select {
		case <-w.notify:
		case <-w.done:
			return nil, w.err
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-idleC:
			return nil, nil
		}
		// A watcher the hub has ended gets no more bets, pending or not.
		if err := w.Err(); err != nil {
			return nil, err
		}
		if bets := w.take(); len(bets) > 0 {
			w.last = w.hub.opt.Now()
			return bets, nil
		}
	}
}

// Done is closed when the hub has ended the watcher (Err tells why).
func (w *Watcher) Done() <-chan struct{} { return w.done }

// Err is why the hub ended the watcher (nil while it has not).
func (w *Watcher) Err() error {
	select {
	case <-w.done:
		return w.err
	default:
		return nil
	}
}

// Stop removes the watcher from its hub.
func (w *Watcher) Stop() {
	w.hub.mu.Lock()
	defer w.hub.mu.Unlock()
	w.hub.remove(w, ErrClosed)
}
