package postgres

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
)

// batchItem is one caller's request waiting in a batchQueue: a bet
// (queuedBet) or a game action (queuedAction).
type batchItem interface {
	// waiting is the caller's context; player, whose requests a batch
	// holds at most once.
	waiting() context.Context
	player() uuid.UUID
	// giveUp answers a caller that stopped waiting before its batch left.
	giveUp(error)
}

// batchQueue gathers concurrent callers' requests into batches, the
// mechanics betBatcher and actionBatcher share. There is no waiting for a
// batch to fill: a request goes out at once when no batch is running, so
// under light load every batch holds one; requests that arrive while one
// runs queue and leave together in the next, at most maxSize and each
// player at most once (a player's next request waits for the next batch).
// With maxBatches above one, a further batch leaves while others run only
// once a full one (maxSize) waits: a small batch costs Postgres more per
// request, so a second backend works only on a large one. exec sends one
// batch and answers each of its requests.
type batchQueue[T batchItem] struct {
	maxBatches, maxSize int
	exec                func([]T)

	mu      sync.Mutex
	queue   []T
	running int
	peak    int // the most batches that ran at once
}

// add queues q, starting a batch if none is running, or if fewer than
// maxBatches are and a full one waits.
func (b *batchQueue[T]) add(q T) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.queue = append(b.queue, q)
	if b.running == 0 || (b.running < b.maxBatches && len(b.queue) >= b.maxSize) {
		b.running++
		b.peak = max(b.peak, b.running)
		go b.run()
	}
}

// run sends batches until the queue is empty.
func (b *batchQueue[T]) run() {
	for {
		batch := b.take()
		if batch == nil {
			return
		}
		b.exec(batch)
	}
}

// take removes the next batch from the queue: the oldest requests, one per
// player; nil (and one batch fewer running) when the queue is empty, or
// when another batch runs and this one would not be full (the other takes
// them when it ends). Requests whose callers have given up are answered
// and dropped: the bets' and the actions' callers wait under drawnContext,
// which gives up only at the server's own bound, never when the player
// does.
func (b *batchQueue[T]) take() []T {
	b.mu.Lock()
	defer b.mu.Unlock()
	var batch []T
	rest := b.queue[:0]
	for _, q := range b.queue {
		switch {
		case q.waiting().Err() != nil:
			q.giveUp(context.Cause(q.waiting()))
		case len(batch) < b.maxSize && !hasPlayer(batch, q.player()):
			batch = append(batch, q)
		default:
			rest = append(rest, q)
		}
	}
	clear(b.queue[len(rest):])
	b.queue = rest
	if len(batch) > 0 && b.running > 1 && len(batch) < b.maxSize {
		// Another batch runs and this one is not full (the queue add
		// counted held requests given up, or players' second requests):
		// it goes back ahead of the rest, each player's requests in order.
		b.queue = append(batch, b.queue...)
		batch = nil
	}
	if len(batch) == 0 {
		b.running--
		return nil
	}
	return batch
}

func hasPlayer[T batchItem](batch []T, id uuid.UUID) bool {
	for _, o := range batch {
		if o.player() == id {
			return true
		}
	}
	return false
}

// failureLogEvery is how often at most a batcher logs its batches' failures.
const failureLogEvery = 10 * time.Second

// failureLog logs a batch statement's failures (its requests are then done
// one by one, which costs every one of them a statement more) at most once
// per failureLogEvery, with how many were not logged since the last line:
// a failure that repeats (a function missing after a migration was undone,
// say) is seen without a line per batch.
type failureLog struct {
	last    atomic.Int64 // when the last line was written (Unix nanoseconds)
	skipped atomic.Int64 // failures since then not logged
}

func (f *failureLog) log(log *slog.Logger, msg string, err error, requests int) {
	if log == nil {
		return
	}
	now, last := time.Now().UnixNano(), f.last.Load()
	if (last != 0 && now-last < int64(failureLogEvery)) || !f.last.CompareAndSwap(last, now) {
		f.skipped.Add(1)
		return
	}
	log.Warn(msg, "error", err.Error(), "requests", requests, "failures_not_logged", f.skipped.Swap(0))
}
