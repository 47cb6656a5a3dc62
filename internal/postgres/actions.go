package postgres

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/fairplay/fairplay/internal/limits"
	"github.com/fairplay/fairplay/internal/money"
	"github.com/fairplay/fairplay/internal/play"
)

// Game actions in one round trip. Each replica keeps, for the running games
// it has started or acted on, the game's row as its last statement left it
// (gameCache). An action on a game it holds is decided in Go before any
// round trip, from that copy, and saved by one statement (actionSQL) that
// first locks the game's row only if it is still exactly that copy — the
// bet active, its amount, params and state unchanged — then moves the money
// within the player's limits and saves the bet, as the two-round-trip path
// (playOn) does. The row's params are its version: every saved action of a
// running game appends to them (a reveal, a pump, a blackjack action code),
// and the rest of what an action reads (amount, state) is compared too, so
// a copy that matches is the row an action locking it would read. When the
// copy is wrong — another replica acted on the game, this one restarted, or
// two actions of the same game raced and the other won — the statement
// changes nothing and the action runs again on the two-round-trip path,
// which locks the row and reads it as it is: one action out of several
// simultaneous ones goes through as before. The copy holds the pair's
// server seed in memory only; an action's answer is built only after its
// statement has committed.

// maxCachedGames bounds the cache (a copy is a few hundred bytes to a few
// kilobytes: its row's params and state, the pair). A game the player leaves running stays in
// it until a later action ends it or the bound makes room (an arbitrary entry
// goes; its next action takes the two-round-trip path).
const maxCachedGames = 10_000

// cachedGame is a running game as this replica last saved or read it, with
// the player's balance then (what apply is given; an extra stake the balance
// no longer covers is refused by the statement, one it would cover but the
// copy's balance does not is decided again on the locking path).
//
// session is the session whose request last found the game this way, its
// liveness checked by the same statement: only its requests are decided
// from the copy. Another session's (a revoked one, whose access token
// still verifies for up to its lifetime) is checked on the locking path
// before anything is drawn; decided from the copy, a request of a revoked
// session drew the tile or card first and was refused "Token is not valid"
// after it, and the refusal's time told a mine from a gem (a settlement
// and another statement), for free and as often as the player refilled the
// copy from a live session (found by a review playing a hostile player;
// test/security/timing_test.go). The session itself may end after it filed
// the copy; that one refusal is held to a fixed time (goneHold, in play.go).
type cachedGame struct {
	bet     play.BetWithSeeds
	balance money.Amount
	session uuid.UUID
}

type gameCache struct {
	mu    sync.Mutex
	games map[uuid.UUID]cachedGame

	cached, locked atomic.Int64 // actions saved by actionSQL and by the locking path
}

func newGameCache() *gameCache { return &gameCache{games: make(map[uuid.UUID]cachedGame)} }

func (c *gameCache) get(id uuid.UUID) (cachedGame, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	g, ok := c.games[id]
	return g, ok
}

// put remembers a game after a statement that saved or read it for a
// request of session, which it found live; a game that is no longer
// running is forgotten.
func (c *gameCache) put(b play.BetWithSeeds, balance money.Amount, session uuid.UUID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if b.Status != play.StatusActive {
		delete(c.games, b.ID)
		return
	}
	if _, ok := c.games[b.ID]; !ok && len(c.games) >= maxCachedGames {
		for id := range c.games {
			delete(c.games, id)
			break
		}
	}
	c.games[b.ID] = cachedGame{bet: b, balance: balance, session: session}
}

func (c *gameCache) drop(id uuid.UUID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.games, id)
}

// GameActions reports how many game actions since the store was made were
// saved in one round trip from the replica's copy of the game (cached) and
// how many on the locking two-round-trip path (locked: no copy, a stale
// one, or a refusal decided again there).
func (s *PlayStore) GameActions() (cached, locked int64) {
	if s.games == nil {
		return 0, 0
	}
	return s.games.cached.Load(), s.games.locked.Load()
}

// actionSQL saves an action decided from the replica's copy of the game in
// one statement. s is whether the session is live (as liveSessionSQL). g
// locks the game's row if it is the player's running game of that kind and
// still the copy ($16 amount, $17 params, $18 state): FOR UPDATE waits for
// a concurrent action and then checks the row as that left it, so a copy
// overtaken in between locks nothing. y locks the player's row, once g has
// locked the game's, for an action that moves no money (playerLockWhere): it
// waits for the row as one that moves money waits in u. u, l and b are
// saveGameSQL's, each also only when g locked the row. It returns whether
// the session is live, whether the copy held, the balance after, whether the money moved, whether
// the bet was saved, the limits' refusal of an extra stake that did not move
// (NULL: the balance was short), and the player's username and hide_username
// (for the live feed).
const (
	actionSQL = actionSQLStart + `UPDATE bets SET status = $5, amount = $6, multiplier = $7, payout = $8, params = $9,
		                state = $10, settled_at = $12
		WHERE ` + actionSQLEnd
	// actionSameSQL is actionSQL for an action that leaves the bet's status,
	// amount and payout as they are and moves no money ($2 and $3 are zero:
	// a reveal, a pump, a hit). Its update names only the columns it changes,
	// so the stats trigger on bets (bets_stats_update, migration 00004: AFTER
	// UPDATE OF amount, payout, status...) is not even considered, and it
	// saves the bet only if the three are what the action leaves ($5, $6,
	// $8). It has no player's update and no ledger insert, which Postgres
	// would prepare on every execution only to skip (make bench-sql,
	// PGCOST_SCENARIO=actions: 1,176,462 instructions per pump with them,
	// 1,033,500 without); $11, the ledger entries' time, is named all the
	// same, so that both statements take the same arguments.
	actionSameSQL = actionSQLCheck + `), y AS (
		` + playerLockWhere + ` AND EXISTS (SELECT 1 FROM g) FOR NO KEY UPDATE
	), u AS (
		SELECT NULL::bigint AS balance WHERE false AND $11::timestamptz IS NULL
	), b AS (
		UPDATE bets SET multiplier = $7, params = $9, state = $10, settled_at = $12
		WHERE status = $5 AND amount = $6::bigint AND payout = $8::bigint AND ` + actionSQLEnd
	actionSQLStart = actionSQLCheck + `), y AS (
		` + playerLockWhere + ` AND EXISTS (SELECT 1 FROM g) FOR NO KEY UPDATE
	), u AS (
		` + gameMoneySQL + `
		  AND EXISTS (SELECT 1 FROM g)
		RETURNING balance
	), l AS (
		` + gameLedgerSQL + `
	), b AS (
		`
	// actionSQLCheck is both statements' start: s, whether the
	// session is live, and g, the game's row locked if it is still the copy.
	actionSQLCheck = `
	WITH s AS MATERIALIZED (
		SELECT $13::uuid IS NULL OR coalesce((
		           SELECT s.user_id = $1::uuid FROM sessions s JOIN users u ON u.id = s.user_id
		           WHERE s.id = $13::uuid AND s.revoked_at IS NULL
		             AND s.last_used_at >= $14::timestamptz AND u.deleted_at IS NULL), false) AS live
	), g AS (
		SELECT b.id FROM bets b
		WHERE b.id = $4::uuid AND b.user_id = $1::uuid AND b.game = $15 AND b.status = 'active'
		  AND b.amount = $16::bigint AND b.params = $17::jsonb AND b.state = $18::jsonb
		  AND (SELECT live FROM s)
		FOR UPDATE OF b
	`
	actionSQLEnd = `id = $4::uuid AND user_id = $1::uuid AND game = $15 AND status = 'active' AND EXISTS (SELECT 1 FROM g)
		  AND (($2::bigint = 0 AND $3::bigint = 0 AND EXISTS (SELECT 1 FROM y)) OR EXISTS (SELECT 1 FROM u))
		RETURNING 1
	)
	SELECT (SELECT live FROM s),
	       EXISTS (SELECT 1 FROM g),
	       coalesce((SELECT balance FROM u), x.balance, 0),
	       ($2::bigint = 0 AND $3::bigint = 0) OR EXISTS (SELECT 1 FROM u),
	       EXISTS (SELECT 1 FROM b),
	       CASE WHEN $2::bigint <> 0 AND EXISTS (SELECT 1 FROM g) AND NOT EXISTS (SELECT 1 FROM u)
	            THEN ` + lockedRefusalSQL + ` END,
	       coalesce(x.username, ''),
	       coalesce(x.hide_username, false)
	FROM (SELECT) one LEFT JOIN users x ON x.id = $1::uuid`
)

// errStaleGame is playCached's answer when the replica's copy of the game
// cannot decide the action: the caller runs it on the locking path.
var errStaleGame = errors.New("postgres: the cached game is stale")

// playCached runs an action decided from the replica's copy g of the game:
// with other players' actions in one statement (actionBatcher), or, when
// the batch could not run it without waiting for a row, alone
// (playCachedAlone). It returns errStaleGame, having changed nothing, when
// apply refuses the action (decided again, from the row as it is, on the
// locking path) or the copy no longer matches the row; refused tells that
// the statement found the copy right but refused the extra stake (the
// balance short, a limit), with the balance in placed.
func (s *PlayStore) playCached(ctx context.Context, a play.GameAction, g cachedGame,
	apply func(play.BetWithSeeds, play.Funds) (play.Change, error)) (placed play.Placed, saved play.Bet, refused bool, err error) {
	c, err := apply(g.bet, play.Funds{Balance: g.balance})
	if err != nil {
		return play.Placed{}, play.Bet{}, false, errStaleGame
	}
	if s.actions != nil {
		placed, refused, err := s.actions.play(ctx, a, g.bet.Bet, c)
		switch {
		case err == nil:
			return placed, c.Bet, false, nil
		case !errors.Is(err, errPlayerBusy):
			return placed, play.Bet{}, refused, err
		}
	}
	return s.playCachedAlone(ctx, a, g.bet.Bet, c)
}

// playCachedAlone saves an action decided from the copy old of its game in
// one statement of its own (actionSQL, or actionSameSQL when the bet's
// status, amount and payout stay as they are and no money moves), which
// waits for the game's and the player's rows if another transaction holds
// them; its answers are playCached's.
func (s *PlayStore) playCachedAlone(ctx context.Context, a play.GameAction, old play.Bet, c play.Change) (placed play.Placed, saved play.Bet, refused bool, err error) {
	var session any
	if a.SessionID != uuid.Nil {
		session = id16(a.SessionID)
	}
	var (
		live, held, moved, kept bool
		after                   int64
		refusal                 *string
		username                string
		hidden                  bool
	)
	nb := c.Bet
	stmt := actionSQL
	if nb.Status == old.Status && nb.Amount == old.Amount && nb.Payout == old.Payout && c.Stake == 0 && c.Payout == 0 {
		stmt = actionSameSQL
	}
	// BEGIN, the statement and COMMIT go out together: one round trip, and
	// the COMMIT's answer tells whether it committed even if the connection
	// breaks before the batch's end (queueCommit).
	err = s.onConn(ctx, func(conn *pgx.Conn) error {
		batch := &pgx.Batch{}
		batch.Queue("BEGIN")
		batch.Queue(stmt, id16(a.UserID), int64(c.Stake), int64(c.Payout), id16(nb.ID), nb.Status,
			int64(nb.Amount), int64(nb.Multiplier), int64(nb.Payout), nb.Params, nb.State, a.At, nb.SettledAt,
			session, a.LiveSince, string(a.Game), int64(old.Amount), old.Params, old.State).
			QueryRow(func(row pgx.Row) error {
				return row.Scan(&live, &held, &after, &moved, &kept, &refusal, &username, &hidden)
			})
		committed := queueCommit(batch)
		if err := conn.SendBatch(ctx, batch).Close(); err != nil && !*committed {
			return err
		}
		return nil
	})
	if err != nil {
		return play.Placed{}, play.Bet{}, false, fmt.Errorf("save game: %w", err)
	}
	placed = play.Placed{Balance: money.Amount(after), Username: username, HideUsername: hidden}
	switch {
	case !live:
		return play.Placed{}, play.Bet{}, false, play.ErrUserGone
	case !held:
		return play.Placed{}, play.Bet{}, false, errStaleGame
	case !moved && refusal != nil:
		return placed, play.Bet{}, true, limits.Refusal(*refusal)
	case !moved:
		return placed, play.Bet{}, true, play.ErrInsufficientBalance
	case !kept:
		// The row was locked as the copy, active: the save cannot miss it.
		return play.Placed{}, play.Bet{}, false, fmt.Errorf("save game %s: the locked game was not saved", nb.ID)
	}
	return placed, nb, false, nil
}
