package postgres

import (
	"context"
	"errors"
	"fmt"
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
// players together: one transaction in one round trip, with one set-based
// statement (placeManySQL) that checks and places up to maxBetBatch bets
// with the rules of fairplay_place_bet, which places a lone bet. Measured
// with pgbench on the bets' own statements, Postgres spends ~350–460 µs of
// CPU on a bet placed alone, ~200–250 µs a bet when fairplay_place_bet runs
// for 16 bets in one statement, and ~140–160 µs a bet with placeManySQL.
//
// There is no waiting for a batch to fill: a bet goes out at once when fewer
// than maxBatches batches are running, so under light load every batch holds
// one bet; bets that arrive while all are running queue and leave together
// in the next. A batch holds each player at most once (a player's second bet
// waits for the next batch) and never waits for a row lock: a bet whose
// player or seed pair another transaction holds is placed on its own, so
// batches cannot deadlock, nor one slow player hold the others up. When the statement
// fails (one bet's constraint violation, say) it has changed nothing, and
// each of its bets is placed again on its own, so one bet's error never
// becomes another's. When Postgres is unreachable every bet in it
// gets that error, as a lone bet would.
type betBatcher struct {
	store      *PlayStore // outside any transaction
	maxBatches int
	maxSize    int

	mu      sync.Mutex
	queue   []*queuedBet
	running int

	batches, bets atomic.Int64 // statements sent and the bets they held
	alone         atomic.Int64 // bets of batches placed on their own afterwards
}

// maxBetBatch bounds a batch, which holds its players' rows until it
// commits. make bench (dice, 64 players) measured 5643, 6260 and 5915 bets/s
// with 16, 32 and 64: the gain has flattened out by then.
const maxBetBatch = 32

// maxBetBatches is how many batches may run at once. One: while it runs,
// the next batch gathers, so batches are as large as the load makes them.
// Measured with make bench (dice, 2 cores, batches of up to 32): 5244
// bets/s at 32 players and 6260 at 64 (p99 12 and 21 ms) with one batch at a
// time, 4679 and 6022 (p99 15 and 23 ms) with two, whose smaller batches
// cost Postgres more per bet (~100 µs against ~140).
const maxBetBatches = 1

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

func newBetBatcher(s *PlayStore) *betBatcher {
	return &betBatcher{store: s, maxBatches: maxBetBatches, maxSize: maxBetBatch}
}

// place queues one bet and waits for its batch's answer (or ctx, after
// which the bet may still be placed, as a lone statement cancelled in flight
// may be).
func (b *betBatcher) place(ctx context.Context, nb play.NewBet, pair play.SeedPair, d play.Draw) (play.Placed, play.SeedPair, error) {
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
		return r.placed, r.now, r.err
	case <-ctx.Done():
		return play.Placed{}, play.SeedPair{}, fmt.Errorf("place bet: %w", context.Cause(ctx))
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
// player; nil (and one batch fewer running) when the queue is empty. Bets
// whose callers have given up are answered and dropped.
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
	return batch
}

// exec places one batch and answers each of its bets.
func (b *betBatcher) exec(batch []*queuedBet) {
	b.batches.Add(1)
	b.bets.Add(int64(len(batch)))
	ctx, cancel := context.WithTimeout(context.Background(), betBatchTimeout)
	defer cancel()
	results, err := placeMany(ctx, b.store.db, batch)
	var pgErr *pgconn.PgError
	if err != nil && errors.As(err, &pgErr) && !IsUnavailable(err) {
		// The statement failed and changed nothing: each bet on its own.
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

// placeAlone places a bet with fairplay_place_bet, which waits for the
// player's row if another transaction holds it, away from the batches.
func (b *betBatcher) placeAlone(q *queuedBet) {
	b.alone.Add(1)
	placed, now, err := placeOne(q.ctx, b.store.db, q.bet, q.pair, q.draw)
	q.done <- betResult{placed: placed, now: now, err: err}
}

// errPlayerBusy is placeMany's answer for a bet whose player's or seed
// pair's row another transaction holds, or whose player has an earlier bet
// in the batch: the batch does not wait for it.
var errPlayerBusy = errors.New("the player or the seed pair is busy")

// placeManySQL places a batch of bets drawn in advance in one statement,
// with the rules of fairplay_place_bet (migrations 00006 and 00008), which
// places a lone bet. It first locks the batch's players and seed pairs
// (FOR NO KEY UPDATE, as a balance or nonce update would: a new seed pair's
// foreign-key check can still proceed) and sessions (FOR KEY SHARE, which
// a revocation's update does not wait for), skipping rows another
// transaction holds: a bet whose player, pair or session is busy — or whose
// player has an earlier bet in the batch — is answered 'busy' and placed on
// its own, so a batch never waits for a row lock. The locked rows are read
// as they are now, whatever the statement's snapshot: a session revoked by
// a transaction that committed after the snapshot is seen revoked. Then a bet is 'gone' when its player
// is deleted or its session (when given: the zero uuid means none) is not
// live, 'limit' when the balance is above play.MaxBalance, 'insufficient'
// when the stake is above the balance, 'in_progress'
// when the player already plays a game of its kind (even if this deal
// would end at once), 'stale' unless its pair is still the player's active
// pair with that client seed and its nonce the next, and 'placed'
// otherwise, with the balance after. A
// stale bet comes back with the player's active pair: the locked one as it
// is now when it is still active, else as of the statement's snapshot.
// Only placed bets write anything: the nonce, the balance, a ledger entry
// for the stake and one for a payout, and the bet. Each answer carries the
// player's username and hide_username too, for the live feed.
var placeManySQL = withMaxBalance(`
	WITH b AS (
		SELECT user_id, session_id, live_since, pair_id, client_seed, nonce, bet_id, game, status, stake, multiplier,
		       payout, params::jsonb AS params, state::jsonb AS state, at, settled, ord
		FROM unnest($1::uuid[], $2::uuid[], $3::timestamptz[], $4::uuid[], $5::text[], $6::bigint[], $7::uuid[],
		            $8::text[], $9::text[], $10::bigint[], $11::bigint[], $12::bigint[], $13::text[], $14::text[],
		            $15::timestamptz[], $16::bool[])
		     WITH ORDINALITY AS b(user_id, session_id, live_since, pair_id, client_seed, nonce, bet_id, game, status,
		                          stake, multiplier, payout, params, state, at, settled, ord)
	), locked AS MATERIALIZED (
		SELECT id, balance, deleted_at, username, hide_username FROM users WHERE id = ANY($1::uuid[]) FOR NO KEY UPDATE SKIP LOCKED
	), live AS MATERIALIZED (
		SELECT id, user_id, revoked_at, last_used_at
		FROM sessions WHERE id = ANY($2::uuid[]) FOR KEY SHARE SKIP LOCKED
	), pairs AS MATERIALIZED (
		SELECT id, user_id, server_seed, server_seed_hash, client_seed, nonce, created_at, revealed_at
		FROM seed_pairs WHERE id = ANY($4::uuid[]) FOR NO KEY UPDATE SKIP LOCKED
	), chk AS (
		SELECT b.*, l.balance AS bal, l.username AS player, l.hide_username AS hidden,
		       CASE WHEN l.id IS NULL OR p.id IS NULL OR (b.session_id <> '00000000-0000-0000-0000-000000000000' AND s.id IS NULL)
		                 OR row_number() OVER (PARTITION BY b.user_id ORDER BY b.ord) > 1 THEN 'busy'
		            WHEN l.deleted_at IS NOT NULL
		                 OR (s.id IS NOT NULL AND (s.user_id <> b.user_id OR s.revoked_at IS NOT NULL
		                                           OR s.last_used_at < b.live_since)) THEN 'gone'
		            WHEN l.balance > :max_balance THEN 'limit'
		            WHEN l.balance < b.stake THEN 'insufficient'
		            WHEN EXISTS (
		                     SELECT 1 FROM bets x WHERE x.user_id = b.user_id AND x.game = b.game AND x.status = 'active')
		                 THEN 'in_progress'
		            WHEN p.user_id <> b.user_id OR p.revealed_at IS NOT NULL OR p.client_seed <> b.client_seed
		                 OR p.nonce <> b.nonce - 1 THEN 'stale'
		            ELSE 'ok' END AS verdict
		FROM b
		LEFT JOIN locked l ON l.id = b.user_id
		LEFT JOIN live s ON s.id = b.session_id
		LEFT JOIN pairs p ON p.id = b.pair_id
	), adv AS (
		UPDATE seed_pairs sp SET nonce = c.nonce
		FROM chk c
		WHERE c.verdict = 'ok' AND sp.id = c.pair_id AND sp.user_id = c.user_id AND sp.nonce = c.nonce - 1
		  AND sp.revealed_at IS NULL AND sp.client_seed = c.client_seed
		RETURNING c.user_id, c.bet_id, c.game, c.status, c.stake, c.multiplier, c.payout, c.pair_id, c.client_seed,
		          c.nonce, c.params, c.state, c.at, c.settled, c.ord
	), upd AS (
		UPDATE users u SET balance = u.balance - a.stake + a.payout
		FROM adv a WHERE u.id = a.user_id
		RETURNING u.id, u.balance
	), led AS (
		INSERT INTO ledger_entries (user_id, kind, amount, balance_after, ref_id, note, created_at)
		SELECT a.user_id, e.kind, e.amount, e.after, a.bet_id, '', a.at
		FROM adv a JOIN upd ON upd.id = a.user_id
		CROSS JOIN LATERAL (VALUES (1, 'bet', -a.stake, upd.balance - a.payout),
		                           (2, 'payout', a.payout, upd.balance)) e(k, kind, amount, after)
		WHERE e.k = 1 OR a.payout <> 0
		ORDER BY a.ord, e.k
	), ins AS (
		INSERT INTO bets (id, user_id, game, status, amount, multiplier, payout, seed_pair_id, client_seed, nonce,
		                  params, state, created_at, settled_at)
		SELECT a.bet_id, a.user_id, a.game, a.status, a.stake, a.multiplier, a.payout, a.pair_id, a.client_seed,
		       a.nonce, a.params, a.state, a.at, CASE WHEN a.settled THEN a.at END
		FROM adv a ORDER BY a.ord
	), r AS (
		SELECT c.ord, c.user_id,
		       CASE WHEN c.verdict <> 'ok' THEN c.verdict WHEN upd.id IS NULL THEN 'stale' ELSE 'placed' END AS status,
		       coalesce(upd.balance, c.bal) AS balance, c.player, c.hidden
		FROM chk c
		LEFT JOIN adv a ON a.bet_id = c.bet_id
		LEFT JOIN upd ON upd.id = a.user_id
	)
	SELECT r.ord, r.status, r.balance, r.player, r.hidden, cur.id, cur.user_id, cur.server_seed, cur.server_seed_hash, cur.client_seed,
	       cur.nonce, cur.created_at
	FROM r
	LEFT JOIN LATERAL (
		(SELECT sp.id, sp.user_id, sp.server_seed, sp.server_seed_hash, sp.client_seed, sp.nonce, sp.created_at
		 FROM pairs sp WHERE r.status = 'stale' AND sp.user_id = r.user_id AND sp.revealed_at IS NULL)
		UNION ALL
		(SELECT sp.id, sp.user_id, sp.server_seed, sp.server_seed_hash, sp.client_seed, sp.nonce, sp.created_at
		 FROM seed_pairs sp WHERE r.status = 'stale' AND sp.user_id = r.user_id AND sp.revealed_at IS NULL)
		LIMIT 1
	) cur ON true
	ORDER BY r.ord`)

// placeMany places a batch in one statement (one transaction, one round
// trip) and returns each bet's answer, in the batch's order.
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
		if err := rows.Scan(append([]any{&ord}, r.dest()...)...); err != nil {
			return nil, err
		}
		if ord < 1 || ord > n {
			return nil, fmt.Errorf("place bets: row %d of %d", ord, n)
		}
		placed, now, err := r.result()
		out[ord-1] = betResult{placed: placed, now: now, err: err}
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

// nullablePair scans a seed pair's id, user_id, server_seed,
// server_seed_hash, client_seed, nonce and created_at columns, which are all
// NULL when there is no pair.
type nullablePair struct {
	id, userID           *uuid.UUID
	server, hash, client *string
	nonce                *int64
	created              *time.Time
}

// dest is the scan destinations, in that order.
func (n *nullablePair) dest() []any {
	return []any{&n.id, &n.userID, &n.server, &n.hash, &n.client, &n.nonce, &n.created}
}

// get returns the pair, or false when the columns were NULL.
func (n *nullablePair) get() (play.SeedPair, bool) {
	if n.id == nil {
		return play.SeedPair{}, false
	}
	return play.SeedPair{ID: *n.id, UserID: *n.userID, ServerSeed: *n.server, ServerSeedHash: *n.hash,
		ClientSeed: *n.client, Nonce: *n.nonce, CreatedAt: *n.created}, true
}

// placeRow is one answer of fairplay_place_bet or placeManySQL: status,
// balance, the player's username, hide_username and active pair.
type placeRow struct {
	status   string
	bal      *int64
	username *string
	hidden   *bool
	pair     nullablePair
}

// dest is the scan destinations, in that order.
func (r *placeRow) dest() []any {
	return append([]any{&r.status, &r.bal, &r.username, &r.hidden}, r.pair.dest()...)
}

// result turns the answer into PlaceBetAt's results.
func (r *placeRow) result() (play.Placed, play.SeedPair, error) {
	var now play.SeedPair
	switch r.status {
	case "placed":
		p := play.Placed{Balance: money.Amount(*r.bal), HideUsername: r.hidden != nil && *r.hidden}
		if r.username != nil {
			p.Username = *r.username
		}
		return p, now, nil
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
	return play.Placed{}, now, fmt.Errorf("place bet: unexpected status %q", r.status)
}
