package postgres

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fairplay/fairplay/internal/accounts"
	"github.com/fairplay/fairplay/internal/admin"
	"github.com/fairplay/fairplay/internal/money"
)

// AdminStore implements admin.Store.
//
// The statistics read the rollups of migration 00004 (user_stats_*,
// bet_stats_*), which triggers keep exact in the same transaction as every
// write to users and bets — for bets through bet_stats_pending (migration
// 00005), whose rows readers add to the rollups until FoldBetStatsEvery
// moves them in. A time window is cut into whole UTC days (daily
// rows), whole hours (hourly rows) and the partial hours at its two ends
// (users or bets through their created_at indexes); see spans. Totals sum a
// handful of rows (one per game and shard).
type AdminStore struct {
	pool *pgxpool.Pool
	db   DB
}

// NewAdminStore returns an admin.Store on pool.
func NewAdminStore(pool *pgxpool.Pool) *AdminStore {
	return &AdminStore{pool: pool, db: pool}
}

var _ admin.Store = (*AdminStore)(nil)

// InTx runs fn with a store bound to one transaction (or the current one).
func (s *AdminStore) InTx(ctx context.Context, fn func(admin.Store) error) error {
	if _, inTx := s.db.(pgx.Tx); inTx {
		return fn(s)
	}
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		return fn(&AdminStore{pool: s.pool, db: tx})
	})
}

// serial runs fn in a read-only transaction without parallel workers. The
// statistics queries read a few thousand rows in about a millisecond, but
// their estimated cost is high enough for the planner to start parallel
// workers, whose start-up costs tens of milliseconds on a busy server.
func (s *AdminStore) serial(ctx context.Context, fn func(DB) error) error {
	return s.readWith(ctx, fn, "max_parallel_workers_per_gather = 0")
}

// readWith runs fn in a read-only transaction with planner settings (SET
// LOCAL, so they end with it; inside a caller's transaction, a savepoint, and
// they last until that transaction ends).
func (s *AdminStore) readWith(ctx context.Context, fn func(DB) error, settings ...string) error {
	run := func(tx pgx.Tx) error {
		for _, set := range settings {
			if _, err := tx.Exec(ctx, `SET LOCAL `+set); err != nil {
				return err
			}
		}
		return fn(tx)
	}
	if tx, ok := s.db.(pgx.Tx); ok {
		return pgx.BeginFunc(ctx, tx, run)
	}
	return pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{AccessMode: pgx.ReadOnly}, run)
}

// span is a part of a window: whole buckets [from, to) of a rollup table
// (suffix "daily" or "hourly"), or base rows [from, to) when suffix is "".
type span struct {
	from, to time.Time
	suffix   string
}

// levels are the rollups' bucket widths, coarsest first. Buckets are
// absolute UTC days and hours, as fairplay_stats_bucket bins them (and as
// time.Truncate cuts, counting from the zero time).
var levels = []struct {
	width  time.Duration
	suffix string
}{{24 * time.Hour, "daily"}, {time.Hour, "hourly"}}

// spans cuts p into the whole days inside it, the whole hours of its partial
// first and last days, and the partial first and last hours, read from the
// base table. So any window costs at most a few thousand rollup rows and two
// hours of bets, however long it is.
func spans(p admin.Period) []span { return cut(p.From, p.To, 0) }

func cut(from, to time.Time, level int) []span {
	if !from.Before(to) {
		return nil
	}
	if level == len(levels) {
		return []span{{from: from, to: to}}
	}
	w := levels[level].width
	first, last := from.Truncate(w), to.Truncate(w)
	if first.Before(from) {
		first = first.Add(w)
	}
	if !first.Before(last) { // no whole bucket inside
		return cut(from, to, level+1)
	}
	out := cut(from, first, level+1)
	out = append(out, span{from: first, to: last, suffix: levels[level].suffix})
	return append(out, cut(last, to, level+1)...)
}

// query collects a UNION ALL statement's parts and arguments. The
// statements run with pgx.QueryExecModeExec, planned for their actual bounds
// each time (well under a millisecond): a cached generic plan guesses the
// ranges' sizes, and its guesses (parallel scans of large ranges) made these
// sub-millisecond queries take tens of milliseconds.
type query struct {
	parts []string
	args  []any
}

func (q *query) arg(v any) string {
	q.args = append(q.args, v)
	return fmt.Sprintf("$%d", len(q.args))
}

// UserCounts counts live users in total and created in each period.
func (s *AdminStore) UserCounts(ctx context.Context, periods []admin.Period) (int64, []int64, error) {
	var q query
	q.parts = append(q.parts, `SELECT -1 AS p, coalesce(sum(users), 0) AS n FROM user_stats_total`)
	for i, p := range periods {
		for _, sp := range spans(p) {
			if sp.suffix != "" {
				q.parts = append(q.parts, fmt.Sprintf(`SELECT %d, coalesce(sum(users), 0) FROM user_stats_%s WHERE bucket >= %s AND bucket < %s`,
					i, sp.suffix, q.arg(sp.from), q.arg(sp.to)))
			} else {
				q.parts = append(q.parts, fmt.Sprintf(`SELECT %d, count(*) FROM users WHERE created_at >= %s AND created_at < %s AND deleted_at IS NULL`,
					i, q.arg(sp.from), q.arg(sp.to)))
			}
		}
	}
	var total int64
	counts := make([]int64, len(periods))
	err := s.serial(ctx, func(db DB) error {
		rows, err := db.Query(ctx, `SELECT p, sum(n)::bigint FROM (`+strings.Join(q.parts, "\nUNION ALL ")+`) x GROUP BY p`,
			append([]any{pgx.QueryExecModeExec}, q.args...)...)
		if err != nil {
			return err
		}
		var p int
		var n int64
		_, err = pgx.ForEachRow(rows, []any{&p, &n}, func() error {
			if p < 0 {
				total = n
			} else {
				counts[p] = n
			}
			return nil
		})
		return err
	})
	if err != nil {
		return 0, nil, fmt.Errorf("count users: %w", err)
	}
	return total, counts, nil
}

// BetFigures sums bets by game in total and placed in each period.
func (s *AdminStore) BetFigures(ctx context.Context, periods []admin.Period) (admin.ByGame, []admin.ByGame, error) {
	var q query
	q.parts = append(q.parts, `SELECT -1 AS p, game, bets, wagered, settled_wagered, paid_out FROM bet_stats_total`,
		`SELECT -1, game, bets, wagered, settled_wagered, paid_out FROM bet_stats_pending`)
	// The differences not yet folded into the rollups count in every rollup
	// span they fall in: one pass over the (small) pending table.
	var pendP []int32
	var pendFrom, pendTo []time.Time
	for i, p := range periods {
		for _, sp := range spans(p) {
			if sp.suffix != "" {
				q.parts = append(q.parts, fmt.Sprintf(`SELECT %d, game, bets, wagered, settled_wagered, paid_out
					FROM bet_stats_%s WHERE bucket >= %s AND bucket < %s`, i, sp.suffix, q.arg(sp.from), q.arg(sp.to)))
				pendP, pendFrom, pendTo = append(pendP, int32(i)), append(pendFrom, sp.from), append(pendTo, sp.to)
			} else {
				q.parts = append(q.parts, fmt.Sprintf(`SELECT %d, game, count(*), sum(amount),
					coalesce(sum(amount) FILTER (WHERE status = 'settled'), 0), sum(payout)
					FROM bets WHERE created_at >= %s AND created_at < %s GROUP BY game`, i, q.arg(sp.from), q.arg(sp.to)))
			}
		}
	}
	if len(pendP) > 0 {
		q.parts = append(q.parts, fmt.Sprintf(`SELECT s.p, b.game, b.bets, b.wagered, b.settled_wagered, b.paid_out
			FROM bet_stats_pending b JOIN unnest(%s::int[], %s::timestamptz[], %s::timestamptz[]) AS s (p, f, t)
			  ON b.created_at >= s.f AND b.created_at < s.t`, q.arg(pendP), q.arg(pendFrom), q.arg(pendTo)))
	}
	total := admin.ByGame{}
	per := make([]admin.ByGame, len(periods))
	for i := range per {
		per[i] = admin.ByGame{}
	}
	var (
		p                         int
		game                      string
		bets                      int64
		wagered, settled, paidOut string
	)
	err := s.serial(ctx, func(db DB) error {
		rows, err := db.Query(ctx, `
			SELECT p, game, sum(bets)::bigint, sum(wagered)::text, sum(settled_wagered)::text, sum(paid_out)::text
			FROM (`+strings.Join(q.parts, "\nUNION ALL ")+`) x GROUP BY p, game`, append([]any{pgx.QueryExecModeExec}, q.args...)...)
		if err != nil {
			return err
		}
		_, err = pgx.ForEachRow(rows, []any{&p, &game, &bets, &wagered, &settled, &paidOut}, func() error {
			f := admin.Figures{Bets: bets}
			var err error
			if f.Wagered, err = parseTotal(wagered); err != nil {
				return err
			}
			if f.SettledWagered, err = parseTotal(settled); err != nil {
				return err
			}
			if f.PaidOut, err = parseTotal(paidOut); err != nil {
				return err
			}
			if p < 0 {
				total[game] = f
			} else {
				per[p][game] = f
			}
			return nil
		})
		return err
	})
	if err != nil {
		return nil, nil, fmt.Errorf("sum bets: %w", err)
	}
	return total, per, nil
}

// parseTotal reads a numeric sum of money units (an integer).
func parseTotal(s string) (admin.Total, error) {
	v, ok := new(big.Int).SetString(s, 10)
	if !ok {
		return admin.Total{}, fmt.Errorf("parse money sum %q", s)
	}
	return admin.TotalOf(v), nil
}

// ActivePlayers counts distinct bettors in p.
func (s *AdminStore) ActivePlayers(ctx context.Context, p admin.Period) (int64, error) {
	var n int64
	err := s.db.QueryRow(ctx, `SELECT count(DISTINCT user_id) FROM bets WHERE created_at >= $1 AND created_at < $2`,
		p.From, p.To).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count active players: %w", err)
	}
	return n, nil
}

// userMatch is the search condition; the trigram indexes of migration 00004
// serve it (they are partial on deleted_at IS NULL, like the condition).
// Search queries run with pgx.QueryExecModeExec, planned for their actual
// pattern every time: a cached generic plan cannot tell "%al%" (no trigram,
// matches a third of all users) from "%48213%" (a few) and picks badly.
const userMatch = `(lower(username) LIKE lower($1) OR lower(email) LIKE lower($1))`

// fewMatches is the number of matches up to which a search page is cut from
// all the matches (found through the trigram indexes, then sorted); with more,
// walking users_live_created_idx until a page is full is cheaper. The planner
// cannot tell the two apart (it guesses a LIKE's selectivity), the count can.
const fewMatches = 2000

// ListUsers returns a page of live users, newest first, and the match count.
// The count of an unfiltered list comes from the user rollup, not count(*);
// a search counts at most q.CountLimit + 1 matches when CountLimit is set.
func (s *AdminStore) ListUsers(ctx context.Context, q admin.UserQuery) ([]accounts.User, int64, error) {
	var total int64
	var err error
	switch {
	case q.Pattern == "":
		err = s.db.QueryRow(ctx, `SELECT coalesce(sum(users), 0)::bigint FROM user_stats_total`).Scan(&total)
	case q.CountLimit > 0:
		err = s.db.QueryRow(ctx, `SELECT count(*) FROM (SELECT 1 FROM users WHERE deleted_at IS NULL AND `+userMatch+` LIMIT $2) m`,
			pgx.QueryExecModeExec, q.Pattern, q.CountLimit+1).Scan(&total)
	default:
		err = s.db.QueryRow(ctx, `SELECT count(*) FROM users WHERE deleted_at IS NULL AND `+userMatch,
			pgx.QueryExecModeExec, q.Pattern).Scan(&total)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("count users: %w", err)
	}
	if q.Offset >= total {
		return []accounts.User{}, total, nil
	}
	var rows pgx.Rows
	switch {
	case q.Pattern == "":
		// The page's ids come from an index-only scan of
		// users_live_created_idx, so a deep offset skips index entries, not
		// table rows; only the page's rows are then read.
		rows, err = s.db.Query(ctx, `
			SELECT `+userColumns+` FROM users WHERE id IN (
				SELECT id FROM users WHERE deleted_at IS NULL ORDER BY created_at DESC, id DESC OFFSET $1 LIMIT $2)
			ORDER BY created_at DESC, id DESC`, q.Offset, q.Limit)
	case total <= fewMatches:
		rows, err = s.db.Query(ctx, `
			WITH m AS MATERIALIZED (SELECT id, created_at FROM users WHERE deleted_at IS NULL AND `+userMatch+`)
			SELECT `+userColumns+` FROM users WHERE id IN (
				SELECT id FROM m ORDER BY created_at DESC, id DESC OFFSET $2 LIMIT $3)
			ORDER BY created_at DESC, id DESC`, pgx.QueryExecModeExec, q.Pattern, q.Offset, q.Limit)
	default:
		// Many matches: walk users_live_created_idx until the page is full.
		// The planner underestimates such LIKEs and would rather collect and
		// sort every match through the trigram indexes, which GIN can only do
		// with a bitmap scan; switching those off leaves it the walk.
		var users []accounts.User
		err = s.readWith(ctx, func(db DB) error {
			rows, err := db.Query(ctx, `SELECT `+userColumns+` FROM users WHERE deleted_at IS NULL AND `+userMatch+`
				ORDER BY created_at DESC, id DESC OFFSET $2 LIMIT $3`, pgx.QueryExecModeExec, q.Pattern, q.Offset, q.Limit)
			if err != nil {
				return err
			}
			users, err = collectUsers(rows)
			return err
		}, "enable_bitmapscan = off")
		if err != nil {
			return nil, 0, fmt.Errorf("list users: %w", err)
		}
		return users, total, nil
	}
	if err != nil {
		return nil, 0, fmt.Errorf("list users: %w", err)
	}
	users, err := collectUsers(rows)
	if err != nil {
		return nil, 0, fmt.Errorf("list users: %w", err)
	}
	return users, total, nil
}

func collectUsers(rows pgx.Rows) ([]accounts.User, error) {
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (accounts.User, error) {
		c, err := scanCredentials(r)
		return c.User, err
	})
}

// LockLiveUser reads and locks a live user.
func (s *AdminStore) LockLiveUser(ctx context.Context, id uuid.UUID) (accounts.User, error) {
	c, err := scanCredentials(s.db.QueryRow(ctx, `
		SELECT `+userColumns+` FROM users WHERE id = $1 AND deleted_at IS NULL FOR UPDATE`, id))
	if err != nil && !errors.Is(err, accounts.ErrUserNotFound) {
		return accounts.User{}, fmt.Errorf("lock user: %w", err)
	}
	return c.User, err
}

// LockAdmins locks the live administrators in id order (one order for all
// callers, so two of them never deadlock).
func (s *AdminStore) LockAdmins(ctx context.Context) ([]uuid.UUID, error) {
	rows, err := s.db.Query(ctx, `SELECT id FROM users WHERE is_admin AND deleted_at IS NULL ORDER BY id FOR UPDATE`)
	if err != nil {
		return nil, fmt.Errorf("lock admins: %w", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	if err != nil {
		return nil, fmt.Errorf("lock admins: %w", err)
	}
	return ids, nil
}

// AdjustBalance changes a live user's balance and writes the ledger entry in
// one statement, as changeBalance does, returning the entry's id too.
func (s *AdminStore) AdjustBalance(ctx context.Context, a admin.Adjustment) (money.Amount, int64, error) {
	var bal, id int64
	err := s.db.QueryRow(ctx, `
		WITH u AS (
			UPDATE users SET balance = balance + $2
			WHERE id = $1 AND deleted_at IS NULL AND balance + $2 >= 0
			RETURNING balance
		)
		INSERT INTO ledger_entries (user_id, kind, amount, balance_after, actor_id, note, created_at)
		SELECT $1, 'admin_adjustment', $2, u.balance, $3, $4, $5 FROM u
		RETURNING balance_after, id`,
		a.UserID, int64(a.Delta), a.ActorID, a.Note, a.At).Scan(&bal, &id)
	var pgErr *pgconn.PgError
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return 0, 0, admin.ErrBalanceNegative
	case errors.As(err, &pgErr) && pgErr.Code == codeNumericOutOfRange:
		return 0, 0, admin.ErrAmountTooLarge
	case err != nil:
		return 0, 0, fmt.Errorf("admin adjustment of %s: %w", a.Delta, err)
	}
	return money.Amount(bal), id, nil
}

// codeNumericOutOfRange is a bigint overflow.
const codeNumericOutOfRange = "22003"

// SoftDeleteUser marks the user deleted and revokes their sessions.
func (s *AdminStore) SoftDeleteUser(ctx context.Context, id uuid.UUID, at time.Time) (int, error) {
	tag, err := s.db.Exec(ctx, `UPDATE users SET deleted_at = $2 WHERE id = $1 AND deleted_at IS NULL`, id, at)
	if err != nil {
		return 0, fmt.Errorf("delete user: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return 0, accounts.ErrUserNotFound
	}
	tag, err = s.db.Exec(ctx, `UPDATE sessions SET revoked_at = $2 WHERE user_id = $1 AND revoked_at IS NULL`, id, at)
	if err != nil {
		return 0, fmt.Errorf("revoke sessions: %w", err)
	}
	return int(tag.RowsAffected()), nil
}

// InsertAudit records an admin action.
func (s *AdminStore) InsertAudit(ctx context.Context, e admin.AuditEntry) (int64, error) {
	var target *uuid.UUID
	if e.TargetUserID != uuid.Nil {
		target = &e.TargetUserID
	}
	var request *uuid.UUID
	if e.RequestID != uuid.Nil {
		request = &e.RequestID
	}
	var id int64
	err := s.db.QueryRow(ctx, `
		INSERT INTO admin_audit (actor_id, action, target_user_id, before, after, created_at, request_id)
		VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id`,
		e.ActorID, e.Action, target, []byte(e.Before), []byte(e.After), e.CreatedAt, request).Scan(&id)
	if constraintError(err, codeUniqueViolation) == "admin_audit_request_key" {
		return 0, admin.ErrRequestIDReused
	}
	if err != nil {
		return 0, fmt.Errorf("insert audit entry: %w", err)
	}
	return id, nil
}

// AuditByRequest finds the actor's audit entry with the request id
// (admin_audit_request_key, migration 00031).
func (s *AdminStore) AuditByRequest(ctx context.Context, actor, requestID uuid.UUID) (admin.AuditEntry, bool, error) {
	e := admin.AuditEntry{ActorID: actor, RequestID: requestID}
	var tgt *uuid.UUID
	var before, after []byte
	err := s.db.QueryRow(ctx, `
		SELECT id, action, target_user_id, before, after, created_at FROM admin_audit
		WHERE actor_id = $1 AND request_id = $2`, actor, requestID).
		Scan(&e.ID, &e.Action, &tgt, &before, &after, &e.CreatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return admin.AuditEntry{}, false, nil
	}
	if err != nil {
		return admin.AuditEntry{}, false, fmt.Errorf("audit entry of request %s: %w", requestID, err)
	}
	if tgt != nil {
		e.TargetUserID = *tgt
	}
	e.Before, e.After = before, after
	return e, true, nil
}

// ListAudit returns a page of the audit log, newest first.
func (s *AdminStore) ListAudit(ctx context.Context, target uuid.UUID, offset int64, limit int) ([]admin.AuditEntry, int64, error) {
	var targetArg *uuid.UUID
	if target != uuid.Nil {
		targetArg = &target
	}
	var total int64
	if err := s.db.QueryRow(ctx, `SELECT count(*) FROM admin_audit WHERE $1::uuid IS NULL OR target_user_id = $1`,
		targetArg).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count audit entries: %w", err)
	}
	rows, err := s.db.Query(ctx, `
		SELECT a.id, a.actor_id, coalesce(actor.username, ''), a.action, a.target_user_id, coalesce(target.username, ''),
		       a.before, a.after, a.created_at
		FROM admin_audit a
		LEFT JOIN users actor ON actor.id = a.actor_id
		LEFT JOIN users target ON target.id = a.target_user_id
		WHERE $1::uuid IS NULL OR a.target_user_id = $1
		ORDER BY a.id DESC OFFSET $2 LIMIT $3`, targetArg, offset, limit)
	if err != nil {
		return nil, 0, fmt.Errorf("list audit entries: %w", err)
	}
	entries, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (admin.AuditEntry, error) {
		var e admin.AuditEntry
		var actor, tgt *uuid.UUID
		var before, after []byte
		err := r.Scan(&e.ID, &actor, &e.ActorUsername, &e.Action, &tgt, &e.TargetUsername, &before, &after, &e.CreatedAt)
		if actor != nil {
			e.ActorID = *actor
		}
		if tgt != nil {
			e.TargetUserID = *tgt
		}
		e.Before, e.After = before, after
		return e, err
	})
	if err != nil {
		return nil, 0, fmt.Errorf("list audit entries: %w", err)
	}
	return entries, total, nil
}

// FoldBetStats moves the bet statistics' pending differences into the
// rollups (see migration 00005) and returns how many rows it folded; 0 also
// when another server is folding at the moment.
func FoldBetStats(ctx context.Context, pool *pgxpool.Pool) (int64, error) {
	var n int64
	if err := pool.QueryRow(ctx, `SELECT fairplay_fold_bet_stats()`).Scan(&n); err != nil {
		return 0, fmt.Errorf("fold bet statistics: %w", err)
	}
	return n, nil
}

// FoldBetStatsEvery folds the bet statistics every interval until ctx ends,
// so the pending table the readers scan stays small. A failure (Postgres
// restarting, say) is logged and the next tick tries again; nothing is lost,
// the differences wait in the table.
func FoldBetStatsEvery(ctx context.Context, pool *pgxpool.Pool, interval time.Duration, log *slog.Logger) {
	t := time.NewTicker(interval)
	defer t.Stop()
	failing := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		_, err := FoldBetStats(ctx, pool)
		switch {
		case err != nil && ctx.Err() == nil && !failing:
			log.WarnContext(ctx, "folding bet statistics failed; retrying every tick", "err", err)
			failing = true
		case err == nil && failing:
			log.InfoContext(ctx, "folding bet statistics works again")
			failing = false
		}
	}
}

// RebuildStats recomputes the statistics rollups from users and bets, with
// both tables locked against writes meanwhile. Bulk loads that bypass the
// triggers (test/seed) call it afterwards.
func RebuildStats(ctx context.Context, pool *pgxpool.Pool) error {
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `LOCK TABLE users, bets IN SHARE ROW EXCLUSIVE MODE`); err != nil {
			return fmt.Errorf("lock tables: %w", err)
		}
		if _, err := tx.Exec(ctx, `SELECT fairplay_rebuild_stats()`); err != nil {
			return fmt.Errorf("rebuild stats: %w", err)
		}
		return nil
	})
}
