package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/fairplay/fairplay/internal/accounts"
	"github.com/fairplay/fairplay/internal/postgres"
	"github.com/fairplay/fairplay/internal/postgres/pgtest"
)

// TestPruneSessions: the rows no request can use any more are deleted —
// sessions ended DeadSessionRetention ago with their retired refresh
// tokens, the retired tokens of sessions ended since, and a live session's
// retired tokens beyond its newest RetiredTokensKept — and nothing else.
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
	busy := session(now.Add(-time.Hour), now, nil, postgres.RetiredTokensKept+50)
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
	if p.Sessions != 3 || p.Retired != 50+5+4 {
		t.Errorf("pruned %+v, want 3 sessions and 59 retired tokens", p)
	}
	if n := queryInt(t, pool, `SELECT count(*) FROM sessions`); n != 4 {
		t.Errorf("%d sessions left, want the 2 live and the 2 ended since", n)
	}
	for _, c := range []struct {
		name string
		id   uuid.UUID
		want int64
	}{
		{"busy", busy, postgres.RetiredTokensKept}, {"quiet", quiet, 7},
		{"revoked yesterday", revokedYesterday, 0}, {"idle since yesterday", idleYesterday, 0},
	} {
		if n := queryInt(t, pool, `SELECT count(*) FROM retired_refresh_tokens WHERE session_id = $1`, c.id); n != c.want {
			t.Errorf("%s: %d retired tokens, want %d", c.name, n, c.want)
		}
	}
	// The busy session keeps its newest.
	var oldest time.Time
	if err := pool.QueryRow(ctx, `SELECT min(retired_at) FROM retired_refresh_tokens WHERE session_id = $1`, busy).
		Scan(&oldest); err != nil {
		t.Fatal(err)
	}
	if want := now.Add(-time.Hour + 51*time.Second); !oldest.Equal(want) {
		t.Errorf("the busy session's oldest token kept was retired at %v, want %v", oldest, want)
	}
	if again, err := postgres.PruneSessions(ctx, pool, live, now); err != nil || again != (postgres.Pruned{}) {
		t.Errorf("a second run pruned %+v (%v), want nothing", again, err)
	}
}
