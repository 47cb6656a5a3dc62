package postgres

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fairplay/fairplay/internal/limits"
	"github.com/fairplay/fairplay/internal/money"
	"github.com/fairplay/fairplay/internal/play"
)

// PlayStore implements play.Store.
type PlayStore struct {
	pool    *pgxpool.Pool
	db      DB
	batch   *betBatcher    // nil in a transaction
	actions *actionBatcher // nil in a transaction
	games   *gameCache     // nil in a transaction
	log     *slog.Logger   // the batches' failures; nil: none logged
	// hold holds an answer to a fixed time from start (holdFrom; the
	// tests record its calls).
	hold func(ctx context.Context, start time.Time)
}

var _ play.Store = (*PlayStore)(nil)

// NewPlayStore returns a play.Store on pool.
func NewPlayStore(pool *pgxpool.Pool) *PlayStore {
	s := &PlayStore{pool: pool, db: pool, games: newGameCache(), hold: holdFrom}
	s.batch, s.actions = newBetBatcher(s), newActionBatcher(s)
	return s
}

// SetLogger has the failures of the store's batch statements logged to log
// (at most a line per batcher every failureLogEvery). Call it before use.
func (s *PlayStore) SetLogger(log *slog.Logger) { s.log = log }

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

// activeSeedPairSQL reads a player's active pair ($1) as seedPairColumns,
// with the nonce the player's row keeps for it (migration 00028: bets move
// it on there, not in the pair's row).
const activeSeedPairSQL = `SELECT p.id, p.user_id, p.server_seed, p.server_seed_hash, p.client_seed,
		CASE WHEN u.seed_pair = p.id THEN u.seed_nonce ELSE p.nonce END, p.created_at, p.revealed_at
	FROM seed_pairs p JOIN users u ON u.id = p.user_id WHERE p.user_id = $1 AND p.revealed_at IS NULL`

// ActiveSeedPair returns the active pair, optionally locking it. Locking
// takes the player's row first (FOR NO KEY UPDATE, as every bet and every
// change of a pair does), so changes of one player's pair — a rotation, a
// new client seed — run one after another, the pair read after the wait is
// the one the previous change left, and a batch of bets, which holds the
// player's row while it moves the nonce on, is never waited for halfway.
func (s *PlayStore) ActiveSeedPair(ctx context.Context, userID uuid.UUID, forUpdate bool) (play.SeedPair, error) {
	q := activeSeedPairSQL
	if forUpdate {
		if _, err := s.db.Exec(ctx, `SELECT FROM users WHERE id = $1 FOR NO KEY UPDATE`, userID); err != nil {
			return play.SeedPair{}, fmt.Errorf("lock player: %w", err)
		}
		q += ` FOR UPDATE OF p`
	}
	return scanSeedPair(s.db.QueryRow(ctx, q, userID))
}

// InsertSeedPair stores a new active pair unless one exists. The player's
// row is locked first, as every change of a pair does: the pair's trigger
// writes the row (migration 00028), and a rotation or a new client seed
// holding the row while it waits on this insert's pair would otherwise
// deadlock with it.
func (s *PlayStore) InsertSeedPair(ctx context.Context, p play.SeedPair) error {
	tag, err := s.db.Exec(ctx, `
		WITH u AS (SELECT id FROM users WHERE id = $2 FOR NO KEY UPDATE)
		INSERT INTO seed_pairs (id, user_id, server_seed, server_seed_hash, client_seed, nonce, created_at)
		SELECT $1, u.id, $3, $4, $5, $6, $7 FROM u
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

// SetClientSeed changes the active pair's client seed (the player's row
// follows, and the returned nonce is the row's: migration 00028's triggers).
func (s *PlayStore) SetClientSeed(ctx context.Context, userID uuid.UUID, clientSeed string) (play.SeedPair, error) {
	return scanSeedPair(s.db.QueryRow(ctx, `
		UPDATE seed_pairs SET client_seed = $2 WHERE user_id = $1 AND revealed_at IS NULL
		RETURNING `+seedPairColumns, userID, clientSeed))
}

// RevealSeedPair marks a pair revealed; it keeps the nonce it ended at, from
// the player's row (migration 00028's triggers).
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

// betColumns are a bet's columns and its pair's. The pair's nonce is its
// row's: the nonce a revealed pair ended at, but for the active pair the one
// it had when made or last given a client seed (migration 00029 moves it on
// in the player's row). Nothing reads a bet's Pair.Nonce: a bet's fairness
// is its own nonce (b.nonce).
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
// (bets_user_idx) or one game's (bets_user_game_idx, migration 00012). The
// count stops at play.MaxHistory, and offset + limit is at most that, so no
// request reads more than the newest play.MaxHistory entries of the index.
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
		err = s.db.QueryRow(ctx, `SELECT count(*) FROM (SELECT 1 FROM bets WHERE user_id = $1 LIMIT $2) b`,
			userID, play.MaxHistory).Scan(&total)
	} else {
		err = s.db.QueryRow(ctx, `SELECT count(*) FROM (SELECT 1 FROM bets WHERE user_id = $1 AND game = $2 LIMIT $3) b`,
			userID, string(game), play.MaxHistory).Scan(&total)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("count bets: %w", err)
	}
	if limit <= 0 || offset >= total {
		return nil, total, nil
	}
	// The page's ids first, from the index alone (it holds created_at and
	// id), then its rows: the rows a far page skips are never read.
	if game == "" {
		rows, err = s.db.Query(ctx, `
			SELECT `+betColumns+` FROM (
				SELECT id FROM bets WHERE user_id = $1 ORDER BY created_at DESC, id DESC OFFSET $2 LIMIT $3) page
			JOIN bets b ON b.id = page.id JOIN seed_pairs p ON p.id = b.seed_pair_id
			ORDER BY b.created_at DESC, b.id DESC`, userID, offset, limit)
	} else {
		rows, err = s.db.Query(ctx, `
			SELECT `+betColumns+` FROM (
				SELECT id FROM bets WHERE user_id = $1 AND game = $4 ORDER BY created_at DESC, id DESC OFFSET $2 LIMIT $3) page
			JOIN bets b ON b.id = page.id JOIN seed_pairs p ON p.id = b.seed_pair_id
			ORDER BY b.created_at DESC, b.id DESC`, userID, offset, limit, string(game))
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

// rollbackTimeout bounds onConn's rollback of what fn left open.
const rollbackTimeout = 5 * time.Second

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
		// Whatever ended fn, and bounded: a connection that cannot roll
		// back in rollbackTimeout is closed.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), rollbackTimeout)
		defer cancel()
		if _, rerr := conn.Exec(rctx, "ROLLBACK"); rerr != nil {
			_ = conn.Conn().Close(rctx)
		}
	}
	return err
}

// PlayOn runs one action on a running game as one transaction. When this
// replica holds a copy of the game (gameCache) that a request of the same
// session last saved or read (so the session was live), apply decides the action
// from it and one statement saves it if the row is still that copy
// (playCached, in actions.go); otherwise, or when the copy is stale or apply
// refuses it, or when the action is counted (a.Counted: it names the moves
// its caller saw, which the copy may have and the row no longer, and a
// refusal after a draw on the copy would be timed), or when it may stake
// (a.Stakes: the player's limits are read with the player's row locked, so
// none refuses the stake after its card is drawn), the action runs in two
// round trips: BEGIN with a statement
// that checks the session and locks the game's row (with its seed pair) and,
// for an action that stakes, the player's row with their stake headroom;
// apply decides the change; then one statement moves the money — an extra
// stake out, a payout in, each with its ledger entry — and saves the bet,
// followed by COMMIT.
func (s *PlayStore) PlayOn(ctx context.Context, a play.GameAction, apply func(play.BetWithSeeds, play.Funds) (play.Change, error)) (play.Placed, error) {
	ctx, cancel := drawnContext(ctx)
	defer cancel()
	// drewFrom is when apply began on the copy, when it did and the copy
	// then proved stale: a refusal from the locking path after it is held
	// too, as a gone session's refusal of the cached statement is.
	var drewFrom time.Time
	if s.games != nil && !a.Counted && !a.Stakes {
		if g, ok := s.games.get(a.BetID); ok && g.bet.UserID == a.UserID && g.bet.Game == a.Game && g.session == a.SessionID {
			start := time.Now()
			placed, nb, refused, err := s.playCached(ctx, a, g, apply)
			switch {
			case err == nil:
				s.games.cached.Add(1)
				s.games.put(play.BetWithSeeds{Bet: nb, Pair: g.bet.Pair}, placed.Balance, a.SessionID)
				return placed, nil
			case refused:
				// Refused as the row is (the balance short, a limit): the
				// copy holds, with the balance as it is now.
				s.games.cached.Add(1)
				s.games.put(g.bet, placed.Balance, a.SessionID)
				return play.Placed{}, err
			case errors.Is(err, errStaleGame):
				s.games.drop(a.BetID)
				drewFrom = start
			case errors.Is(err, play.ErrUserGone):
				// Drawn on the copy, then refused: the answer waits for a
				// fixed time from the start (goneHold).
				s.games.drop(a.BetID)
				if s.hold != nil {
					s.hold(ctx, start)
				}
				return play.Placed{}, err
			default:
				s.games.drop(a.BetID)
				return play.Placed{}, err
			}
		}
	}
	var (
		placed      play.Placed
		read, saved play.BetWithSeeds
		before      money.Amount
	)
	err := s.onConn(ctx, func(conn *pgx.Conn) (err error) {
		placed, read, saved, before, err = playOn(ctx, conn, a, apply)
		return err
	})
	if s.games != nil {
		s.games.locked.Add(1)
		// The copy is only ever used once actionSQL has found the row
		// unchanged, so a copy that turns out stale costs a round trip, never
		// a wrong answer.
		switch {
		case err == nil:
			s.games.put(saved, placed.Balance, a.SessionID)
		case read.ID == a.BetID:
			s.games.put(read, before, a.SessionID)
		}
	}
	if err != nil && !drewFrom.IsZero() && s.hold != nil {
		// The answer's time holds the draw on the stale copy: a session
		// ended between the cached statement and this path's check (or a
		// game ended elsewhere) must not show what the copy drew.
		s.hold(ctx, drewFrom)
	}
	return placed, err
}

// goneHold is how long from its start an action decided from a replica's
// copy is answered when its statement then finds the session no longer live.
// The copy is used only by the session that last found it live, but that
// session can be ended after (a logout, a revocation from another device)
// while its access token still verifies: its next action is drawn from the
// copy before the statement checks the session, and the work of the draw
// differs by outcome (a Mines reveal allocates 20 times on a gem and 32 on a
// mine, with the settlement; Pump 17 and 25). The copy is dropped with the
// refusal, so each sign-in allows one such probe, or a few sent at once
// (each reads the copy before the first drops it); its answer is held to
// the next whole multiple of goneHold from the action's start, far above
// that work (a few µs) and the statement's round trip, so its time tells
// nothing of the draw — even a statement slowed past goneHold (by many
// probes at once) only moves the answer to the next multiple (found by
// reviews playing a hostile player; TestRefusalOfAGoneSessionIsHeld). So is
// any refusal of the locking path after a copy that proved stale: a
// session ended between the cached statement and the locking path's check
// is refused there before a draw, but after the copy's
// (TestRefusalAfterAStaleCopyIsHeld). Only the actions of a session ended
// after its last action, and the rare refusal after a stale copy, wait.
const goneHold = 20 * time.Millisecond

// heldUntil is when an answer held from start is given, at now: the first
// whole multiple of goneHold after start that is later than now.
func heldUntil(start, now time.Time) time.Time {
	return start.Add((now.Sub(start)/goneHold + 1) * goneHold)
}

// holdFrom waits until heldUntil(start, now), or ctx's end.
func holdFrom(ctx context.Context, start time.Time) {
	t := time.NewTimer(time.Until(heldUntil(start, time.Now())))
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// liveSessionSQL and lockGameSQL are PlayOn's first round trip: whether the
// session is live ($1 NULL skips the check) with the player's balance,
// username and hide_username (for the live feed), and the game's row locked, if it is the
// player's game of that kind. The session is found by its id alone and
// its player compared after: a generic plan of "s.id = $1 AND s.user_id =
// $2" may take the player's index of live sessions and filter every one of
// them (TestGameActionsReadOnlyTheirGame; actionSQLStart's check likewise).
const (
	liveSessionSQL = `
	SELECT $1::uuid IS NULL OR coalesce((
	           SELECT s.user_id = $2 FROM sessions s JOIN users u ON u.id = s.user_id
	           WHERE s.id = $1 AND s.revoked_at IS NULL AND s.last_used_at >= $3
	             AND u.deleted_at IS NULL), false),
	       coalesce(x.balance, 0), coalesce(x.username, ''), coalesce(x.hide_username, false)
	FROM (SELECT) one LEFT JOIN users x ON x.id = $2`
	lockGameSQL = `
	SELECT ` + betColumns + ` FROM bets b JOIN seed_pairs p ON p.id = b.seed_pair_id
	WHERE b.id = $1 AND b.user_id = $2 AND b.game = $3
	FOR UPDATE OF b`
	// lockFundsSQL is the first round trip's third statement for an action
	// that may stake (GameAction.Stakes): it locks the player's row after
	// the game's, the order every action's save takes them in, and reads
	// the balance and the stake headroom (fairplay_stake_headroom,
	// migration 00025) as they will be at the save. Nothing else changes
	// them before the COMMIT, so the save's own check (gameMoneySQL) can
	// refuse nothing the headroom let through, and every refusal of the
	// stake is decided before the card is drawn.
	lockFundsSQL = `SELECT u.deleted_at IS NULL, u.balance, fairplay_stake_headroom(u) FROM users u WHERE u.id = $1
		FOR NO KEY UPDATE`
	// stakeRefusalSQL names the rule that refuses a stake above the
	// headroom ($2), on the row lockFundsSQL locked.
	stakeRefusalSQL = `SELECT fairplay_stake_refusal(u, $2::bigint) FROM users u WHERE u.id = $1`
)

// gameMoneySQL and gameLedgerSQL move a game action's money, the one
// definition for both statements that save an action (saveGameSQL and
// actionSQL, each adding what makes the row theirs to change): the balance
// changes only when money moves ($2 extra stake, $3 payout), not below zero,
// an extra stake only within the player's own limits (fairplay_stake_refusal,
// migration 00018: the rule as one call, prepared only when an action
// stakes), with the play_* counts; then the ledger entry of each amount that
// is not zero. $1 is the player, $4 the bet, $11 the time.
const (
	gameMoneySQL = `UPDATE users SET balance = balance - $2::bigint + $3::bigint,
			play_day = greatest(play_day, date_trunc('day', now(), 'UTC')),
			play_day_wagered = fairplay_usage('day', play_day, play_day_wagered, $2::bigint),
			play_day_lost = fairplay_usage('day', play_day, play_day_lost, $2::bigint - $3::bigint),
			play_week = greatest(play_week, date_trunc('week', now(), 'UTC')),
			play_week_wagered = fairplay_usage('week', play_week, play_week_wagered, $2::bigint),
			play_week_lost = fairplay_usage('week', play_week, play_week_lost, $2::bigint - $3::bigint),
			play_month = greatest(play_month, date_trunc('month', now(), 'UTC')),
			play_month_wagered = fairplay_usage('month', play_month, play_month_wagered, $2::bigint),
			play_month_lost = fairplay_usage('month', play_month, play_month_lost, $2::bigint - $3::bigint)
		WHERE id = $1::uuid AND ($2::bigint <> 0 OR $3::bigint <> 0) AND balance - $2::bigint >= 0
		  AND ($2::bigint = 0 OR fairplay_stake_refusal(users, $2::bigint) IS NULL)`
	gameLedgerSQL = `INSERT INTO ledger_entries (user_id, kind, amount, balance_after, ref_id, note, created_at)
		SELECT $1::uuid, e.kind, e.amount, e.balance_after, $4::uuid, '', $11::timestamptz
		FROM u, LATERAL (VALUES (1, 'bet', -$2::bigint, u.balance - $3::bigint), (2, 'payout', $3::bigint, u.balance))
		     AS e(n, kind, amount, balance_after)
		WHERE e.amount <> 0
		ORDER BY e.n`
)

// saveGameSQL is PlayOn's second statement. The money moves as gameMoneySQL
// says (an extra stake within the player's own limits: fairplay_play_refusal,
// migration 00015, the rule a bet's stake meets, called through
// fairplay_stake_refusal) and only while the bet is
// active (the first statement's lock keeps it so); the bet is saved only if
// it is active and the money moved, or, when none moves, once it holds the
// player's row (y, playerLockSQL). So it changes all or nothing, and the
// COMMIT sent with it needs no decision in between. It returns the balance after, whether
// the money moved, whether the bet was saved and, when an extra stake did
// not move, the player's limits' refusal (NULL: the balance was short).
const saveGameSQL = `
	WITH y AS (
		` + playerLockSQL + `
	), u AS (
		` + gameMoneySQL + `
		  AND EXISTS (SELECT 1 FROM bets WHERE id = $4::uuid AND user_id = $1::uuid AND status = 'active')
		RETURNING balance
	), l AS (
		` + gameLedgerSQL + `
	), b AS (
		UPDATE bets SET status = $5, amount = $6, multiplier = $7, payout = $8, params = $9, state = $10,
		                settled_at = $12
		WHERE id = $4::uuid AND user_id = $1::uuid AND status = 'active'
		  AND (($2::bigint = 0 AND $3::bigint = 0 AND EXISTS (SELECT 1 FROM y)) OR EXISTS (SELECT 1 FROM u))
		RETURNING 1
	)
	SELECT coalesce((SELECT balance FROM u), x.balance),
	       ($2::bigint = 0 AND $3::bigint = 0) OR EXISTS (SELECT 1 FROM u),
	       EXISTS (SELECT 1 FROM b),
	       CASE WHEN $2::bigint <> 0 AND NOT EXISTS (SELECT 1 FROM u) THEN ` + lockedRefusalSQL + ` END
	FROM (SELECT) one LEFT JOIN users x ON x.id = $1::uuid`

// playerLockSQL locks the player's row ($1) for an action that moves no
// money ($2 and $3 zero; one that does waits for the row in its update,
// gameMoneySQL): every action waits for the player's row the same way, so
// neither its answer nor when it comes depends on whether what it drew
// moves money (a blackjack hit that busts a split's second hand ends the
// round and pays the first; a small card moves nothing). The batch locks
// the row of every action it holds likewise (migration 00023;
// TestActionSavedWhateverItDrew).
//
// The statements that lock a game's row themselves first (actionSQL,
// actionSameSQL) add that condition to playerLockWhere, then the lock.
const (
	playerLockWhere = `SELECT 1 FROM users WHERE id = $1::uuid AND $2::bigint = 0 AND $3::bigint = 0`
	playerLockSQL   = playerLockWhere + ` FOR NO KEY UPDATE`
)

// lockedRefusalSQL is why an extra stake ($2) that did not move (u is
// empty) was refused, if a rule refused it: decided on the player's row as
// it is once locked, as gameMoneySQL's update decided, not on the
// statement's snapshot of it. A rule set while the update waited for the
// row (a self-exclusion committed meanwhile) refused the stake there, and
// the snapshot, which predates it, would name none: the player would hear
// "Insufficient balance". Evaluated only for a refused or short stake.
const lockedRefusalSQL = `(SELECT fairplay_stake_refusal(y, $2::bigint) FROM users y WHERE y.id = $1::uuid
	     FOR NO KEY UPDATE OF y)`

// playOn is PlayOn's two-round-trip path. Besides the player's side it
// returns the game's row as it read it (zero when not found) and the
// player's balance then, and the game as saved.
func playOn(ctx context.Context, conn *pgx.Conn, a play.GameAction, apply func(play.BetWithSeeds, play.Funds) (play.Change, error)) (
	placed play.Placed, read, saved play.BetWithSeeds, before money.Amount, err error) {
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
	var (
		headroom *int64
		present  bool
	)
	if a.Stakes {
		batch.Queue(lockFundsSQL, id16(a.UserID)).QueryRow(func(row pgx.Row) error {
			err := row.Scan(&present, &balance, &headroom)
			if errors.Is(err, pgx.ErrNoRows) {
				return nil // no player: refused below
			}
			return err
		})
	}
	if err := conn.SendBatch(ctx, batch).Close(); err != nil {
		return play.Placed{}, read, saved, 0, fmt.Errorf("lock game: %w", err)
	}
	switch {
	case !live, a.Stakes && !present: // deleted since the session's check, too
		return play.Placed{}, read, saved, 0, play.ErrUserGone
	case !found:
		return play.Placed{}, read, saved, 0, play.ErrGameNotFound
	}
	read, before = b, money.Amount(balance)
	funds := play.Funds{Balance: before, Locked: a.Stakes}
	if headroom != nil {
		funds.Capped, funds.Headroom = true, money.Amount(*headroom)
	}
	c, err := apply(b, funds)
	if over := (*play.OverLimitsError)(nil); errors.As(err, &over) {
		return play.Placed{}, read, saved, before, stakeRefusal(ctx, conn, a.UserID, over.Stake)
	}
	if err != nil {
		return play.Placed{}, read, saved, before, err
	}
	nb := c.Bet
	var (
		after       int64
		moved, kept bool
		refusal     *string
	)
	batch = &pgx.Batch{}
	batch.Queue(saveGameSQL, id16(a.UserID), int64(c.Stake), int64(c.Payout), id16(nb.ID), nb.Status, int64(nb.Amount),
		int64(nb.Multiplier), int64(nb.Payout), nb.Params, nb.State, a.At, nb.SettledAt).
		QueryRow(func(row pgx.Row) error { return row.Scan(&after, &moved, &kept, &refusal) })
	committed := queueCommit(batch)
	if err := conn.SendBatch(ctx, batch).Close(); err != nil && !*committed {
		return play.Placed{}, read, saved, before, fmt.Errorf("save game: %w", err)
	}
	switch {
	case !moved && refusal != nil:
		return play.Placed{}, read, saved, money.Amount(after), limits.Refusal(*refusal)
	case !moved:
		return play.Placed{}, read, saved, money.Amount(after), play.ErrInsufficientBalance
	case !kept:
		return play.Placed{}, read, saved, before, play.ErrGameOver
	}
	saved = play.BetWithSeeds{Bet: nb, Pair: b.Pair}
	return play.Placed{Balance: money.Amount(after), Username: username, HideUsername: hidden}, read, saved, before, nil
}

// stakeRefusal is the player's rule that refuses stake, which apply found
// above their headroom before drawing anything.
func stakeRefusal(ctx context.Context, conn *pgx.Conn, user uuid.UUID, stake money.Amount) error {
	var refusal *string
	if err := conn.QueryRow(ctx, stakeRefusalSQL, id16(user), int64(stake)).Scan(&refusal); err != nil {
		return fmt.Errorf("stake refusal: %w", err)
	}
	if refusal == nil {
		return fmt.Errorf("stake refusal: a stake of %s above the headroom breaks no rule", stake)
	}
	return limits.Refusal(*refusal)
}

// drawnTimeout bounds saving a bet or an action once it is drawn (or about
// to be): above betBatchTimeout, so a batch's own bound ends it first.
const drawnTimeout = 20 * time.Second

// drawnContext is the context a bet or a game action is saved under once
// the server has it (PlaceBetAt, with its outcome drawn; PlayOn, which draws
// it): the caller's values (its trace, its request id) without its
// cancellation, bounded by drawnTimeout. The caller's cancellation is the
// player's to time: a deadline to the nanosecond (Connect-Timeout-Ms,
// grpc-timeout) or a hang-up. And a draw's work can differ by outcome (a
// Mines reveal that finds a mine settles the game, a gem does not; Pump
// alike). Had the cancellation stopped the save — a bet or an action
// waiting for its batch is dropped when its caller gives up, a statement
// of the locking path is cancelled — a player could keep the moves that
// were quick to draw and throw back the others for free (nothing saved, no
// nonce moved, the game as it was), and so learn a tile before it counts.
// Found by a review playing a hostile player; test/security's
// TestDrawnActionSavedWhenThePlayerGivesUp and this package's
// TestSavedWhenTheCallerGivesUpAfterTheDraw.
func drawnContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), drawnTimeout)
}

// PlaceBetAt places a bet drawn from pair at pair.Nonce in one round trip
// (fairplay_place_bets, migration 00013): it is refused with ErrStalePair,
// changing nothing and returning the active pair as it is now, unless pair
// is still the player's active pair with that client seed and pair.Nonce the
// next nonce. Outside a transaction, concurrent bets go out together (see
// betBatcher).
func (s *PlayStore) PlaceBetAt(ctx context.Context, b play.NewBet, pair play.SeedPair, d play.Draw) (play.Placed, play.SeedPair, error) {
	ctx, cancel := drawnContext(ctx)
	defer cancel()
	if s.batch == nil {
		return placeOne(ctx, s.db, b, pair, d)
	}
	placed, now, err := s.batch.place(ctx, b, pair, d)
	if err == nil && d.Status == play.StatusActive {
		// A game started: its first action can go in one round trip.
		s.games.put(play.BetWithSeeds{Bet: play.Bet{
			ID: b.ID, UserID: b.UserID, Game: b.Game, Status: d.Status, Amount: b.Stake, Multiplier: d.Multiplier,
			Payout: d.Payout, SeedPairID: pair.ID, ClientSeed: pair.ClientSeed, Nonce: pair.Nonce, Params: d.Params,
			State: d.State, CreatedAt: b.At,
		}, Pair: pair}, placed.Balance, b.SessionID)
	}
	return placed, now, err
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

// BatchTime is how long the batch statements of bets and of game actions
// have taken since the store was made, each kind summed: from asking the
// pool for a connection (a wait for one counts) to reading the last answer,
// counted when the statement ends. Over a span of time, its growth divided
// by the span is how many statements of the kind ran at once on average
// (the bets' batches run at most maxBetBatches at a time): at the limit,
// a batch's latency bounds the bets a second.
func (s *PlayStore) BatchTime() (bets, actions time.Duration) {
	if s.batch != nil {
		bets = time.Duration(s.batch.busy.Load())
	}
	if s.actions != nil {
		actions = time.Duration(s.actions.busy.Load())
	}
	return bets, actions
}

// placeOne places one bet on its own: a batch of one that waits for the
// player's row (fairplay_place_bets with p_wait).
func placeOne(ctx context.Context, db DB, b play.NewBet, pair play.SeedPair, d play.Draw) (play.Placed, play.SeedPair, error) {
	q := &queuedBet{ctx: ctx, bet: b, pair: pair, draw: d}
	results, err := placeMany(ctx, db, []*queuedBet{q}, true)
	if constraintError(err, codeUniqueViolation) == "bets_one_active_key" {
		return play.Placed{}, play.SeedPair{}, play.ErrGameInProgress
	}
	if err != nil {
		return play.Placed{}, play.SeedPair{}, fmt.Errorf("place bet: %w", err)
	}
	r := results[0]
	if errors.Is(r.err, errPlayerBusy) {
		// A bet that waited for its rows is never busy.
		return play.Placed{}, play.SeedPair{}, fmt.Errorf("place bet: %w", r.err)
	}
	return r.placed, r.now, r.err
}
