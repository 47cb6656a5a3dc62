package postgres

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fairplay/fairplay/internal/accounts"
)

// Retention of the sessions' rows (PruneSessions).
const (
	// DeadSessionRetention is how long a session's row is kept after the
	// session ended (revoked, idle or past its lifetime): the sessions list
	// and an administrator's look at an account read live sessions only.
	DeadSessionRetention = 30 * 24 * time.Hour
	// pruneWindow is how many sessions one statement looks at.
	pruneWindow = 5000
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
// sessions ended DeadSessionRetention ago (their retired refresh tokens go
// with them), and at once the retired tokens of a session that has ended (a
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
	defer conn.Release()
	var mine bool
	if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, int64(pruneLock)).Scan(&mine); err != nil {
		return p, fmt.Errorf("prune sessions: %w", err)
	}
	if !mine {
		return p, nil
	}
	defer func() {
		_, _ = conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, int64(pruneLock))
	}()
	after := uuid.Nil
	for {
		var (
			last              *uuid.UUID
			sessions, retired int64
		)
		// A window of sessions by key; those ended long ago deleted, the
		// retired tokens of those ended since.
		err := conn.QueryRow(ctx, `
			WITH w AS MATERIALIZED (
				SELECT id, coalesce(revoked_at < $2, false) OR last_used_at < $3 OR created_at < $4 AS long_dead,
				       revoked_at IS NOT NULL OR last_used_at < $5 OR created_at < $6 AS dead
				FROM sessions WHERE id > $1 ORDER BY id LIMIT $7
			), gone AS (
				DELETE FROM sessions s USING w WHERE s.id = w.id AND w.long_dead RETURNING 1
			), spent AS (
				DELETE FROM retired_refresh_tokens r USING w
				WHERE r.session_id = w.id AND w.dead AND NOT w.long_dead RETURNING 1
			)
			SELECT (SELECT id FROM w ORDER BY id DESC LIMIT 1), (SELECT count(*) FROM gone),
			       (SELECT count(*) FROM spent)`,
			after, now.Add(-DeadSessionRetention), live.UsedSince.Add(-DeadSessionRetention),
			live.CreatedSince.Add(-DeadSessionRetention), live.UsedSince, live.CreatedSince, pruneWindow).
			Scan(&last, &sessions, &retired)
		if err != nil {
			return p, fmt.Errorf("prune sessions: %w", err)
		}
		p.Sessions += sessions
		p.Retired += retired
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
