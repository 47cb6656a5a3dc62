package postgres_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fairplay/fairplay/internal/admin"
	"github.com/fairplay/fairplay/internal/postgres"
	"github.com/fairplay/fairplay/internal/postgres/pgtest"
)

// TestStatsRollupsMatchBaseTables writes users and bets at random times
// (inserts, settlements, stake changes, deletions, soft deletes and
// restores, all through the triggers), then checks the rollup-backed figures
// of AdminStore against brute-force sums over the base tables for random
// windows: sub-hour, hour-aligned and many days long.
func TestStatsRollupsMatchBaseTables(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.New(t)
	rng := rand.New(rand.NewPCG(1, 2))
	base := time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)
	at := func() time.Time {
		return base.Add(-time.Duration(rng.Int64N(int64(40 * 24 * time.Hour)))).Truncate(time.Microsecond)
	}
	games := []string{"dice", "plinko", "keno", "mines", "pump", "blackjack"}

	var users []uuid.UUID
	for i := range 60 {
		id := uuid.New()
		users = append(users, id)
		mustExec(t, pool, `INSERT INTO users (id, username, email, password_hash, created_at) VALUES ($1, $2, $3, 'x', $4)`,
			id, fmt.Sprintf("user%03d", i), fmt.Sprintf("user%03d@example.com", i), at())
		mustExec(t, pool, `INSERT INTO seed_pairs (id, user_id, server_seed, server_seed_hash, client_seed) VALUES ($1, $2, 's', 'h', 'c')`,
			uuid.New(), id)
	}
	var bets []uuid.UUID
	running := map[string]bool{} // one running game per player and game
	for i := range 1500 {
		id := uuid.New()
		bets = append(bets, id)
		u := users[rng.IntN(len(users))]
		game := games[rng.IntN(len(games))]
		status, payout := "settled", rng.Int64N(5_000_000_000)
		if key := u.String() + game; rng.IntN(10) == 0 && !running[key] {
			status, payout, running[key] = "active", 0, true
		}
		settled := any(nil)
		created := at()
		if status == "settled" {
			settled = created
		}
		mustExec(t, pool, `
			INSERT INTO bets (id, user_id, game, status, amount, payout, seed_pair_id, client_seed, nonce, created_at, settled_at)
			VALUES ($1, $2, $3, $4, $5, $6, (SELECT id FROM seed_pairs WHERE user_id = $2), 'c', $7, $8, $9)`,
			id, u, game, status, 1+rng.Int64N(10_000_000_000), payout, i, created, settled)
	}
	// Bets inserted by one statement, as a batch inserts them: their
	// differences are appended as one row per hour and game (migration
	// 00026), which must count in every span their bets do. Several share
	// an hour and a game, and many hours are cut by the periods below.
	var (
		ids, owners           []uuid.UUID
		kinds                 []string
		amounts, pays, nonces []int64
		times                 []time.Time
	)
	hour := at().Truncate(time.Hour)
	for i := range 300 {
		ids, owners = append(ids, uuid.New()), append(owners, users[rng.IntN(len(users))])
		kinds = append(kinds, games[rng.IntN(2)])
		amounts, pays, nonces = append(amounts, 1+rng.Int64N(10_000_000_000)), append(pays, rng.Int64N(5_000_000_000)), append(nonces, int64(1500+i))
		created := at()
		if i%2 == 0 { // many in the same few hours
			created = hour.Add(time.Duration(rng.Int64N(int64(3 * time.Hour)))).Truncate(time.Microsecond)
		}
		times = append(times, created)
	}
	bets = append(bets, ids...)
	groups := map[string]bool{}
	for i := range ids {
		groups[times[i].Truncate(time.Hour).String()+kinds[i]] = true
	}
	pending := queryInt(t, pool, `SELECT count(*) FROM bet_stats_pending`)
	mustExec(t, pool, `
		INSERT INTO bets (id, user_id, game, status, amount, payout, seed_pair_id, client_seed, nonce, created_at, settled_at)
		SELECT b.id, b.u, b.g, 'settled', b.a, b.p, (SELECT id FROM seed_pairs WHERE user_id = b.u), 'c', b.n, b.t, b.t
		FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::bigint[], $5::bigint[], $6::bigint[], $7::timestamptz[])
		     AS b(id, u, g, a, p, n, t)`, ids, owners, kinds, amounts, pays, nonces, times)
	if n := queryInt(t, pool, `SELECT count(*) FROM bet_stats_pending`) - pending; n != int64(len(groups)) {
		t.Fatalf("300 bets in one statement appended %d pending rows, want one per hour and game: %d", n, len(groups))
	}

	// Settle the running games (a doubled stake on some), delete a few bets,
	// move some users in time, soft-delete some and restore one.
	mustExec(t, pool, `UPDATE bets SET amount = amount * 2 WHERE status = 'active' AND nonce % 3 = 0`)
	mustExec(t, pool, `UPDATE bets SET status = 'settled', settled_at = created_at, payout = amount * 2 WHERE status = 'active' AND nonce % 2 = 0`)
	mustExec(t, pool, `UPDATE bets SET state = '{"x": 1}' WHERE nonce % 5 = 0`) // irrelevant to the figures
	mustExec(t, pool, `DELETE FROM bets WHERE id = ANY($1)`, bets[:20])
	mustExec(t, pool, `UPDATE users SET created_at = created_at - interval '3 days' WHERE id = ANY($1)`, users[:5])
	mustExec(t, pool, `UPDATE users SET deleted_at = $2 WHERE id = ANY($1)`, users[5:15], base)
	mustExec(t, pool, `UPDATE users SET deleted_at = NULL WHERE id = $1`, users[5])
	mustExec(t, pool, `UPDATE users SET balance = 7 WHERE id = ANY($1)`, users) // irrelevant too

	store := postgres.NewAdminStore(pool)
	check := func(label string) {
		t.Helper()
		var periods []admin.Period
		for range 25 {
			from := at()
			var d time.Duration
			switch rng.IntN(3) {
			case 0:
				d = time.Duration(rng.Int64N(int64(time.Hour)))
			case 1:
				from = from.Truncate(time.Hour)
				d = time.Duration(1+rng.IntN(72)) * time.Hour
			default:
				d = time.Duration(rng.Int64N(int64(30 * 24 * time.Hour)))
			}
			periods = append(periods, admin.Period{From: from, To: from.Add(d)})
		}
		periods = append(periods, admin.Period{From: base.Add(-60 * 24 * time.Hour), To: base.Add(time.Hour)})

		total, counts, err := store.UserCounts(ctx, periods)
		if err != nil {
			t.Fatal(err)
		}
		if want := queryInt(t, pool, `SELECT count(*) FROM users WHERE deleted_at IS NULL`); total != want {
			t.Fatalf("%s: total users %d, want %d", label, total, want)
		}
		betTotal, per, err := store.BetFigures(ctx, periods)
		if err != nil {
			t.Fatal(err)
		}
		compareFigures(t, pool, label+": all bets", betTotal, `TRUE`)
		for i, p := range periods {
			want := queryInt(t, pool, `SELECT count(*) FROM users WHERE deleted_at IS NULL AND created_at >= $1 AND created_at < $2`, p.From, p.To)
			if counts[i] != want {
				t.Fatalf("%s: users in %v: %d, want %d", label, p, counts[i], want)
			}
			compareFigures(t, pool, fmt.Sprintf("%s: bets in %v", label, p), per[i],
				`created_at >= $1 AND created_at < $2`, p.From, p.To)
		}
		active, err := store.ActivePlayers(ctx, periods[0])
		if err != nil {
			t.Fatal(err)
		}
		if want := queryInt(t, pool, `SELECT count(DISTINCT user_id) FROM bets WHERE created_at >= $1 AND created_at < $2`,
			periods[0].From, periods[0].To); active != want {
			t.Fatalf("%s: active players %d, want %d", label, active, want)
		}
	}
	check("triggers, nothing folded")
	if queryInt(t, pool, `SELECT count(*) FROM bet_stats_pending`) == 0 {
		t.Fatal("bet changes left no pending statistics")
	}
	// Fold half way: some changes after the fold stay pending.
	if n, err := postgres.FoldBetStats(ctx, pool); err != nil || n == 0 {
		t.Fatalf("fold: %d %v", n, err)
	}
	if left := queryInt(t, pool, `SELECT count(*) FROM bet_stats_pending`); left != 0 {
		t.Fatalf("%d rows pending after a fold", left)
	}
	mustExec(t, pool, `UPDATE bets SET payout = payout + 1 WHERE nonce % 7 = 0`)
	mustExec(t, pool, `DELETE FROM bets WHERE id = ANY($1)`, bets[20:30])
	check("triggers, folded and pending")
	if _, err := postgres.FoldBetStats(ctx, pool); err != nil {
		t.Fatal(err)
	}
	check("triggers, folded")
	if err := postgres.RebuildStats(ctx, pool); err != nil {
		t.Fatal(err)
	}
	check("rebuilt")
}

func compareFigures(t *testing.T, pool *pgxpool.Pool, label string, got admin.ByGame, where string, args ...any) {
	t.Helper()
	rows, err := pool.Query(context.Background(), `
		SELECT game, count(*), sum(amount)::text, coalesce(sum(amount) FILTER (WHERE status = 'settled'), 0)::text, sum(payout)::text
		FROM bets WHERE `+where+` GROUP BY game`, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	want := map[string]string{}
	for rows.Next() {
		var game, w, sw, p string
		var n int64
		if err := rows.Scan(&game, &n, &w, &sw, &p); err != nil {
			t.Fatal(err)
		}
		want[game] = fmt.Sprintf("%d %s %s %s", n, w, sw, p)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	for _, game := range []string{"dice", "plinko", "keno", "mines", "pump", "blackjack"} {
		f := got[game]
		g := fmt.Sprintf("%d %s %s %s", f.Bets, f.Wagered.Units(), f.SettledWagered.Units(), f.PaidOut.Units())
		w, ok := want[game]
		if !ok {
			w = "0 0 0 0"
		}
		if g != w {
			t.Fatalf("%s: %s = %s, want %s (bets wagered settled paid)", label, game, g, w)
		}
	}
}

func mustExec(t testing.TB, pool *pgxpool.Pool, sql string, args ...any) {
	t.Helper()
	if _, err := pool.Exec(context.Background(), sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// pairNonceSQL is a pair's nonce ($1): the player's row keeps the active
// pair's (migration 00028), the pair's row a revealed one's.
const pairNonceSQL = `SELECT CASE WHEN u.seed_pair = p.id THEN u.seed_nonce ELSE p.nonce END
	FROM seed_pairs p JOIN users u ON u.id = p.user_id WHERE p.id = $1`

// setPairNonce sets the active pair's nonce where bets move it on: the
// player's row, and the pair's copy (migration 00028).
func setPairNonce(t *testing.T, pool *pgxpool.Pool, pair uuid.UUID, nonce int64) {
	t.Helper()
	mustExec(t, pool, `WITH p AS (UPDATE seed_pairs SET nonce = $2 WHERE id = $1 RETURNING id)
		UPDATE users SET seed_nonce = $2 WHERE seed_pair = (SELECT id FROM p)`, pair, nonce)
}

func queryInt(t *testing.T, pool *pgxpool.Pool, sql string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := pool.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}
