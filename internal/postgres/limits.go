package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fairplay/fairplay/internal/limits"
	"github.com/fairplay/fairplay/internal/money"
)

// LimitsStore implements limits.Store on the players' rows (migration
// 00015), whose rules it reads through the same SQL functions the bets run:
// fairplay_limit for the limits that apply now, fairplay_usage for what was
// played in the current periods.
type LimitsStore struct{ pool *pgxpool.Pool }

// NewLimitsStore returns a limits.Store on pool.
func NewLimitsStore(pool *pgxpool.Pool) *LimitsStore { return &LimitsStore{pool: pool} }

var _ limits.Store = (*LimitsStore)(nil)

// limitsStateSQL reads a live player's settings as they apply now; the
// caller appends a locking clause if it wants one.
const limitsStateSQL = `
	SELECT now(),
	       fairplay_limit(next_limits_from, loss_limit_day, next_loss_limit_day),
	       fairplay_limit(next_limits_from, loss_limit_week, next_loss_limit_week),
	       fairplay_limit(next_limits_from, loss_limit_month, next_loss_limit_month),
	       fairplay_limit(next_limits_from, wager_limit_day, next_wager_limit_day),
	       fairplay_limit(next_limits_from, wager_limit_week, next_wager_limit_week),
	       fairplay_limit(next_limits_from, wager_limit_month, next_wager_limit_month),
	       CASE WHEN next_limits_from > now() THEN next_limits_from END,
	       next_loss_limit_day, next_loss_limit_week, next_loss_limit_month,
	       next_wager_limit_day, next_wager_limit_week, next_wager_limit_month,
	       CASE WHEN break_until > now() THEN break_until END,
	       CASE WHEN excluded_until > now() AND isfinite(excluded_until) THEN excluded_until END,
	       coalesce(excluded_until = 'infinity', false),
	       coalesce(reality_check_minutes, 0),
	       fairplay_usage('day', play_day, play_day_wagered, 0), fairplay_usage('day', play_day, play_day_lost, 0),
	       fairplay_usage('week', play_week, play_week_wagered, 0), fairplay_usage('week', play_week, play_week_lost, 0),
	       fairplay_usage('month', play_month, play_month_wagered, 0), fairplay_usage('month', play_month, play_month_lost, 0)
	FROM users WHERE id = $1 AND deleted_at IS NULL`

// readLimits runs limitsStateSQL (plus lock) on q.
func readLimits(ctx context.Context, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}, userID uuid.UUID, lock string) (limits.State, error) {
	var (
		st                  limits.State
		cur, next           [6]*int64
		nextFrom, brk, excl *time.Time
		used                [6]int64
		reality             int32
		permanent           bool
	)
	dest := []any{&st.Now}
	for i := range cur {
		dest = append(dest, &cur[i])
	}
	dest = append(dest, &nextFrom)
	for i := range next {
		dest = append(dest, &next[i])
	}
	dest = append(dest, &brk, &excl, &permanent, &reality)
	for i := range used {
		dest = append(dest, &used[i])
	}
	err := q.QueryRow(ctx, limitsStateSQL+lock, id16(userID)).Scan(dest...)
	if errors.Is(err, pgx.ErrNoRows) {
		return st, limits.ErrNoPlayer
	}
	if err != nil {
		return st, fmt.Errorf("read limits: %w", err)
	}
	amount := func(v *int64) money.Amount {
		if v == nil {
			return 0
		}
		return money.Amount(*v)
	}
	set := func(v [6]*int64) limits.Set {
		var s limits.Set
		for _, p := range limits.Periods {
			s.Loss[p], s.Wager[p] = amount(v[p]), amount(v[3+int(p)])
		}
		return s
	}
	st.Limits = set(cur)
	if nextFrom != nil {
		st.Pending = &limits.Pending{Limits: set(next), From: *nextFrom}
	}
	if brk != nil {
		st.BreakUntil = *brk
	}
	if excl != nil {
		st.ExcludedUntil = *excl
	}
	st.Permanent, st.RealityCheck = permanent, int(reality)
	for _, p := range limits.Periods {
		st.Usage[p] = limits.Usage{Wagered: money.Amount(used[2*int(p)]), NetLoss: money.Amount(used[2*int(p)+1]),
			Resets: limits.NextPeriod(p, st.Now)}
	}
	return st, nil
}

// Get implements limits.Store.
func (s *LimitsStore) Get(ctx context.Context, userID uuid.UUID) (limits.State, error) {
	return readLimits(ctx, s.pool, userID, "")
}

// nullable is a limit as a column: NULL for none.
func nullable(a money.Amount) *int64 {
	if a == 0 {
		return nil
	}
	v := int64(a)
	return &v
}

// SetLimits implements limits.Store: the player's row is locked (FOR NO
// KEY UPDATE, the lock a bet takes) while change decides.
func (s *LimitsStore) SetLimits(ctx context.Context, userID uuid.UUID,
	change func(limits.State) (limits.Set, *limits.Pending, int, error)) (limits.State, error) {
	var out limits.State
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		st, err := readLimits(ctx, tx, userID, " FOR NO KEY UPDATE")
		if err != nil {
			return err
		}
		apply, pend, reality, err := change(st)
		if err != nil {
			return err
		}
		next := limits.Set{}
		var from *time.Time
		if pend != nil {
			next, from = pend.Limits, &pend.From
		}
		var realityCol *int32
		if reality != 0 {
			r := int32(reality)
			realityCol = &r
		}
		if _, err := tx.Exec(ctx, `
			UPDATE users SET loss_limit_day = $2, loss_limit_week = $3, loss_limit_month = $4,
			       wager_limit_day = $5, wager_limit_week = $6, wager_limit_month = $7,
			       next_loss_limit_day = $8, next_loss_limit_week = $9, next_loss_limit_month = $10,
			       next_wager_limit_day = $11, next_wager_limit_week = $12, next_wager_limit_month = $13,
			       next_limits_from = $14, reality_check_minutes = $15
			WHERE id = $1`, id16(userID),
			nullable(apply.Loss[limits.Day]), nullable(apply.Loss[limits.Week]), nullable(apply.Loss[limits.Month]),
			nullable(apply.Wager[limits.Day]), nullable(apply.Wager[limits.Week]), nullable(apply.Wager[limits.Month]),
			nullable(next.Loss[limits.Day]), nullable(next.Loss[limits.Week]), nullable(next.Loss[limits.Month]),
			nullable(next.Wager[limits.Day]), nullable(next.Wager[limits.Week]), nullable(next.Wager[limits.Month]),
			from, realityCol); err != nil {
			return fmt.Errorf("set limits: %w", err)
		}
		out, err = readLimits(ctx, tx, userID, "")
		return err
	})
	return out, err
}

// extend runs an update of the player's row that may only lengthen a break
// or an exclusion, then reads the settings back.
func (s *LimitsStore) extend(ctx context.Context, userID uuid.UUID, sql string, args ...any) (limits.State, error) {
	var out limits.State
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, sql, append([]any{id16(userID)}, args...)...)
		if err != nil {
			return fmt.Errorf("extend: %w", err)
		}
		if tag.RowsAffected() == 0 {
			return limits.ErrNoPlayer
		}
		out, err = readLimits(ctx, tx, userID, "")
		return err
	})
	return out, err
}

// ExtendBreak implements limits.Store.
func (s *LimitsStore) ExtendBreak(ctx context.Context, userID uuid.UUID, d time.Duration) (limits.State, error) {
	return s.extend(ctx, userID, `
		UPDATE users SET break_until = greatest(break_until, now() + make_interval(secs => $2))
		WHERE id = $1 AND deleted_at IS NULL`, d.Seconds())
}

// Exclude implements limits.Store.
func (s *LimitsStore) Exclude(ctx context.Context, userID uuid.UUID, e limits.Exclusion) (limits.State, error) {
	until := "now() + interval '6 months'"
	if e == limits.Forever {
		until = "'infinity'::timestamptz"
	}
	return s.extend(ctx, userID, `
		UPDATE users SET excluded_until = greatest(excluded_until, `+until+`)
		WHERE id = $1 AND deleted_at IS NULL`)
}

// RealityCheck implements limits.Store: fairplay_reality_check (migration
// 00034) sums the session's bets, each read once: the session keeps the
// sums of those already read, and a call reads only the bets since the
// last, the last two minutes of play and the running games.
func (s *LimitsStore) RealityCheck(ctx context.Context, userID, sessionID uuid.UUID) (limits.RealityCheck, error) {
	var (
		rc           limits.RealityCheck
		wagered, net int64
		interval     int32
	)
	err := s.pool.QueryRow(ctx, `SELECT signed_in, bets, wagered, net, minutes FROM fairplay_reality_check($1, $2)`,
		id16(userID), id16(sessionID)).
		Scan(&rc.SignedInAt, &rc.Bets, &wagered, &net, &interval)
	if errors.Is(err, pgx.ErrNoRows) {
		return rc, limits.ErrNoPlayer
	}
	if err != nil {
		return rc, fmt.Errorf("reality check: %w", err)
	}
	rc.Wagered, rc.Net, rc.Interval = money.Amount(wagered), money.Amount(net), int(interval)
	return rc, nil
}
