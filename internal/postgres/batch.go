package postgres

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/fairplay/fairplay/internal/money"
	"github.com/fairplay/fairplay/internal/play"
)

// betBatcher places concurrent one-round-trip bets (PlaceBetAt) of different
// players together: one statement, hence one transaction, one round trip and
// one commit for up to maxBetBatch bets, each still checked and placed by
// fairplay_place_bet exactly as alone. Measured with pgbench on the bet's own
// statement: Postgres spent ~350–460 µs of CPU per bet placed alone and
// ~200 µs per bet placed four or more at a time.
//
// There is no waiting for a batch to fill: a bet goes out at once when fewer
// than maxBatches batches are running, so under light load every batch holds
// one bet; bets that arrive while all are running queue and leave together
// in the next. A batch holds each player at most once (a player's second bet
// waits for the next batch) and locks its players in id order, so two
// batches cannot deadlock each other. When the statement fails (one bet's
// constraint violation, a deadlock with another transaction) it has changed
// nothing, and each of its bets is placed again on its own, so one bet's
// error never becomes another's. When Postgres is unreachable every bet in it
// gets that error, as a lone bet would.
type betBatcher struct {
	db         DB
	maxBatches int
	maxSize    int

	mu      sync.Mutex
	queue   []*queuedBet
	running int

	batches, bets atomic.Int64 // statements sent and the bets they held
}

// maxBetBatch bounds a batch: a batch holds its players' rows locked until it
// commits, so a larger one makes each bet wait longer for a gain that has
// flattened out by then (~200 µs of Postgres CPU per bet at 4, 16 and 32).
const maxBetBatch = 32

// betBatchTimeout bounds one batch's statement; each caller still waits only
// as long as its own context allows.
const betBatchTimeout = 15 * time.Second

type queuedBet struct {
	ctx  context.Context
	bet  play.NewBet
	pair play.SeedPair
	draw play.Draw
	done chan betResult
}

type betResult struct {
	balance money.Amount
	now     play.SeedPair
	err     error
}

func newBetBatcher(db DB) *betBatcher {
	// Two batches a core: one executing while another waits for its commit
	// to reach the disk.
	return &betBatcher{db: db, maxBatches: max(2, 2*runtime.GOMAXPROCS(0)), maxSize: maxBetBatch}
}

// place queues one bet and waits for its batch's answer (or ctx, after
// which the bet may still be placed, as a lone statement cancelled in flight
// may be).
func (b *betBatcher) place(ctx context.Context, nb play.NewBet, pair play.SeedPair, d play.Draw) (money.Amount, play.SeedPair, error) {
	q := &queuedBet{ctx: ctx, bet: nb, pair: pair, draw: d, done: make(chan betResult, 1)}
	b.mu.Lock()
	b.queue = append(b.queue, q)
	if b.running < b.maxBatches {
		b.running++
		go b.run()
	}
	b.mu.Unlock()
	select {
	case r := <-q.done:
		return r.balance, r.now, r.err
	case <-ctx.Done():
		return 0, play.SeedPair{}, fmt.Errorf("place bet: %w", context.Cause(ctx))
	}
}

// run places batches until the queue is empty.
func (b *betBatcher) run() {
	for {
		batch := b.take()
		if batch == nil {
			return
		}
		b.exec(batch)
	}
}

// take removes the next batch from the queue: the oldest bets, one per
// player, sorted by player; nil (and one batch fewer running) when the queue
// is empty. Bets whose callers have given up are answered and dropped.
func (b *betBatcher) take() []*queuedBet {
	b.mu.Lock()
	defer b.mu.Unlock()
	var batch []*queuedBet
	rest := b.queue[:0]
	for _, q := range b.queue {
		switch {
		case q.ctx.Err() != nil:
			q.done <- betResult{err: fmt.Errorf("place bet: %w", context.Cause(q.ctx))}
		case len(batch) < b.maxSize && !slices.ContainsFunc(batch, func(o *queuedBet) bool { return o.bet.UserID == q.bet.UserID }):
			batch = append(batch, q)
		default:
			rest = append(rest, q)
		}
	}
	clear(b.queue[len(rest):])
	b.queue = rest
	if len(batch) == 0 {
		b.running--
		return nil
	}
	slices.SortFunc(batch, func(x, y *queuedBet) int { return bytes.Compare(x.bet.UserID[:], y.bet.UserID[:]) })
	return batch
}

// exec places one batch and answers each of its bets.
func (b *betBatcher) exec(batch []*queuedBet) {
	b.batches.Add(1)
	b.bets.Add(int64(len(batch)))
	if len(batch) == 1 {
		q := batch[0]
		bal, now, err := placeOne(q.ctx, b.db, q.bet, q.pair, q.draw)
		q.done <- betResult{balance: bal, now: now, err: err}
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), betBatchTimeout)
	defer cancel()
	results, err := placeMany(ctx, b.db, batch)
	var pgErr *pgconn.PgError
	if err != nil && errors.As(err, &pgErr) && !IsUnavailable(err) {
		// The statement failed and changed nothing: each bet on its own.
		for _, q := range batch {
			bal, now, err := placeOne(q.ctx, b.db, q.bet, q.pair, q.draw)
			q.done <- betResult{balance: bal, now: now, err: err}
		}
		return
	}
	for i, q := range batch {
		if err != nil {
			q.done <- betResult{err: fmt.Errorf("place bet: %w", err)}
			continue
		}
		q.done <- results[i]
	}
}

// placeManySQL runs fairplay_place_bet for each row of the arrays, in order,
// in one statement.
const placeManySQL = `
	SELECT b.ord, r.status, r.balance, (r.pair).id, (r.pair).user_id, (r.pair).server_seed,
	       (r.pair).server_seed_hash, (r.pair).client_seed, (r.pair).nonce, (r.pair).created_at
	FROM unnest($1::uuid[], $2::uuid[], $3::timestamptz[], $4::uuid[], $5::text[], $6::bigint[], $7::uuid[],
	            $8::text[], $9::text[], $10::bigint[], $11::bigint[], $12::bigint[], $13::text[], $14::text[],
	            $15::timestamptz[], $16::bool[])
	     WITH ORDINALITY AS b(user_id, session_id, live_since, pair_id, client_seed, nonce, bet_id, game, status,
	                          stake, multiplier, payout, params, state, at, settled, ord)
	CROSS JOIN LATERAL fairplay_place_bet(b.user_id, NULLIF(b.session_id, '00000000-0000-0000-0000-000000000000'),
	     b.live_since, b.pair_id, b.client_seed, b.nonce, b.bet_id, b.game, b.status, b.stake, b.multiplier, b.payout,
	     b.params::jsonb, b.state::jsonb, b.at, CASE WHEN b.settled THEN b.at END) r
	ORDER BY b.ord`

// placeMany places a batch in one statement and returns each bet's answer,
// in the batch's order.
func placeMany(ctx context.Context, db DB, batch []*queuedBet) ([]betResult, error) {
	n := len(batch)
	var (
		users, sessions, pairs, bets = make([][16]byte, n), make([][16]byte, n), make([][16]byte, n), make([][16]byte, n)
		liveSince, at                = make([]time.Time, n), make([]time.Time, n)
		clientSeeds, gameNames       = make([]string, n), make([]string, n)
		statuses                     = make([]string, n)
		params, states               = make([]*string, n), make([]*string, n)
		nonces, stakes, mults, pays  = make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n)
		settled                      = make([]bool, n)
	)
	for i, q := range batch {
		users[i], sessions[i], pairs[i], bets[i] = id16(q.bet.UserID), id16(q.bet.SessionID), id16(q.pair.ID), id16(q.bet.ID)
		liveSince[i], at[i] = q.bet.LiveSince, q.bet.At
		clientSeeds[i], gameNames[i], statuses[i] = q.pair.ClientSeed, string(q.bet.Game), q.draw.Status
		params[i], states[i] = jsonText(q.draw.Params), jsonText(q.draw.State)
		nonces[i], stakes[i], mults[i], pays[i] = q.pair.Nonce, int64(q.bet.Stake), int64(q.draw.Multiplier), int64(q.draw.Payout)
		settled[i] = q.draw.Status == play.StatusSettled
	}
	rows, err := db.Query(ctx, placeManySQL, users, sessions, liveSince, pairs, clientSeeds, nonces, bets, gameNames,
		statuses, stakes, mults, pays, params, states, at, settled)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make([]betResult, n)
	seen := 0
	for rows.Next() {
		var (
			ord int
			r   placeRow
		)
		if err := rows.Scan(&ord, &r.status, &r.bal, &r.pairID, &r.userID, &r.server, &r.hash, &r.client, &r.nonce, &r.created); err != nil {
			return nil, err
		}
		if ord < 1 || ord > n {
			return nil, fmt.Errorf("place bets: row %d of %d", ord, n)
		}
		bal, now, err := r.result()
		out[ord-1] = betResult{balance: bal, now: now, err: err}
		seen++
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if seen != n {
		return nil, fmt.Errorf("place bets: %d answers for %d bets", seen, n)
	}
	return out, nil
}

// jsonText is a JSON document as text, nil (SQL NULL) when there is none.
func jsonText(raw []byte) *string {
	if raw == nil {
		return nil
	}
	s := string(raw)
	return &s
}

// placeRow is one answer of fairplay_place_bet.
type placeRow struct {
	status  string
	bal     *int64
	pairID  *uuid.UUID
	userID  *uuid.UUID
	server  *string
	hash    *string
	client  *string
	nonce   *int64
	created *time.Time
}

// result turns the answer into PlaceBetAt's results.
func (r placeRow) result() (money.Amount, play.SeedPair, error) {
	var now play.SeedPair
	switch r.status {
	case "placed":
		return money.Amount(*r.bal), now, nil
	case "gone":
		return 0, now, play.ErrUserGone
	case "insufficient":
		return 0, now, play.ErrInsufficientBalance
	case "stale":
		if r.pairID != nil {
			now = play.SeedPair{ID: *r.pairID, UserID: *r.userID, ServerSeed: *r.server, ServerSeedHash: *r.hash,
				ClientSeed: *r.client, Nonce: *r.nonce, CreatedAt: *r.created}
		}
		return 0, now, play.ErrStalePair
	}
	return 0, now, fmt.Errorf("place bet: unexpected status %q", r.status)
}
