package cache

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
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

// wireBet is a bet in a feed message as JSON: short keys, amounts in 1e-8
// units. Releases before the binary format (appendWire) published this; a
// replica still reads it, so a rolling upgrade keeps every replica's feed.
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
	var payload []byte
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
		payload = appendWire(append(payload[:0], wireVersion), first)
		n := 1
	gather:
		for n < liveBatch {
			select {
			case b := <-f.queue:
				payload = appendWire(payload, b)
				n++
			default:
				break gather
			}
		}
		last = time.Now()
		err := f.rdb.Publish(ctx, f.channel, payload).Err()
		if err != nil {
			f.dropped.Add(int64(n))
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
		f.published.Add(int64(n))
	}
}

// wireVersion opens a binary feed message: a JSON one (an older release's)
// opens with '['. The bets follow back to back, each
//
//	16 bytes  the bet's id
//	1 byte    flags: 1 = hidden
//	uvarint   length of the game's name, then the name
//	uvarint   length of the username, then the name (0 when hidden)
//	varint    amount, multiplier, payout (1e-8 units), settled at (Unix ns)
//
// It replaced JSON (encoding/json over a struct with a UUID): encoding and
// decoding the feed cost up to ~8% of the server's CPU per dice bet under
// make bench on a busy machine (BENCH_PROFILE: each PUBLISH carried few
// bets), ~1.5% on a quiet one; the binary form is ~12x cheaper per bet
// (BenchmarkLiveWire), every replica decoding every bet.
const wireVersion = 1

// appendWire appends one bet in the binary feed format.
func appendWire(dst []byte, b live.Bet) []byte {
	dst = append(dst, b.ID[:]...)
	user := b.Username
	var flags byte
	if b.Hidden {
		// A hidden player's name never leaves the process that placed the bet.
		flags, user = 1, ""
	}
	dst = append(dst, flags)
	dst = binary.AppendUvarint(dst, uint64(len(b.Game)))
	dst = append(dst, b.Game...)
	dst = binary.AppendUvarint(dst, uint64(len(user)))
	dst = append(dst, user...)
	dst = binary.AppendVarint(dst, int64(b.Amount))
	dst = binary.AppendVarint(dst, int64(b.Multiplier))
	dst = binary.AppendVarint(dst, int64(b.Payout))
	return binary.AppendVarint(dst, b.SettledAt.UnixNano())
}

// maxWireText bounds a name in a feed message (games and usernames are
// far shorter): a corrupt length is refused, not allocated.
const maxWireText = 256

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

// decodeLive reads one feed message, binary or (from an older release)
// JSON.
func decodeLive(payload string) ([]live.Bet, error) {
	if payload == "" {
		return nil, errors.New("decode live bets: empty message")
	}
	if payload[0] != wireVersion {
		return decodeLiveJSON(payload)
	}
	r := wireReader{s: payload[1:]}
	var out []live.Bet
	for len(r.s) > 0 && r.err == nil {
		var b live.Bet
		r.fill(b.ID[:])
		var flags [1]byte
		r.fill(flags[:])
		b.Game = r.text()
		b.Username = r.text()
		b.Amount = money.Amount(r.varint())
		b.Multiplier = money.Multiplier(r.varint())
		b.Payout = money.Amount(r.varint())
		b.SettledAt = time.Unix(0, r.varint()).UTC()
		if flags[0]&1 != 0 {
			b.Hidden, b.Username = true, ""
		}
		out = append(out, b)
	}
	if r.err != nil {
		return nil, fmt.Errorf("decode live bets: %w", r.err)
	}
	return out, nil
}

// wireReader reads the fields of a binary feed message; the first error
// sticks and every later read returns zero values.
type wireReader struct {
	s   string
	err error
}

var errWireShort = errors.New("truncated message")

// fill reads len(dst) bytes into dst.
func (r *wireReader) fill(dst []byte) {
	if r.err != nil || len(r.s) < len(dst) {
		r.err = errWireShort
		return
	}
	r.s = r.s[copy(dst, r.s):]
}

func (r *wireReader) text() string {
	if r.err != nil {
		return ""
	}
	n, k := uvarintString(r.s)
	if k <= 0 || n > maxWireText || uint64(len(r.s)-k) < n {
		r.err = errWireShort
		return ""
	}
	t := r.s[k : k+int(n)]
	r.s = r.s[k+int(n):]
	return strings.Clone(t)
}

func (r *wireReader) varint() int64 {
	if r.err != nil {
		return 0
	}
	u, k := uvarintString(r.s)
	if k <= 0 {
		r.err = errWireShort
		return 0
	}
	r.s = r.s[k:]
	// binary.AppendVarint's zig-zag encoding.
	v := int64(u >> 1)
	if u&1 != 0 {
		v = ^v
	}
	return v
}

// uvarintString is binary.Uvarint on a string (no copy).
func uvarintString(s string) (uint64, int) {
	var x uint64
	var shift uint
	for i := 0; i < len(s) && i < binary.MaxVarintLen64; i++ {
		c := s[i]
		if c < 0x80 {
			if i == binary.MaxVarintLen64-1 && c > 1 {
				return 0, -1
			}
			return x | uint64(c)<<shift, i + 1
		}
		x |= uint64(c&0x7f) << shift
		shift += 7
	}
	return 0, 0
}

// decodeLiveJSON reads an older release's JSON feed message.
func decodeLiveJSON(payload string) ([]live.Bet, error) {
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
