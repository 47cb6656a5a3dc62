// Command seed fills an empty Fairplay database with synthetic users, seed
// pairs and bets for load and latency measurements of the admin dashboard
// (see test/adminbench and docs/admin.md). It is not part of `make test`.
//
//	go run ./test/seed -database postgres://.../fairplay_seed -users 1000000 -bets 10000000
//
// The rows are generated inside Postgres with generate_series (nothing
// crosses the network), with the statistics triggers and foreign-key checks
// switched off for the session (session_replication_role = replica, which
// needs a superuser); the rollups are rebuilt once at the end. Users and bets
// are spread uniformly over the last -days days, in creation order (so the
// tables' physical order follows time, as it does when rows arrive one by
// one); 1% of the users are deleted. Users cannot sign in (their password hash is a placeholder) and no
// ledger entries are written, so `fairplay ledger verify` reports drift on
// such a database: it is for measurements only.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/sync/errgroup"

	"github.com/fairplay/fairplay/internal/postgres"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "seed:", err)
		os.Exit(1)
	}
}

func run() error {
	dbURL := flag.String("database", os.Getenv("DATABASE_URL"), "database URL (default DATABASE_URL); the database must be empty")
	users := flag.Int64("users", 1_000_000, "number of users")
	bets := flag.Int64("bets", 10_000_000, "number of bets")
	days := flag.Int("days", 365, "spread creation times over this many days before now")
	chunk := flag.Int64("chunk", 500_000, "rows per INSERT statement")
	workers := flag.Int("workers", 2, "concurrent INSERT statements")
	flag.Parse()
	if *dbURL == "" {
		return errors.New("-database or DATABASE_URL is required")
	}
	ctx := context.Background()
	start := time.Now()
	if err := postgres.Migrate(ctx, *dbURL, slog.New(slog.NewTextHandler(io.Discard, nil))); err != nil {
		return err
	}
	pool, err := pgxpool.New(ctx, *dbURL)
	if err != nil {
		return err
	}
	defer pool.Close()
	var existing int64
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM (SELECT 1 FROM users LIMIT 1) x`).Scan(&existing); err != nil {
		return err
	}
	if existing > 0 {
		return errors.New("the database already has users; seed an empty database (e.g. CREATE DATABASE fairplay_seed)")
	}
	now := time.Now().UTC()
	span := fmt.Sprintf("%d days", *days)

	// Users: usernames like alice_123, emails on a few domains, 1% deleted.
	if err := inChunks(ctx, pool, "users", *users, *chunk, *workers, func(lo, hi int64) (string, []any) {
		return `
			INSERT INTO users (id, username, email, password_hash, balance, created_at, deleted_at)
			SELECT md5('user' || g)::uuid, name, name || '@' || (ARRAY['gmail.com','yahoo.com','outlook.com','proton.me','example.org'])[1 + (g / 16) % 5],
			       'seeded', (g % 100000) * 1000000, created, CASE WHEN g % 100 = 0 THEN $3::timestamptz END
			FROM (SELECT g, (ARRAY['alice','bob','carol','dave','erin','frank','grace','heidi','ivan','judy','mallory',
			                       'oscar','peggy','trent','victor','walter'])[1 + g % 16] || '_' || g AS name,
			             $3::timestamptz - $4::interval * (($5::bigint - g + random()) / $5::bigint) AS created
			      FROM generate_series($1::bigint, $2::bigint) g) s`, []any{lo, hi, now, span, *users}
	}); err != nil {
		return err
	}
	// One seed pair per user (bets.seed_pair_id references it).
	if err := inChunks(ctx, pool, "seed pairs", *users, *chunk, *workers, func(lo, hi int64) (string, []any) {
		return `
			INSERT INTO seed_pairs (id, user_id, server_seed, server_seed_hash, client_seed, created_at)
			SELECT md5('pair' || g)::uuid, md5('user' || g)::uuid, 'seeded', 'seeded', 'seeded', $3::timestamptz - $4::interval
			FROM generate_series($1::bigint, $2::bigint) g`, []any{lo, hi, now, span}
	}); err != nil {
		return err
	}
	// Bets: random player, game, stake 0.01–100 dollars, 2x with
	// probability 0.495 (RTP 99%), ids in insertion order, nonce = row number.
	if err := inChunks(ctx, pool, "bets", *bets, *chunk, *workers, func(lo, hi int64) (string, []any) {
		return `
			INSERT INTO bets (id, user_id, game, status, amount, multiplier, payout, seed_pair_id, client_seed, nonce,
			                  created_at, settled_at)
			SELECT lpad(to_hex(g), 32, '0')::uuid, md5('user' || k)::uuid, game, 'settled', amount,
			       CASE WHEN win THEN 20000 ELSE 0 END, CASE WHEN win THEN amount * 2 ELSE 0 END,
			       md5('pair' || k)::uuid, 'seeded', g, created, created
			FROM (SELECT g, 1 + floor(random() * $5::bigint)::bigint AS k,
			             (ARRAY['dice','plinko','keno','mines','pump','blackjack'])[1 + floor(random() * 6)::int] AS game,
			             (1 + floor(random() * 10000))::bigint * 1000000 AS amount,
			             random() < 0.495 AS win,
			             $3::timestamptz - $4::interval * (($6::bigint - g + random()) / $6::bigint) AS created
			      FROM generate_series($1::bigint, $2::bigint) g) s`, []any{lo, hi, now, span, *users, *bets}
	}); err != nil {
		return err
	}
	step := time.Now()
	if err := postgres.RebuildStats(ctx, pool); err != nil {
		return err
	}
	if _, err := pool.Exec(ctx, `VACUUM (ANALYZE)`); err != nil {
		return err
	}
	fmt.Printf("rollups rebuilt and tables vacuumed and analyzed in %s\n", time.Since(step).Round(time.Millisecond))
	fmt.Printf("seeded %d users and %d bets in %s\n", *users, *bets, time.Since(start).Round(time.Second))
	return nil
}

// inChunks runs the INSERT that build returns for rows [lo, hi] of 1…total,
// chunk rows at a time on workers connections, with triggers and foreign
// keys off for those sessions.
func inChunks(ctx context.Context, pool *pgxpool.Pool, what string, total, chunk int64, workers int,
	build func(lo, hi int64) (string, []any)) error {
	start := time.Now()
	next := make(chan int64)
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		defer close(next)
		for lo := int64(1); lo <= total; lo += chunk {
			select {
			case next <- lo:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return nil
	})
	for range workers {
		g.Go(func() error {
			conn, err := pool.Acquire(ctx)
			if err != nil {
				return err
			}
			defer conn.Release()
			if _, err := conn.Exec(ctx, `SET session_replication_role = replica`); err != nil {
				return fmt.Errorf("switch off triggers (needs a superuser): %w", err)
			}
			defer conn.Exec(context.Background(), `RESET session_replication_role`) //nolint:errcheck
			for lo := range next {
				hi := min(lo+chunk-1, total)
				sql, args := build(lo, hi)
				if _, err := conn.Exec(ctx, sql, args...); err != nil {
					return fmt.Errorf("insert %s %d-%d: %w", what, lo, hi, err)
				}
				fmt.Printf("%s: %d/%d (%s)\n", what, hi, total, time.Since(start).Round(time.Second))
			}
			return nil
		})
	}
	return g.Wait()
}
