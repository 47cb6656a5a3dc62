package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fairplay/fairplay/internal/money"
	"github.com/fairplay/fairplay/internal/play"
)

// PlayStore implements play.Store.
type PlayStore struct {
	pool  *pgxpool.Pool
	db    DB
	batch *betBatcher // nil in a transaction
}

var _ play.Store = (*PlayStore)(nil)

// NewPlayStore returns a play.Store on pool.
func NewPlayStore(pool *pgxpool.Pool) *PlayStore {
	s := &PlayStore{pool: pool, db: pool}
	s.batch = newBetBatcher(s)
	return s
}

// InTx runs fn in one transaction.
func (s *PlayStore) InTx(ctx context.Context, fn func(play.Store) error) error {
	if _, inTx := s.db.(pgx.Tx); inTx {
		return fn(s)
	}
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error { return fn(&PlayStore{pool: s.pool, db: tx}) })
}

const seedPairColumns = `id, user_id, server_seed, server_seed_hash, client_seed, nonce, created_at, revealed_at`

func scanSeedPair(row pgx.Row) (play.SeedPair, error) {
	var p play.SeedPair
	err := row.Scan(&p.ID, &p.UserID, &p.ServerSeed, &p.ServerSeedHash, &p.ClientSeed, &p.Nonce, &p.CreatedAt, &p.RevealedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return p, play.ErrNoSeedPair
	}
	return p, err
}

// ActiveSeedPair returns the active pair, optionally locking it. Locking
// takes the player's row first (FOR NO KEY UPDATE, in the order every bet
// takes it: player, then pair), so changes of one player's pair — a
// rotation, a new client seed — run one after another, and the pair read
// after the wait is the one the previous change left.
func (s *PlayStore) ActiveSeedPair(ctx context.Context, userID uuid.UUID, forUpdate bool) (play.SeedPair, error) {
	q := `SELECT ` + seedPairColumns + ` FROM seed_pairs WHERE user_id = $1 AND revealed_at IS NULL`
	if forUpdate {
		if _, err := s.db.Exec(ctx, `SELECT FROM users WHERE id = $1 FOR NO KEY UPDATE`, userID); err != nil {
			return play.SeedPair{}, fmt.Errorf("lock player: %w", err)
		}
		q += ` FOR UPDATE`
	}
	return scanSeedPair(s.db.QueryRow(ctx, q, userID))
}

// InsertSeedPair stores a new active pair unless one exists.
func (s *PlayStore) InsertSeedPair(ctx context.Context, p play.SeedPair) error {
	tag, err := s.db.Exec(ctx, `
		INSERT INTO seed_pairs (id, user_id, server_seed, server_seed_hash, client_seed, nonce, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)
		ON CONFLICT (user_id) WHERE revealed_at IS NULL DO NOTHING`,
		p.ID, p.UserID, p.ServerSeed, p.ServerSeedHash, p.ClientSeed, p.Nonce, p.CreatedAt)
	if err != nil {
		return fmt.Errorf("insert seed pair: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return play.ErrSeedPairExists
	}
	return nil
}

// SetClientSeed changes the active pair's client seed.
func (s *PlayStore) SetClientSeed(ctx context.Context, userID uuid.UUID, clientSeed string) (play.SeedPair, error) {
	return scanSeedPair(s.db.QueryRow(ctx, `
		UPDATE seed_pairs SET client_seed = $2 WHERE user_id = $1 AND revealed_at IS NULL
		RETURNING `+seedPairColumns, userID, clientSeed))
}

// RevealSeedPair marks a pair revealed.
func (s *PlayStore) RevealSeedPair(ctx context.Context, id uuid.UUID, at time.Time) error {
	_, err := s.db.Exec(ctx, `UPDATE seed_pairs SET revealed_at = $2 WHERE id = $1`, id, at)
	if err != nil {
		return fmt.Errorf("reveal seed pair: %w", err)
	}
	return nil
}

// HasActiveGame reports a running stateful game.
func (s *PlayStore) HasActiveGame(ctx context.Context, userID uuid.UUID) (bool, error) {
	var ok bool
	err := s.db.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM bets WHERE user_id = $1 AND status = 'active')`, userID).Scan(&ok)
	return ok, err
}

const betColumns = `b.id, b.user_id, b.game, b.status, b.amount, b.multiplier, b.payout, b.seed_pair_id, b.client_seed,
	b.nonce, b.params, b.state, b.created_at, b.settled_at, ` +
	`p.id, p.user_id, p.server_seed, p.server_seed_hash, p.client_seed, p.nonce, p.created_at, p.revealed_at`

// betScan receives betColumns.
type betScan struct {
	play.BetWithSeeds
	game                 string
	amount, mult, payout int64
}

// targets are the scan targets of betColumns after the bet's id.
func (s *betScan) targets() []any {
	b := &s.BetWithSeeds
	return []any{&b.UserID, &s.game, &b.Status, &s.amount, &s.mult, &s.payout, &b.SeedPairID, &b.ClientSeed,
		&b.Nonce, &b.Params, &b.State, &b.CreatedAt, &b.SettledAt,
		&b.Pair.ID, &b.Pair.UserID, &b.Pair.ServerSeed, &b.Pair.ServerSeedHash, &b.Pair.ClientSeed, &b.Pair.Nonce,
		&b.Pair.CreatedAt, &b.Pair.RevealedAt}
}

func (s *betScan) bet() play.BetWithSeeds {
	b := s.BetWithSeeds
	b.Game, b.Amount, b.Multiplier, b.Payout = play.Game(s.game), money.Amount(s.amount), money.Multiplier(s.mult), money.Amount(s.payout)
	return b
}

func scanBet(row pgx.Row) (play.BetWithSeeds, error) {
	var s betScan
	err := row.Scan(append([]any{&s.ID}, s.targets()...)...)
	if errors.Is(err, pgx.ErrNoRows) {
		return s.BetWithSeeds, play.ErrBetNotFound
	}
	return s.bet(), err
}

// ListBets returns a page of a user's bets, newest first: all of them
// (bets_user_idx) or one game's (bets_user_game_idx, migration 00012).
func (s *PlayStore) ListBets(ctx context.Context, userID uuid.UUID, game play.Game, offset, limit int) ([]play.BetWithSeeds, int, error) {
	var (
		total int
		rows  pgx.Rows
		err   error
	)
	// Separate statements rather than one with "$2 = '' OR game = $2": a
	// generic plan of that could not pick its index by whether a game is
	// given.
	if game == "" {
		err = s.db.QueryRow(ctx, `SELECT count(*) FROM bets WHERE user_id = $1`, userID).Scan(&total)
	} else {
		err = s.db.QueryRow(ctx, `SELECT count(*) FROM bets WHERE user_id = $1 AND game = $2`, userID, string(game)).Scan(&total)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("count bets: %w", err)
	}
	if game == "" {
		rows, err = s.db.Query(ctx, `
			SELECT `+betColumns+` FROM bets b JOIN seed_pairs p ON p.id = b.seed_pair_id
			WHERE b.user_id = $1 ORDER BY b.created_at DESC, b.id DESC OFFSET $2 LIMIT $3`, userID, offset, limit)
	} else {
		rows, err = s.db.Query(ctx, `
			SELECT `+betColumns+` FROM bets b JOIN seed_pairs p ON p.id = b.seed_pair_id
			WHERE b.user_id = $1 AND b.game = $4 ORDER BY b.created_at DESC, b.id DESC OFFSET $2 LIMIT $3`,
			userID, offset, limit, string(game))
	}
	if err != nil {
		return nil, 0, fmt.Errorf("list bets: %w", err)
	}
	bets, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (play.BetWithSeeds, error) { return scanBet(r) })
	return bets, total, err
}

// GetBet returns one of a user's bets.
func (s *PlayStore) GetBet(ctx context.Context, userID, betID uuid.UUID) (play.BetWithSeeds, error) {
	return scanBet(s.db.QueryRow(ctx, `
		SELECT `+betColumns+` FROM bets b JOIN seed_pairs p ON p.id = b.seed_pair_id
		WHERE b.id = $1 AND b.user_id = $2`, betID, userID))
}

// ActiveGames returns a user's running games (served by bets_one_active_key).
func (s *PlayStore) ActiveGames(ctx context.Context, userID uuid.UUID) ([]play.BetWithSeeds, error) {
	rows, err := s.db.Query(ctx, `
		SELECT `+betColumns+` FROM bets b JOIN seed_pairs p ON p.id = b.seed_pair_id
		WHERE b.user_id = $1 AND b.status = 'active' ORDER BY b.game`, userID)
	if err != nil {
		return nil, fmt.Errorf("active games: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (play.BetWithSeeds, error) { return scanBet(r) })
}

// queueCommit queues COMMIT and returns a flag set once Postgres confirms
// it. The confirmation arrives before the batch's final Sync is answered, so
// a connection that breaks after it (and makes the batch fail) still leaves
// the flag telling that the transaction committed. A COMMIT of a failed
// transaction answers ROLLBACK, and one after an error in the batch is never
// run.
func queueCommit(b *pgx.Batch) *bool {
	committed := new(bool)
	b.Queue("COMMIT").Exec(func(tag pgconn.CommandTag) error {
		*committed = tag.String() == "COMMIT"
		return nil
	})
	return committed
}

// id16 passes a uuid to pgx as its 16 bytes: uuid.UUID's driver.Valuer
// would format it as text for every parameter (7% of a bet's server CPU).
func id16(id uuid.UUID) [16]byte { return id }

// PlaceBet runs one bet as one transaction in two round trips. The first
// sends BEGIN with a statement that checks the caller's session, locks the
// player's row (so the balance it reads is the one the debit will change)
// and takes the active seed pair's next nonce. draw decides the outcome from
// the pair in between. The second sends one statement that moves the money
// — stake out, payout in, a ledger entry for each — and records the bet,
// followed by COMMIT. Every refusal rolls back, so a refused bet changes
// nothing, not even the nonce.
func (s *PlayStore) PlaceBet(ctx context.Context, b play.NewBet, draw func(play.SeedPair) (play.Draw, error)) (play.SeedPair, play.Placed, error) {
	var pair play.SeedPair
	var placed play.Placed
	err := s.onConn(ctx, func(conn *pgx.Conn) (err error) {
		pair, placed, err = placeBet(ctx, conn, b, draw)
		return err
	})
	return pair, placed, err
}

// onConn runs fn, which manages its own transaction, on a connection of its
// own, and afterwards rolls back whatever fn left open — refused, failed or
// cut off between round trips — dropping a connection that cannot even do
// that.
func (s *PlayStore) onConn(ctx context.Context, fn func(*pgx.Conn) error) error {
	if _, inTx := s.db.(pgx.Tx); inTx {
		return errors.New("postgres: a two-round-trip transaction cannot run inside another")
	}
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("acquire connection: %w", err)
	}
	defer conn.Release()
	err = fn(conn.Conn())
	if conn.Conn().PgConn().TxStatus() != 'I' {
		if _, rerr := conn.Exec(context.WithoutCancel(ctx), "ROLLBACK"); rerr != nil {
			_ = conn.Conn().Close(context.WithoutCancel(ctx))
		}
	}
	return err
}

// withMaxBalance puts play.MaxBalance into a statement where it says
// :max_balance: a balance above it bets nothing (its status is 'limit').
func withMaxBalance(sql string) string {
	return strings.ReplaceAll(sql, ":max_balance", strconv.FormatInt(int64(play.MaxBalance), 10))
}

// lockBetSQL is the first round trip's statement. $2 NULL skips the session
// check. The player's row is locked FOR NO KEY UPDATE, the lock its balance
// update takes anyway: FOR UPDATE would also block the foreign-key check of
// a seed rotation's new pair, and a rotation holding the old pair would then
// deadlock with this bet's nonce update. It always returns one row: the
// balance is NULL when the session or the player is gone, running is true
// when the player already plays a game of the bet's kind ($5), and the
// pair's columns are NULL when there is no active pair, the stake is above
// the balance, the balance above play.MaxBalance or a game of the kind is
// running (no nonce is taken then). It also reads the player's username
// and hide_username for the live feed.
var lockBetSQL = withMaxBalance(`
	WITH u AS (
		SELECT balance, username, hide_username FROM users
		WHERE id = $1 AND deleted_at IS NULL
		  AND ($2::uuid IS NULL OR EXISTS (
		      SELECT 1 FROM sessions
		      WHERE id = $2 AND user_id = $1 AND revoked_at IS NULL AND last_used_at >= $3))
		FOR NO KEY UPDATE
	), r AS (
		SELECT EXISTS (SELECT 1 FROM bets WHERE user_id = $1 AND game = $5 AND status = 'active') AS running
	), n AS (
		UPDATE seed_pairs SET nonce = nonce + 1
		WHERE user_id = $1 AND revealed_at IS NULL AND (SELECT balance FROM u) >= $4
		  AND (SELECT balance FROM u) <= :max_balance AND NOT (SELECT running FROM r)
		RETURNING ` + seedPairColumns + `
	)
	SELECT (SELECT balance FROM u), (SELECT running FROM r), (SELECT username FROM u), (SELECT hide_username FROM u), n.id, n.user_id, n.server_seed, n.server_seed_hash,
	       n.client_seed, n.nonce, n.created_at, n.revealed_at
	FROM (VALUES (1)) one LEFT JOIN n ON true`)

// settleBetSQL is the second round trip's statement: the debit and the
// credit as one balance change with a ledger entry each (the payout's only
// when there is one), and the bet row.
const settleBetSQL = `
	WITH u AS (
		UPDATE users SET balance = balance - $2::bigint + $3::bigint WHERE id = $1::uuid
		RETURNING balance
	), l AS (
		INSERT INTO ledger_entries (user_id, kind, amount, balance_after, ref_id, note, created_at)
		SELECT $1::uuid, e.kind, e.amount, e.balance_after, $4::uuid, '', $13::timestamptz
		FROM u, LATERAL (VALUES (1, 'bet', -$2::bigint, u.balance - $3), (2, 'payout', $3::bigint, u.balance))
		     AS e(n, kind, amount, balance_after)
		WHERE e.amount <> 0
		ORDER BY e.n
	), b AS (
		INSERT INTO bets (id, user_id, game, status, amount, multiplier, payout, seed_pair_id, client_seed, nonce,
		                  params, state, created_at, settled_at)
		SELECT $4::uuid, $1::uuid, $5::text, $6::text, $2::bigint, $7::bigint, $3::bigint, $8::uuid, $9::text,
		       $10::bigint, $11::jsonb, $12::jsonb, $13::timestamptz, $14::timestamptz FROM u
	)
	SELECT balance FROM u`

func placeBet(ctx context.Context, conn *pgx.Conn, b play.NewBet, draw func(play.SeedPair) (play.Draw, error)) (play.SeedPair, play.Placed, error) {
	var session any
	if b.SessionID != uuid.Nil {
		session = id16(b.SessionID)
	}
	var (
		balance  *int64
		running  bool
		username *string
		hidden   *bool
		pair     nullablePair
		revealed *time.Time
	)
	batch := &pgx.Batch{}
	batch.Queue("BEGIN")
	batch.Queue(lockBetSQL, id16(b.UserID), session, b.LiveSince, int64(b.Stake), string(b.Game)).QueryRow(func(row pgx.Row) error {
		return row.Scan(append(append([]any{&balance, &running, &username, &hidden}, pair.dest()...), &revealed)...)
	})
	if err := conn.SendBatch(ctx, batch).Close(); err != nil {
		return play.SeedPair{}, play.Placed{}, fmt.Errorf("place bet: %w", err)
	}
	p, found := pair.get()
	switch {
	case balance == nil:
		return p, play.Placed{}, play.ErrUserGone
	case *balance > int64(play.MaxBalance):
		return p, play.Placed{}, play.ErrBalanceLimit
	case *balance < int64(b.Stake):
		return p, play.Placed{}, play.ErrInsufficientBalance
	case running:
		return p, play.Placed{}, play.ErrGameInProgress
	case !found:
		return p, play.Placed{}, play.ErrNoSeedPair
	}
	p.RevealedAt = revealed

	d, err := draw(p)
	if err != nil {
		return p, play.Placed{}, err
	}
	var settledAt *time.Time
	if d.Status == play.StatusSettled {
		settledAt = &b.At
	}
	var after int64
	batch = &pgx.Batch{}
	batch.Queue(settleBetSQL, id16(b.UserID), int64(b.Stake), int64(d.Payout), id16(b.ID), string(b.Game), d.Status,
		int64(d.Multiplier), id16(p.ID), p.ClientSeed, p.Nonce, d.Params, d.State, b.At, settledAt).
		QueryRow(func(row pgx.Row) error { return row.Scan(&after) })
	committed := queueCommit(batch)
	err = conn.SendBatch(ctx, batch).Close()
	if err != nil && *committed {
		// The COMMIT went through and only then did the connection break (a
		// Postgres shutdown, say): the bet stands, so answer with it.
		err = nil
	}
	if constraintError(err, codeUniqueViolation) == "bets_one_active_key" {
		return p, play.Placed{}, play.ErrGameInProgress
	}
	if err != nil {
		return p, play.Placed{}, fmt.Errorf("settle bet: %w", err)
	}
	return p, play.Placed{Balance: money.Amount(after), Username: *username, HideUsername: *hidden}, nil
}

// PlayOn runs one action on a running game as one transaction in two round
// trips, like PlaceBet: BEGIN with a statement that checks the session and
// locks the game's row (with its seed pair); apply decides the change; then
// one statement moves the money — an extra stake out, a payout in, each with
// its ledger entry — and saves the bet, followed by COMMIT.
func (s *PlayStore) PlayOn(ctx context.Context, a play.GameAction, apply func(play.BetWithSeeds, money.Amount) (play.Change, error)) (play.Placed, error) {
	var placed play.Placed
	err := s.onConn(ctx, func(conn *pgx.Conn) (err error) {
		placed, err = playOn(ctx, conn, a, apply)
		return err
	})
	return placed, err
}

// liveSessionSQL and lockGameSQL are PlayOn's first round trip: whether the
// session is live ($1 NULL skips the check) with the player's balance,
// username and hide_username (for the live feed), and the game's row locked, if it is the
// player's game of that kind.
const (
	liveSessionSQL = `
	SELECT $1::uuid IS NULL OR EXISTS (
	           SELECT 1 FROM sessions s JOIN users u ON u.id = s.user_id
	           WHERE s.id = $1 AND s.user_id = $2 AND s.revoked_at IS NULL AND s.last_used_at >= $3
	             AND u.deleted_at IS NULL),
	       coalesce((SELECT balance FROM users WHERE id = $2), 0),
	       coalesce((SELECT username FROM users WHERE id = $2), ''),
	       coalesce((SELECT hide_username FROM users WHERE id = $2), false)`
	lockGameSQL = `
	SELECT ` + betColumns + ` FROM bets b JOIN seed_pairs p ON p.id = b.seed_pair_id
	WHERE b.id = $1 AND b.user_id = $2 AND b.game = $3
	FOR UPDATE OF b`
)

// saveGameSQL is PlayOn's second statement. The balance changes only when
// money moves ($2 extra stake, $3 payout), not below zero, and only while
// the bet is active (the first statement's lock keeps it so); the bet is
// saved only if it is active and the money moved. So it changes all or
// nothing, and the COMMIT sent with it needs no decision in between. It
// returns the balance after, whether the money moved and whether the bet was
// saved.
const saveGameSQL = `
	WITH u AS (
		UPDATE users SET balance = balance - $2::bigint + $3::bigint
		WHERE id = $1::uuid AND ($2::bigint <> 0 OR $3::bigint <> 0) AND balance - $2::bigint >= 0
		  AND EXISTS (SELECT 1 FROM bets WHERE id = $4::uuid AND status = 'active')
		RETURNING balance
	), l AS (
		INSERT INTO ledger_entries (user_id, kind, amount, balance_after, ref_id, note, created_at)
		SELECT $1::uuid, e.kind, e.amount, e.balance_after, $4::uuid, '', $11::timestamptz
		FROM u, LATERAL (VALUES (1, 'bet', -$2::bigint, u.balance - $3::bigint), (2, 'payout', $3::bigint, u.balance))
		     AS e(n, kind, amount, balance_after)
		WHERE e.amount <> 0
		ORDER BY e.n
	), b AS (
		UPDATE bets SET status = $5, amount = $6, multiplier = $7, payout = $8, params = $9, state = $10,
		                settled_at = $12
		WHERE id = $4::uuid AND status = 'active'
		  AND (($2::bigint = 0 AND $3::bigint = 0) OR EXISTS (SELECT 1 FROM u))
		RETURNING 1
	)
	SELECT coalesce((SELECT balance FROM u), (SELECT balance FROM users WHERE id = $1::uuid)),
	       ($2::bigint = 0 AND $3::bigint = 0) OR EXISTS (SELECT 1 FROM u),
	       EXISTS (SELECT 1 FROM b)`

func playOn(ctx context.Context, conn *pgx.Conn, a play.GameAction, apply func(play.BetWithSeeds, money.Amount) (play.Change, error)) (play.Placed, error) {
	var session any
	if a.SessionID != uuid.Nil {
		session = id16(a.SessionID)
	}
	var (
		live     bool
		found    bool
		b        play.BetWithSeeds
		balance  int64
		username string
		hidden   bool
	)
	batch := &pgx.Batch{}
	batch.Queue("BEGIN")
	batch.Queue(liveSessionSQL, session, id16(a.UserID), a.LiveSince).QueryRow(func(row pgx.Row) error {
		return row.Scan(&live, &balance, &username, &hidden)
	})
	batch.Queue(lockGameSQL, id16(a.BetID), id16(a.UserID), string(a.Game)).QueryRow(func(row pgx.Row) error {
		var err error
		b, err = scanBet(row)
		if errors.Is(err, play.ErrBetNotFound) {
			return nil
		}
		found = err == nil
		return err
	})
	if err := conn.SendBatch(ctx, batch).Close(); err != nil {
		return play.Placed{}, fmt.Errorf("lock game: %w", err)
	}
	switch {
	case !live:
		return play.Placed{}, play.ErrUserGone
	case !found:
		return play.Placed{}, play.ErrGameNotFound
	}
	c, err := apply(b, money.Amount(balance))
	if err != nil {
		return play.Placed{}, err
	}
	nb := c.Bet
	var (
		after       int64
		moved, kept bool
	)
	batch = &pgx.Batch{}
	batch.Queue(saveGameSQL, id16(a.UserID), int64(c.Stake), int64(c.Payout), id16(nb.ID), nb.Status, int64(nb.Amount),
		int64(nb.Multiplier), int64(nb.Payout), nb.Params, nb.State, a.At, nb.SettledAt).
		QueryRow(func(row pgx.Row) error { return row.Scan(&after, &moved, &kept) })
	committed := queueCommit(batch)
	if err := conn.SendBatch(ctx, batch).Close(); err != nil && !*committed {
		return play.Placed{}, fmt.Errorf("save game: %w", err)
	}
	switch {
	case !moved:
		return play.Placed{}, play.ErrInsufficientBalance
	case !kept:
		return play.Placed{}, play.ErrGameOver
	}
	return play.Placed{Balance: money.Amount(after), Username: username, HideUsername: hidden}, nil
}

// PlaceBetAt places a bet drawn from pair at pair.Nonce in one round trip
// (fairplay_place_bet, migration 00006): it is refused with ErrStalePair,
// changing nothing and returning the active pair as it is now, unless pair
// is still the player's active pair with that client seed and pair.Nonce the
// next nonce. Outside a transaction, concurrent bets go out together (see
// betBatcher).
func (s *PlayStore) PlaceBetAt(ctx context.Context, b play.NewBet, pair play.SeedPair, d play.Draw) (play.Placed, play.SeedPair, error) {
	if s.batch != nil {
		return s.batch.place(ctx, b, pair, d)
	}
	return placeOne(ctx, s.db, b, pair, d)
}

// BetBatches reports how many statements the one-round-trip bets went out
// in since the store was made, how many bets they held, and how many of
// those were placed on their own afterwards (a busy player, a failed batch).
func (s *PlayStore) BetBatches() (statements, bets, alone int64) {
	if s.batch == nil {
		return 0, 0, 0
	}
	return s.batch.batches.Load(), s.batch.bets.Load(), s.batch.alone.Load()
}

// placeOne places one bet with fairplay_place_bet, reading the player's
// username and hide_username in the same statement (for the live feed).
func placeOne(ctx context.Context, db DB, b play.NewBet, pair play.SeedPair, d play.Draw) (play.Placed, play.SeedPair, error) {
	var session any
	if b.SessionID != uuid.Nil {
		session = id16(b.SessionID)
	}
	var settledAt *time.Time
	if d.Status == play.StatusSettled {
		settledAt = &b.At
	}
	var r placeRow
	err := db.QueryRow(ctx, `
		SELECT r.status, r.balance, u.username, u.hide_username, (r.pair).id, (r.pair).user_id, (r.pair).server_seed, (r.pair).server_seed_hash,
		       (r.pair).client_seed, (r.pair).nonce, (r.pair).created_at
		FROM fairplay_place_bet($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16) r LEFT JOIN users u ON u.id = $1`,
		id16(b.UserID), session, b.LiveSince, id16(pair.ID), pair.ClientSeed, pair.Nonce,
		id16(b.ID), string(b.Game), d.Status, int64(b.Stake), int64(d.Multiplier), int64(d.Payout),
		d.Params, d.State, b.At, settledAt).Scan(r.dest()...)
	if constraintError(err, codeUniqueViolation) == "bets_one_active_key" {
		return play.Placed{}, play.SeedPair{}, play.ErrGameInProgress
	}
	if err != nil {
		return play.Placed{}, play.SeedPair{}, fmt.Errorf("place bet: %w", err)
	}
	return r.result()
}
