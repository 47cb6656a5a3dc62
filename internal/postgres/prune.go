package postgres

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fairplay/fairplay/internal/accounts"
)

// Retention of the sessions' rows (PruneSessions).
const (
	// DeadSessionRetention is how long a session's row is kept after the
	// session ended (revoked, idle or past its lifetime): the sessions list
	// and an administrator's look at an account read live sessions only.
	DeadSessionRetention = 30 * 24 * time.Hour
	// RetiredTokensKept is how many of a live session's retired refresh
	// tokens are kept, the newest: a refresh token presented again is
	// reuse, which revokes the session, only while it is among them. The web
	// app refreshes about every 15 minutes while open, so they cover about
	// ten days of use.
	RetiredTokensKept = 1000
	// pruneBatch bounds the rows one statement deletes.
	pruneBatch = 5000
)

// Pruned counts what PruneSessions deleted.
type Pruned struct {
	// Sessions are rows of sessions ended more than DeadSessionRetention
	// ago (with their retired tokens).
	Sessions int64
	// Retired are retired refresh tokens of sessions that have ended, or
	// beyond the newest RetiredTokensKept of a live one.
	Retired int64
}

// PruneSessions deletes what no request can use any more, in batches: the
// rows of sessions dead for DeadSessionRetention, the retired refresh tokens
// of dead sessions, and a live session's retired tokens beyond its newest
// RetiredTokensKept. Nothing deleted them: every sign-in added a session row
// and every refresh a retired token, for good, so one address refreshing at
// its rate limit (300 a minute) added ~430,000 rows a day (found by a review
// playing a hostile client; TestPruneSessions). live is the sessions'
// liveness now (accounts.Service.Liveness).
func PruneSessions(ctx context.Context, pool *pgxpool.Pool, live accounts.Liveness, now time.Time) (Pruned, error) {
	var p Pruned
	batches := func(what *int64, sql string, args ...any) error {
		for {
			tag, err := pool.Exec(ctx, sql, args...)
			if err != nil {
				return err
			}
			*what += tag.RowsAffected()
			if tag.RowsAffected() < pruneBatch {
				return nil
			}
		}
	}
	if err := batches(&p.Sessions, `
		DELETE FROM sessions s USING (
			SELECT id FROM sessions
			WHERE revoked_at < $1 OR last_used_at < $2 OR created_at < $3
			LIMIT $4 FOR UPDATE SKIP LOCKED) d
		WHERE s.id = d.id`,
		now.Add(-DeadSessionRetention), live.UsedSince.Add(-DeadSessionRetention),
		live.CreatedSince.Add(-DeadSessionRetention), pruneBatch); err != nil {
		return p, fmt.Errorf("prune dead sessions: %w", err)
	}
	if err := batches(&p.Retired, `
		DELETE FROM retired_refresh_tokens r USING (
			SELECT t.hash FROM retired_refresh_tokens t JOIN sessions s ON s.id = t.session_id
			WHERE s.revoked_at IS NOT NULL OR s.last_used_at < $1 OR s.created_at < $2
			LIMIT $3) d
		WHERE r.hash = d.hash`, live.UsedSince, live.CreatedSince, pruneBatch); err != nil {
		return p, fmt.Errorf("prune dead sessions' retired tokens: %w", err)
	}
	// A live session's tokens older than its newest RetiredTokensKept: each
	// session over is found by one pass over the table, and its cut by its
	// own index entries.
	if err := batches(&p.Retired, `
		DELETE FROM retired_refresh_tokens r USING (
			SELECT o.session_id, (SELECT t.retired_at FROM retired_refresh_tokens t WHERE t.session_id = o.session_id
			                      ORDER BY t.retired_at DESC OFFSET $1 LIMIT 1) AS cut
			FROM (SELECT session_id FROM retired_refresh_tokens GROUP BY session_id HAVING count(*) > $1
			      LIMIT $2) o) c
		WHERE r.session_id = c.session_id AND r.retired_at <= c.cut`, RetiredTokensKept, pruneBatch); err != nil {
		return p, fmt.Errorf("prune retired tokens: %w", err)
	}
	return p, nil
}

// PruneSessionsEvery runs PruneSessions every interval until ctx ends. A
// failure is logged and the next run tries again; several replicas pruning
// at once skip each other's rows.
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
