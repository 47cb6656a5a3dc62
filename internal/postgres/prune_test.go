package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/fairplay/fairplay/internal/accounts"
	"github.com/fairplay/fairplay/internal/postgres"
	"github.com/fairplay/fairplay/internal/postgres/pgtest"
)

// TestPruneSessions: the rows no request can use any more are deleted —
// sessions ended DeadSessionRetention ago with their retired refresh
// tokens, and the retired tokens of sessions ended since — and nothing
// else: a live session keeps every retired token (reuse detection).
// Every sign-in added a session row and every refresh a retired token, for
// good: one address refreshing at its rate limit added ~430,000 rows a day
// (found by a review playing a hostile client).
func TestPruneSessions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.New(t)
	now := time.Now().UTC().Truncate(time.Microsecond)
	live := accounts.Liveness{UsedSince: now.Add(-24 * time.Hour), CreatedSince: now.Add(-72 * time.Hour)}
	month := postgres.DeadSessionRetention
	user := uuid.New()
	mustExec(t, pool, `INSERT INTO users (id, username, email, password_hash) VALUES ($1, 'pruned', 'p@example.com', 'x')`, user)
	session := func(created, used time.Time, revoked any, tokens int) uuid.UUID {
		t.Helper()
		id := uuid.New()
		mustExec(t, pool, `INSERT INTO sessions (id, user_id, refresh_hash, created_at, last_used_at, revoked_at)
			VALUES ($1, $2, $3, $4, $5, $6)`, id, user, id[:], created, used, revoked)
		mustExec(t, pool, `INSERT INTO retired_refresh_tokens (hash, session_id, retired_at)
			SELECT sha256(($1::text || i)::bytea), $1::uuid, $2::timestamptz + i * interval '1 second'
			FROM generate_series(1, $3) i`, id, created, tokens)
		return id
	}
	busy := session(now.Add(-time.Hour), now, nil, 1050)
	quiet := session(now.Add(-time.Hour), now, nil, 7)
	revokedYesterday := session(now.Add(-48*time.Hour), now.Add(-25*time.Hour), now.Add(-24*time.Hour), 5)
	idleYesterday := session(now.Add(-48*time.Hour), live.UsedSince.Add(-time.Hour), nil, 4)
	for _, dead := range []struct {
		created, used time.Time
		revoked       any
	}{
		{now.Add(-2 * month), now.Add(-2 * month), now.Add(-month - time.Hour)}, // revoked a month ago
		{now.Add(-2 * month), live.UsedSince.Add(-month - time.Hour), nil},      // idle a month ago
		{live.CreatedSince.Add(-month - time.Hour), now, nil},                   // past its lifetime a month ago
	} {
		session(dead.created, dead.used, dead.revoked, 3)
	}

	p, err := postgres.PruneSessions(ctx, pool, live, now)
	if err != nil {
		t.Fatal(err)
	}
	if p.Sessions != 3 || p.Retired != 5+4+3*3 {
		t.Errorf("pruned %+v, want 3 sessions and 18 retired tokens", p)
	}
	// The lock is given back: another replica prunes at its next run.
	var free bool
	if err := pool.QueryRow(ctx, `SELECT pg_try_advisory_lock($1) AND pg_advisory_unlock($1)`,
		int64(0x66706c7072756e65)).Scan(&free); err != nil || !free {
		t.Errorf("the pruning lock after a run: free %v (%v)", free, err)
	}
	if n := queryInt(t, pool, `SELECT count(*) FROM sessions`); n != 4 {
		t.Errorf("%d sessions left, want the 2 live and the 2 ended since", n)
	}
	for _, c := range []struct {
		name string
		id   uuid.UUID
		want int64
	}{
		{"busy", busy, 1050}, {"quiet", quiet, 7},
		{"revoked yesterday", revokedYesterday, 0}, {"idle since yesterday", idleYesterday, 0},
	} {
		if n := queryInt(t, pool, `SELECT count(*) FROM retired_refresh_tokens WHERE session_id = $1`, c.id); n != c.want {
			t.Errorf("%s: %d retired tokens, want %d", c.name, n, c.want)
		}
	}
	if again, err := postgres.PruneSessions(ctx, pool, live, now); err != nil || again != (postgres.Pruned{}) {
		t.Errorf("a second run pruned %+v (%v), want nothing", again, err)
	}
}

// TestPruneSessionsWalksEveryWindow: a run prunes past its first window of
// sessions, and one replica prunes at a time: another finds the lock held
// and prunes nothing.
func TestPruneSessionsWalksEveryWindow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.New(t)
	now := time.Now().UTC()
	live := accounts.Liveness{UsedSince: now.Add(-24 * time.Hour), CreatedSince: now.Add(-72 * time.Hour)}
	user := uuid.New()
	mustExec(t, pool, `INSERT INTO users (id, username, email, password_hash) VALUES ($1, 'many', 'm@example.com', 'x')`, user)
	// 12,000 sessions: one in three revoked two months ago, one in three
	// yesterday with two retired tokens, one in three live with one.
	mustExec(t, pool, `INSERT INTO sessions (id, user_id, refresh_hash, revoked_at)
		SELECT gen_random_uuid(), $1, sha256(i::text::bytea),
		       CASE i % 3 WHEN 0 THEN $2::timestamptz WHEN 1 THEN $3::timestamptz END
		FROM generate_series(1, 12000) i`, user, now.Add(-60*24*time.Hour), now.Add(-24*time.Hour))
	mustExec(t, pool, `INSERT INTO retired_refresh_tokens (hash, session_id, retired_at)
		SELECT sha256((s.id::text || k)::bytea), s.id, now() FROM sessions s
		CROSS JOIN generate_series(1, CASE WHEN s.revoked_at IS NULL THEN 1 ELSE 2 END) k
		WHERE s.revoked_at IS NULL OR s.revoked_at > $1`, now.Add(-48*time.Hour))
	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, int64(0x66706c7072756e65)); err != nil {
		t.Fatal(err)
	}
	if p, err := postgres.PruneSessions(ctx, pool, live, now); err != nil || p != (postgres.Pruned{}) {
		t.Fatalf("with another replica pruning: %+v, %v; want nothing", p, err)
	}
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_unlock($1)`, int64(0x66706c7072756e65)); err != nil {
		t.Fatal(err)
	}
	conn.Release()
	p, err := postgres.PruneSessions(ctx, pool, live, now)
	if err != nil || p.Sessions != 4000 || p.Retired != 8000 {
		t.Fatalf("pruned %+v, %v; want the 4,000 sessions revoked two months ago and the 8,000 tokens of those "+
			"revoked yesterday", p, err)
	}
	if n := queryInt(t, pool, `SELECT count(*) FROM sessions`); n != 8000 {
		t.Fatalf("%d sessions left, want 8,000", n)
	}
	if n := queryInt(t, pool, `SELECT count(*) FROM retired_refresh_tokens`); n != 4000 {
		t.Fatalf("%d retired tokens left, want the live sessions' 4,000", n)
	}
}

// TestSessionRefreshesAreBounded: a session rotates its refresh token at
// most accounts.MaxRefreshes times; the next refresh revokes it instead of
// retiring another token (a live session keeps every retired token, for
// reuse detection, so nothing else bounds how many it gathers).
func TestSessionRefreshesAreBounded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.New(t)
	store := postgres.NewAccountStore(pool)
	now := time.Now().UTC()
	live := accounts.Liveness{UsedSince: now.Add(-time.Hour), CreatedSince: now.Add(-time.Hour)}
	user, session := uuid.New(), uuid.New()
	mustExec(t, pool, `INSERT INTO users (id, username, email, password_hash) VALUES ($1, 'refresher', 'r@example.com', 'x')`, user)
	mustExec(t, pool, `INSERT INTO sessions (id, user_id, refresh_hash, refreshes) VALUES ($1, $2, 'a', $3)`,
		session, user, accounts.MaxRefreshes-1)
	if _, err := store.RotateRefreshToken(ctx, []byte("a"), []byte("b"), live, accounts.Client{}, now); err != nil {
		t.Fatalf("the last refresh allowed: %v", err)
	}
	if _, err := store.RotateRefreshToken(ctx, []byte("b"), []byte("c"), live, accounts.Client{}, now); !errors.Is(err, accounts.ErrSessionSpent) {
		t.Fatalf("a refresh past the bound: %v, want ErrSessionSpent", err)
	}
	var revoked bool
	if err := pool.QueryRow(ctx, `SELECT revoked_at IS NOT NULL FROM sessions WHERE id = $1`, session).Scan(&revoked); err != nil || !revoked {
		t.Fatalf("the session after a refresh past the bound: revoked %v (%v)", revoked, err)
	}
	if n := queryInt(t, pool, `SELECT count(*) FROM retired_refresh_tokens WHERE session_id = $1`, session); n != 1 {
		t.Fatalf("%d retired tokens, want the one of the last refresh allowed", n)
	}
}
