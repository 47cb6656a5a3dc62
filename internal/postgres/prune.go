package postgres

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fairplay/fairplay/internal/accounts"
)

// Retention of the sessions' rows (PruneSessions).
const (
	// DeadSessionRetention is how long a session's row is kept after the
	// session ended (revoked, idle or past its lifetime): the sessions list
	// and an administrator's look at an account read live sessions only.
	DeadSessionRetention = 30 * 24 * time.Hour
	// pruneWindow is how many sessions one statement looks at, and
	// pruneBatch how many retired tokens one deletes.
	pruneWindow = 5000
	pruneBatch  = 5000
	// pruneLock is the advisory lock whose holder prunes: one replica at a
	// time.
	pruneLock = 0x66706c7072756e65 // "fplprune"
)

// Pruned counts what PruneSessions deleted.
type Pruned struct {
	// Sessions are rows of sessions ended more than DeadSessionRetention
	// ago (with their retired tokens).
	Sessions int64
	// Retired are retired refresh tokens of sessions that have ended.
	Retired int64
}

// PruneSessions deletes what no request can use any more: the rows of
// sessions ended DeadSessionRetention ago, and at once the retired tokens of
// a session that has ended (a
// retired token presented again revokes its session, which has nothing left
// to revoke). A live session keeps every retired token, at most
// accounts.MaxRefreshes. Nothing deleted them: every sign-in added a session
// row and every refresh a retired token, for good (found by a review
// playing a hostile client; TestPruneSessions).
//
// It walks the sessions by their key, pruneWindow at a time, so each run
// reads every session once however many it deletes, and runs on one
// replica at a time (an advisory lock: another finds it held and skips the
// run). live is the sessions' liveness now (accounts.Service.Liveness).
func PruneSessions(ctx context.Context, pool *pgxpool.Pool, live accounts.Liveness, now time.Time) (Pruned, error) {
	var p Pruned
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return p, fmt.Errorf("prune sessions: %w", err)
	}
	var mine bool
	if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, int64(pruneLock)).Scan(&mine); err != nil {
		conn.Release()
		return p, fmt.Errorf("prune sessions: %w", err)
	}
	if !mine {
		conn.Release()
		return p, nil
	}
	defer func() {
		// A connection still holding the lock must not go back to the
		// pool: no replica would prune again.
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		var unlocked bool
		if err := conn.QueryRow(uctx, `SELECT pg_advisory_unlock($1)`, int64(pruneLock)).Scan(&unlocked); err != nil || !unlocked {
			_ = conn.Hijack().Close(uctx)
			return
		}
		conn.Release()
	}()
	after := uuid.Nil
	for {
		// The retired tokens of the window's ended sessions, pruneBatch at a
		// time (a session may hold accounts.MaxRefreshes of them).
		for {
			tag, err := conn.Exec(ctx, `
				DELETE FROM retired_refresh_tokens r USING (
					SELECT t.hash FROM (SELECT id FROM sessions WHERE id > $1 ORDER BY id LIMIT $2) w
					JOIN sessions s ON s.id = w.id JOIN retired_refresh_tokens t ON t.session_id = s.id
					WHERE s.revoked_at IS NOT NULL OR s.last_used_at < $3 OR s.created_at < $4
					LIMIT $5) d
				WHERE r.hash = d.hash`,
				pgx.QueryExecModeExec, after, pruneWindow, live.UsedSince, live.CreatedSince, pruneBatch)
			if err != nil {
				return p, fmt.Errorf("prune retired refresh tokens: %w", err)
			}
			p.Retired += tag.RowsAffected()
			if tag.RowsAffected() < pruneBatch {
				break
			}
		}
		// Then the window's sessions ended long ago, and where the next
		// window starts.
		var (
			last     *uuid.UUID
			sessions int64
		)
		err := conn.QueryRow(ctx, `
			WITH w AS MATERIALIZED (
				SELECT id, coalesce(revoked_at < $2, false) OR last_used_at < $3 OR created_at < $4 AS long_dead
				FROM sessions WHERE id > $1 ORDER BY id LIMIT $5
			), gone AS (
				DELETE FROM sessions s USING w WHERE s.id = w.id AND w.long_dead RETURNING 1
			)
			SELECT (SELECT id FROM w ORDER BY id DESC LIMIT 1), (SELECT count(*) FROM gone)`,
			pgx.QueryExecModeExec, after, now.Add(-DeadSessionRetention), live.UsedSince.Add(-DeadSessionRetention),
			live.CreatedSince.Add(-DeadSessionRetention), pruneWindow).
			Scan(&last, &sessions)
		if err != nil {
			return p, fmt.Errorf("prune sessions: %w", err)
		}
		p.Sessions += sessions
		if last == nil {
			return p, nil
		}
		after = *last
	}
}

// PruneSessionsEvery runs PruneSessions every interval until ctx ends. A
// failure is logged and the next run tries again; while one replica prunes,
// the others skip their runs.
func PruneSessionsEvery(ctx context.Context, pool *pgxpool.Pool, interval time.Duration,
	live func() accounts.Liveness, now func() time.Time, log *slog.Logger) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		p, err := PruneSessions(ctx, pool, live(), now())
		switch {
		case err != nil && ctx.Err() == nil:
			log.WarnContext(ctx, "pruning sessions failed; retrying at the next run", "err", err)
		case p.Sessions > 0 || p.Retired > 0:
			log.InfoContext(ctx, "pruned sessions", "sessions", p.Sessions, "retired_refresh_tokens", p.Retired)
		}
	}
}
