package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/fairplay/fairplay/internal/money"
	"github.com/fairplay/fairplay/internal/play"
)

// BatchBet is one bet of a batch, for the tests of betBatcher.
type BatchBet struct {
	Ctx  context.Context
	Bet  play.NewBet
	Pair play.SeedPair
	Draw play.Draw
}

// BatchAnswer is one bet's answer.
type BatchAnswer struct {
	Balance money.Amount
	// Placed is the whole answer of a placed bet (the balance, the player's
	// name and hide_username).
	Placed play.Placed
	Now    play.SeedPair
	Err    error
}

func queued(bets []BatchBet) []*queuedBet {
	out := make([]*queuedBet, len(bets))
	for i, b := range bets {
		ctx := b.Ctx
		if ctx == nil {
			ctx = context.Background()
		}
		out[i] = &queuedBet{ctx: ctx, bet: b.Bet, pair: b.Pair, draw: b.Draw, done: make(chan betResult, 1)}
	}
	return out
}

// answers collects each bet's answer, waiting up to wait for each.
func answers(qs []*queuedBet, wait time.Duration) []BatchAnswer {
	out := make([]BatchAnswer, len(qs))
	for i, q := range qs {
		out[i] = BatchAnswer{Err: ErrNoAnswer}
		var r betResult
		select {
		case r = <-q.done:
		default:
			if wait == 0 {
				continue
			}
			select {
			case r = <-q.done:
			case <-time.After(wait):
				continue
			}
		}
		out[i] = BatchAnswer{Balance: r.placed.Balance, Placed: r.placed, Now: r.now, Err: r.err}
	}
	return out
}

// ErrNoAnswer is the answer TakeBetBatch reports for a bet not answered.
var ErrNoAnswer = errors.New("no answer")

// ExecBetBatch places bets as one batch, as the batcher does, and returns
// each bet's answer in the order given (waiting up to ten seconds for the
// bets placed on their own afterwards).
func ExecBetBatch(s *PlayStore, bets []BatchBet) []BatchAnswer {
	qs := queued(bets)
	(&betBatcher{store: s, maxBatches: 1, maxSize: maxBetBatch}).exec(qs)
	return answers(qs, 10*time.Second)
}

// TakeBetBatch queues bets and takes one batch as the batcher would: it
// returns the indexes of the bets in the batch, in the batch's order, the
// indexes still queued, and the answers given (to bets whose callers gave
// up; ErrNoAnswer for the rest).
func TakeBetBatch(bets []BatchBet, size int) (batch, queuedIdx []int, got []BatchAnswer) {
	qs := queued(bets)
	index := make(map[*queuedBet]int, len(qs))
	for i, q := range qs {
		index[q] = i
	}
	b := &betBatcher{maxBatches: 1, maxSize: size, queue: append([]*queuedBet(nil), qs...), running: 1}
	for _, q := range b.take() {
		batch = append(batch, index[q])
	}
	for _, q := range b.queue {
		queuedIdx = append(queuedIdx, index[q])
	}
	return batch, queuedIdx, answers(qs, 0)
}
