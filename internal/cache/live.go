package cache

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/fairplay/fairplay/internal/live"
	"github.com/fairplay/fairplay/internal/money"
)

// LiveFeed carries settled bets between replicas through Redis pub/sub: the
// live-bet fan-out. Publish (on the bet's path) only puts the bet in a
// bounded in-process queue, dropping it (counted) when the queue is full;
// one goroutine drains the queue and sends what it holds as one PUBLISH,
// and one subscription per replica hands every message to the local hub.
// When Redis is down the feed pauses — bets are dropped, not delayed — and
// nothing else notices.
type LiveFeed struct {
	rdb     *redis.Client
	channel string
	hub     *live.Hub
	log     *slog.Logger
	queue   chan live.Bet

	published, dropped atomic.Int64
}

// Tuning of the feed.
const (
	// liveQueue bounds the bets waiting to be published: about a second of
	// the busiest load measured (make bench: ~6000 bets/s).
	liveQueue = 8192
	// liveBatch bounds the bets of one PUBLISH.
	liveBatch = 512
	// livePublishEvery is the least time between two PUBLISHes: under load
	// a batch gathers meanwhile, so the feed costs a hundred round trips a
	// second at most, not one per bet; an idle feed publishes at once.
	livePublishEvery = 10 * time.Millisecond
	// livePause is how long publishing rests after Redis failed.
	livePause = time.Second
)

// NewLiveFeed returns a feed on channel prefix+"live:bets" that hands
// received bets to hub.
func NewLiveFeed(rdb *redis.Client, prefix string, hub *live.Hub, log *slog.Logger) *LiveFeed {
	if log == nil {
		log = slog.Default()
	}
	return &LiveFeed{rdb: rdb, channel: prefix + "live:bets", hub: hub, log: log, queue: make(chan live.Bet, liveQueue)}
}

var _ live.Publisher = (*LiveFeed)(nil)

// Publish queues a settled bet for every replica's watchers; it never
// blocks: a full queue drops the bet.
func (f *LiveFeed) Publish(b live.Bet) {
	select {
	case f.queue <- b:
	default:
		f.dropped.Add(1)
	}
}

// LiveFeedStats are the feed's counters.
type LiveFeedStats struct {
	// Published counts bets sent to Redis; Dropped counts bets given up
	// (the queue was full, or Redis failed).
	Published, Dropped int64
}

// Stats returns the feed's counters.
func (f *LiveFeed) Stats() LiveFeedStats {
	return LiveFeedStats{Published: f.published.Load(), Dropped: f.dropped.Load()}
}

// Run publishes and subscribes until ctx ends.
func (f *LiveFeed) Run(ctx context.Context) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f.subscribe(ctx)
	}()
	f.publish(ctx)
	<-done
}

// wireBet is a bet in a feed message: short keys, amounts in 1e-8 units.
type wireBet struct {
	ID         uuid.UUID `json:"i"`
	Game       string    `json:"g"`
	Username   string    `json:"u,omitempty"`
	Hidden     bool      `json:"h,omitempty"`
	Amount     int64     `json:"a"`
	Multiplier int64     `json:"m"`
	Payout     int64     `json:"p"`
	SettledAt  int64     `json:"t"` // Unix nanoseconds
}

func (f *LiveFeed) publish(ctx context.Context) {
	batch := make([]wireBet, 0, liveBatch)
	var last time.Time
	down := false
	for {
		var first live.Bet
		select {
		case first = <-f.queue:
		case <-ctx.Done():
			return
		}
		if wait := time.Until(last.Add(livePublishEvery)); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return
			}
		}
		batch = append(batch[:0], toWire(first))
	gather:
		for len(batch) < liveBatch {
			select {
			case b := <-f.queue:
				batch = append(batch, toWire(b))
			default:
				break gather
			}
		}
		last = time.Now()
		payload, err := json.Marshal(batch)
		if err == nil {
			err = f.rdb.Publish(ctx, f.channel, payload).Err()
		}
		if err != nil {
			f.dropped.Add(int64(len(batch)))
			if ctx.Err() != nil {
				return
			}
			if !down {
				f.log.Warn("live bets feed paused: redis does not answer (bets are unaffected)", "err", err)
				down = true
			}
			t := time.NewTimer(livePause)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return
			}
			continue
		}
		if down {
			f.log.Info("live bets feed resumed: redis answers again")
			down = false
		}
		f.published.Add(int64(len(batch)))
	}
}

func toWire(b live.Bet) wireBet {
	w := wireBet{ID: b.ID, Game: b.Game, Hidden: b.Hidden, Amount: int64(b.Amount), Multiplier: int64(b.Multiplier),
		Payout: int64(b.Payout), SettledAt: b.SettledAt.UnixNano()}
	if !b.Hidden {
		// A hidden player's name never leaves the process that placed the bet.
		w.Username = b.Username
	}
	return w
}

// subscribe hands every message of the channel to the hub. go-redis
// re-subscribes by itself after Redis comes back.
func (f *LiveFeed) subscribe(ctx context.Context) {
	ps := f.rdb.Subscribe(ctx, f.channel)
	defer func() { _ = ps.Close() }()
	ch := ps.Channel(redis.WithChannelSize(1024))
	for {
		select {
		case m, ok := <-ch:
			if !ok {
				return
			}
			bets, err := decodeLive(m.Payload)
			if err != nil {
				f.log.Warn("live bets feed: bad message", "err", err)
				continue
			}
			f.hub.Broadcast(bets)
		case <-ctx.Done():
			return
		}
	}
}

// decodeLive reads one feed message.
func decodeLive(payload string) ([]live.Bet, error) {
	var ws []wireBet
	if err := json.Unmarshal([]byte(payload), &ws); err != nil {
		return nil, fmt.Errorf("decode live bets: %w", err)
	}
	out := make([]live.Bet, len(ws))
	for i, w := range ws {
		out[i] = live.Bet{ID: w.ID, Game: w.Game, Username: w.Username, Hidden: w.Hidden, Amount: money.Amount(w.Amount),
			Multiplier: money.Multiplier(w.Multiplier), Payout: money.Amount(w.Payout),
			SettledAt: time.Unix(0, w.SettledAt).UTC()}
		if w.Hidden {
			out[i].Username = ""
		}
	}
	return out, nil
}
