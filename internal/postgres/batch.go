package postgres

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/fairplay/fairplay/internal/limits"
	"github.com/fairplay/fairplay/internal/money"
	"github.com/fairplay/fairplay/internal/play"
)

// betBatcher places concurrent one-round-trip bets (PlaceBetAt) of different
// players together: one transaction in one round trip, with one set-based
// statement (placeManySQL: fairplay_place_bets, which also places a bet on
// its own) that checks and places up to maxBetBatch bets. Measured with
// pgbench on the bets' own statements (before migration 00013 made the
// batch's statement the one definition), Postgres spent ~350–460 µs of CPU
// on a bet placed alone, ~200–250 µs a bet when a per-bet function ran for
// 16 bets in one statement, and ~140–160 µs a bet with the set-based
// statement.
//
// The bets gather in a batchQueue: no waiting for a batch to fill, each
// player at most once per batch. A batch never waits for a row lock: a bet
// whose player's row another transaction holds (a bet through another
// replica, a change of the player's seed pair) is placed on its own,
// so batches cannot deadlock, nor one slow player hold the others up. When
// the statement fails (one bet's constraint violation, say) it has changed
// nothing, and each of its bets is placed again on its own, so one bet's
// error never becomes another's. When Postgres is unreachable every bet in
// it gets that error, as a lone bet would.
type betBatcher struct {
	store *PlayStore // outside any transaction
	batchQueue[*queuedBet]

	batches, bets atomic.Int64 // statements sent and the bets they held
	alone         atomic.Int64 // bets of batches placed on their own afterwards
	busy          atomic.Int64 // nanoseconds the statements took, summed
	failures      failureLog
}

// maxBetBatch bounds a batch, which holds its players' rows until it
// commits. make bench (dice, 64 players) measured 5643, 6260 and 5915 bets/s
// with 16, 32 and 64: the gain has flattened out by then.
const maxBetBatch = 32

// maxBetBatches is how many batches may run at once, the second only when a
// full batch waits (batchQueue): while one runs, the next gathers, so
// batches are as large as the load makes them, and a second Postgres
// backend works only on a large batch. Measured with make bench (dice, 2
// cores, batches of up to 32): 5244 bets/s at 32 players and 6260 at 64
// (p99 12 and 21 ms) with one batch at a time, 4679 and 6022 (p99 15 and
// 23 ms) with two leaving at once, whose smaller batches cost Postgres more
// per bet (~100 µs against ~140). With the second leaving only when full,
// make bench-ab (64 players, six rounds on a busy machine) paired it with
// one at a time at 0.76-1.44 (median 1.05): within the machine's noise, and
// it costs Postgres nothing per bet. At 32 players a full batch never
// waits, so nothing changes there.
const maxBetBatches = 2

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
	placed play.Placed
	now    play.SeedPair
	err    error
}

func (q *queuedBet) waiting() context.Context { return q.ctx }
func (q *queuedBet) player() uuid.UUID        { return q.bet.UserID }
func (q *queuedBet) giveUp(err error)         { q.done <- betResult{err: fmt.Errorf("place bet: %w", err)} }

func newBetBatcher(s *PlayStore) *betBatcher {
	b := &betBatcher{store: s}
	b.batchQueue = batchQueue[*queuedBet]{maxBatches: maxBetBatches, maxSize: maxBetBatch, exec: b.exec}
	return b
}

// place queues one bet and waits for its batch's answer (or ctx, after
// which the bet may still be placed, as a lone statement cancelled in flight
// may be).
func (b *betBatcher) place(ctx context.Context, nb play.NewBet, pair play.SeedPair, d play.Draw) (play.Placed, play.SeedPair, error) {
	q := &queuedBet{ctx: ctx, bet: nb, pair: pair, draw: d, done: make(chan betResult, 1)}
	b.add(q)
	select {
	case r := <-q.done:
		return r.placed, r.now, r.err
	case <-ctx.Done():
		return play.Placed{}, play.SeedPair{}, fmt.Errorf("place bet: %w", context.Cause(ctx))
	}
}

// exec places one batch and answers each of its bets.
func (b *betBatcher) exec(batch []*queuedBet) {
	b.batches.Add(1)
	b.bets.Add(int64(len(batch)))
	ctx, cancel := context.WithTimeout(context.Background(), betBatchTimeout)
	defer cancel()
	start := time.Now()
	results, err := placeMany(ctx, b.store.db, batch, false)
	b.busy.Add(int64(time.Since(start)))
	var pgErr *pgconn.PgError
	if err != nil && errors.As(err, &pgErr) && !IsUnavailable(err) {
		// The statement failed and changed nothing: each bet on its own.
		b.failures.log(b.store.log, "a batch of bets failed; its bets are placed one by one", err, len(batch))
		for _, q := range batch {
			go b.placeAlone(q)
		}
		return
	}
	for i, q := range batch {
		switch {
		case err != nil:
			q.done <- betResult{err: fmt.Errorf("place bet: %w", err)}
		case errors.Is(results[i].err, errPlayerBusy):
			go b.placeAlone(q)
		default:
			q.done <- results[i]
		}
	}
}

// placeAlone places a bet on its own (placeOne), which waits for the
// player's row if another transaction holds it, away from
// the batches.
func (b *betBatcher) placeAlone(q *queuedBet) {
	b.alone.Add(1)
	placed, now, err := placeOne(q.ctx, b.store.db, q.bet, q.pair, q.draw)
	q.done <- betResult{placed: placed, now: now, err: err}
}

// errPlayerBusy is placeMany's answer for a bet whose player's row another
// transaction holds, or whose player has an earlier bet in the batch: the
// batch does not wait for it.
var errPlayerBusy = errors.New("the player is busy")

// placeManySQL places a batch of bets drawn in advance in one statement
// with fairplay_place_bets (migration 00013), the one definition of placing
// a bet, without waiting for a row lock: a bet whose player's row another
// transaction holds — or whose player has an earlier bet in the batch — is
// answered 'busy' and placed on its own (placeOne, the same
// function told to wait). See the migration for the answers and the locks.
// $17 is whether to wait.
const placeManySQL = `
	SELECT ord, status, balance, player, hidden, pair_id, pair_user, server_seed, server_seed_hash, client_seed, nonce,
	       pair_created
	FROM fairplay_place_bets($1::uuid[], $2::uuid[], $3::timestamptz[], $4::uuid[], $5::text[], $6::bigint[], $7::uuid[],
	                         $8::text[], $9::text[], $10::bigint[], $11::bigint[], $12::bigint[], $13::text[], $14::text[],
	                         $15::timestamptz[], $16::bool[], $17::bool)`

// placeMany places a batch in one statement (one transaction, one round
// trip) and returns each bet's answer, in the batch's order. With wait it
// waits for the players' rows instead of answering 'busy' (the player's row
// holds the active pair and its nonce: migration 00028).
func placeMany(ctx context.Context, db DB, batch []*queuedBet, wait bool) ([]betResult, error) {
	n := len(batch)
	var (
		users, sessions, pairs, bets = make(uuidArray, n), make(uuidArray, n), make(uuidArray, n), make(uuidArray, n)
		liveSince, at                = make(timeArray, n), make(timeArray, n)
		clientSeeds, gameNames       = make(textArray, n), make(textArray, n)
		statuses                     = make(textArray, n)
		params, states               = make(jsonArray, n), make(jsonArray, n)
		nonces, stakes, mults, pays  = make(int8Array, n), make(int8Array, n), make(int8Array, n), make(int8Array, n)
		settled                      = make(boolArray, n)
	)
	for i, q := range batch {
		users[i], sessions[i], pairs[i], bets[i] = id16(q.bet.UserID), id16(q.bet.SessionID), id16(q.pair.ID), id16(q.bet.ID)
		liveSince[i], at[i] = q.bet.LiveSince, q.bet.At
		clientSeeds[i], gameNames[i], statuses[i] = q.pair.ClientSeed, string(q.bet.Game), q.draw.Status
		params[i], states[i] = q.draw.Params, q.draw.State
		nonces[i], stakes[i], mults[i], pays[i] = q.pair.Nonce, int64(q.bet.Stake), int64(q.draw.Multiplier), int64(q.draw.Payout)
		settled[i] = q.draw.Status == play.StatusSettled
	}
	rows, err := db.Query(ctx, placeManySQL, users, sessions, liveSince, pairs, clientSeeds, nonces, bets, gameNames,
		statuses, stakes, mults, pays, params, states, at, settled, wait)
	if err != nil {
		return nil, err
	}
	return byOrd(rows, n, "place bets", func(rows pgx.Rows) (int, betResult, error) {
		r := new(placeRow)
		if err := rows.Scan(r.dest(true)...); err != nil {
			return r.ord, betResult{}, err
		}
		placed, now, err := r.result()
		return r.ord, betResult{placed: placed, now: now, err: err}, nil
	})
}

// byOrd reads a batch statement's answers, one row per request of n led by
// its ord (1-based, as WITH ORDINALITY numbers the batch's arrays), into the
// batch's order, and closes rows. A row numbered out of range or twice, or
// fewer rows than requests, is an error (what names the statement): no
// request may get another's answer, or none.
func byOrd[T any](rows pgx.Rows, n int, what string, scan func(pgx.Rows) (int, T, error)) ([]T, error) {
	defer rows.Close()
	out := make([]T, n)
	answered := make([]bool, n)
	for rows.Next() {
		ord, r, err := scan(rows)
		if err != nil {
			return nil, err
		}
		if ord < 1 || ord > n || answered[ord-1] {
			return nil, fmt.Errorf("%s: row %d of %d, or twice", what, ord, n)
		}
		answered[ord-1], out[ord-1] = true, r
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for i, ok := range answered {
		if !ok {
			return nil, fmt.Errorf("%s: no answer for request %d of %d", what, i+1, n)
		}
	}
	return out, nil
}

// nullablePair scans a seed pair's id, user_id, server_seed,
// server_seed_hash, client_seed, nonce and created_at columns, which are all
// NULL when there is no pair. pgtype's values take a NULL without the
// allocation a pointer destination costs (pgx makes each one with reflect).
type nullablePair struct {
	id, userID           pgtype.UUID
	server, hash, client pgtype.Text
	nonce                pgtype.Int8
	created              pgtype.Timestamptz
}

// dest appends the scan destinations, in that order, to to.
func (n *nullablePair) dest(to []any) []any {
	return append(to, &n.id, &n.userID, &n.server, &n.hash, &n.client, &n.nonce, &n.created)
}

// get returns the pair, or false when the columns were NULL.
func (n *nullablePair) get() (play.SeedPair, bool) {
	if !n.id.Valid {
		return play.SeedPair{}, false
	}
	return play.SeedPair{ID: n.id.Bytes, UserID: n.userID.Bytes, ServerSeed: n.server.String,
		ServerSeedHash: n.hash.String, ClientSeed: n.client.String, Nonce: n.nonce.Int64,
		CreatedAt: n.created.Time}, true
}

// placeRow is one answer of fairplay_place_bets: its ord (in a batch),
// status, balance, the player's username, hide_username and active pair.
type placeRow struct {
	ord      int
	status   string
	bal      pgtype.Int8
	username pgtype.Text
	hidden   pgtype.Bool
	pair     nullablePair
	to       [12]any // dest's slice, in the row: one allocation per row in all
}

// dest is the scan destinations, in that order (led by the ord when
// withOrd).
func (r *placeRow) dest(withOrd bool) []any {
	d := r.to[:0]
	if withOrd {
		d = append(d, &r.ord)
	}
	return r.pair.dest(append(d, &r.status, &r.bal, &r.username, &r.hidden))
}

// result turns the answer into PlaceBetAt's results.
func (r *placeRow) result() (play.Placed, play.SeedPair, error) {
	var now play.SeedPair
	switch r.status {
	case "placed":
		return play.Placed{Balance: money.Amount(r.bal.Int64), HideUsername: r.hidden.Valid && r.hidden.Bool,
			Username: r.username.String}, now, nil
	case "gone":
		return play.Placed{}, now, play.ErrUserGone
	case "insufficient":
		return play.Placed{}, now, play.ErrInsufficientBalance
	case "limit":
		return play.Placed{}, now, play.ErrBalanceLimit
	case "busy":
		return play.Placed{}, now, errPlayerBusy
	case "in_progress":
		return play.Placed{}, now, play.ErrGameInProgress
	case "stale":
		now, _ = r.pair.get()
		return play.Placed{}, now, play.ErrStalePair
	}
	// Anything else is a refusal by the player's own limits
	// (fairplay_play_refusal, migration 00015).
	return play.Placed{}, now, limits.Refusal(r.status)
}
