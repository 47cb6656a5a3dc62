// Command adminbench measures the admin dashboard's queries on a seeded
// database (see test/seed) and prints p50/p99 latencies. It calls the admin
// use cases (internal/admin with the Postgres store), i.e. everything a
// request does but JSON and HTTP. It is not part of `make test`.
//
//	go run ./test/adminbench -database postgres://.../fairplay_seed
//
// With -baseline it also times the naive queries the rollups replace, and the
// cost of the statistics triggers on a bet insert.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fairplay/fairplay/internal/accounts"
	"github.com/fairplay/fairplay/internal/admin"
	"github.com/fairplay/fairplay/internal/postgres"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "adminbench:", err)
		os.Exit(1)
	}
}

func run() error {
	dbURL := flag.String("database", os.Getenv("DATABASE_URL"), "database URL of a seeded database (default DATABASE_URL)")
	n := flag.Int("n", 200, "timed calls per case")
	baseline := flag.Bool("baseline", false, "also time the naive queries and the triggers' cost on bet inserts")
	flag.Parse()
	if *dbURL == "" {
		return errors.New("-database or DATABASE_URL is required")
	}
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, *dbURL)
	if err != nil {
		return err
	}
	defer pool.Close()
	if err := postgres.CheckMigrated(ctx, pool); err != nil {
		return err
	}
	var users, bets int64
	if err := pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM users), (SELECT count(*) FROM bets)`).Scan(&users, &bets); err != nil {
		return err
	}
	fmt.Printf("database: %d users, %d bets; %d timed calls per case after 5 warm-up calls\n\n", users, bets, *n)

	svc := admin.NewService(admin.Options{Store: postgres.NewAdminStore(pool)})
	p := accounts.Principal{UserID: uuid.New(), IsAdmin: true}
	rows, err := pool.Query(ctx, `SELECT username FROM users TABLESAMPLE SYSTEM (1) WHERE deleted_at IS NULL LIMIT 500`)
	if err != nil {
		return err
	}
	samples, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return fmt.Errorf("sample usernames: %w", err)
	}
	if len(samples) == 0 {
		return errors.New("no users: is the database seeded? (go run ./test/seed)")
	}
	rng := rand.New(rand.NewPCG(7, 7))
	pick := func() string { return samples[rng.IntN(len(samples))] }
	pages := max(1, int(users/10))
	ptr := func(v int) *int { return &v }

	cases := []struct {
		name string
		fn   func() error
	}{
		{"GET /api/auth/stats/users", func() error { _, err := svc.UserStats(ctx, p); return err }},
		{"GET /api/auth/stats/wagering", func() error { _, err := svc.WageringStats(ctx, p); return err }},
		{"GET /api/auth/stats/activity", func() error { _, err := svc.Activity(ctx, p); return err }},
		{"GET /api/auth/users page 1", func() error { _, err := svc.ListUsers(ctx, p, ptr(1), ptr(10)); return err }},
		{"GET /api/auth/users random page 1-100", func() error {
			_, err := svc.ListUsers(ctx, p, ptr(1+rng.IntN(100)), ptr(10))
			return err
		}},
		{"GET /api/auth/users random page (any depth)", func() error {
			_, err := svc.ListUsers(ctx, p, ptr(1+rng.IntN(pages)), ptr(10))
			return err
		}},
		{"search: a full username (1-11 hits)", func() error {
			_, err := svc.SearchUsers(ctx, p, pick(), ptr(1), ptr(10))
			return err
		}},
		{"search: 5-digit fragment (~50 hits)", func() error {
			_, err := svc.SearchUsers(ctx, p, fmt.Sprintf("%05d", rng.IntN(100000)), ptr(1), ptr(10))
			return err
		}},
		{"search: 'alice' (6% of users)", func() error {
			_, err := svc.SearchUsers(ctx, p, "alice", ptr(1), ptr(10))
			return err
		}},
		{"search: 'proton.me' (1/5 of users)", func() error {
			_, err := svc.SearchUsers(ctx, p, "proton.me", ptr(1), ptr(10))
			return err
		}},
		{"search: 2 letters 'al' (no trigram)", func() error {
			_, err := svc.SearchUsers(ctx, p, "al", ptr(1), ptr(10))
			return err
		}},
	}
	fmt.Printf("%-48s %9s %9s %9s\n", "case", "p50", "p99", "max")
	for _, c := range cases {
		if err := timeCase(c.name, *n, c.fn); err != nil {
			return err
		}
	}
	if !*baseline {
		return nil
	}

	fmt.Printf("\nbaseline: the naive queries the rollups replace (%d calls each)\n", 10)
	monthAgo := time.Now().Add(-30 * 24 * time.Hour)
	naive := []struct{ name, sql string }{
		{"count(*) live users", `SELECT count(*) FROM users WHERE deleted_at IS NULL`},
		{"sum(amount) of all bets", `SELECT sum(amount) FROM bets`},
		{"sum(amount) of the last 30 days' bets", `SELECT sum(amount) FROM bets WHERE created_at > $1`},
	}
	for _, q := range naive {
		if err := timeCase(q.name, 10, func() error {
			var args []any
			if q.name == naive[2].name {
				args = append(args, monthAgo)
			}
			_, err := pool.Exec(ctx, q.sql, args...)
			return err
		}); err != nil {
			return err
		}
	}
	return triggerCost(ctx, pool, users)
}

// triggerCost measures what the statistics triggers add to writing bets:
// one insert's latency, and the throughput of 16 concurrent writers each
// committing one bet (of a random game) per transaction, with and without
// the triggers. The bets it writes are deleted again (with the same setting,
// so the rollups stay exact).
func triggerCost(ctx context.Context, pool *pgxpool.Pool, users int64) error {
	fmt.Printf("\nstatistics triggers on bets\n")
	var nonce atomic.Int64
	nonce.Store(1 << 40)
	for _, withTriggers := range []bool{true, false} {
		role := "origin"
		label := "with triggers"
		if !withTriggers {
			role, label = "replica", "triggers off"
		}
		var mu sync.Mutex
		var ids []uuid.UUID
		insert := func(conn *pgxpool.Conn) error {
			id := uuid.New()
			k := 1 + rand.Int64N(users)
			_, err := conn.Exec(ctx, `
				INSERT INTO bets (id, user_id, game, status, amount, payout, seed_pair_id, client_seed, nonce, created_at, settled_at)
				VALUES ($1, md5('user' || $2::bigint)::uuid, $4, 'settled', 100000000, 0, md5('pair' || $2::bigint)::uuid,
				        'bench', $3, now(), now())`, id, k, nonce.Add(1), games[rand.IntN(len(games))])
			mu.Lock()
			ids = append(ids, id)
			mu.Unlock()
			return err
		}
		conn, err := pool.Acquire(ctx)
		if err != nil {
			return err
		}
		if _, err := conn.Exec(ctx, `SET session_replication_role = `+role); err != nil {
			conn.Release()
			return err
		}
		err = timeCase("insert one bet, "+label, 500, func() error { return insert(conn) })
		_, _ = conn.Exec(ctx, `RESET session_replication_role`)
		conn.Release()
		if err != nil {
			return err
		}
		var done atomic.Int64
		deadline := time.Now().Add(5 * time.Second)
		var wg sync.WaitGroup
		errs := make(chan error, 16)
		for range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c, err := pool.Acquire(ctx)
				if err != nil {
					errs <- err
					return
				}
				defer c.Release()
				defer c.Exec(context.Background(), `RESET session_replication_role`) //nolint:errcheck
				if _, err := c.Exec(ctx, `SET session_replication_role = `+role); err != nil {
					errs <- err
					return
				}
				for time.Now().Before(deadline) {
					if err := insert(c); err != nil {
						errs <- err
						return
					}
					done.Add(1)
				}
			}()
		}
		wg.Wait()
		close(errs)
		if err := <-errs; err != nil {
			return err
		}
		fmt.Printf("%-48s %9.0f bets/s\n", "16 writers, "+label, float64(done.Load())/5)
		c, err := pool.Acquire(ctx)
		if err != nil {
			return err
		}
		_, err = c.Exec(ctx, `SET session_replication_role = `+role)
		if err == nil {
			_, err = c.Exec(ctx, `DELETE FROM bets WHERE id = ANY($1)`, ids)
		}
		_, _ = c.Exec(ctx, `RESET session_replication_role`)
		c.Release()
		if err != nil {
			return fmt.Errorf("clean up: %w", err)
		}
	}
	return nil
}

var games = []string{"dice", "plinko", "keno", "mines", "pump", "blackjack"}

func timeCase(name string, n int, fn func() error) error {
	for range 5 {
		if err := fn(); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	d := make([]time.Duration, n)
	for i := range n {
		start := time.Now()
		if err := fn(); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		d[i] = time.Since(start)
	}
	slices.Sort(d)
	q := func(f float64) time.Duration { return d[min(n-1, int(f*float64(n)))] }
	fmt.Printf("%-48s %9s %9s %9s\n", name, ms(q(0.50)), ms(q(0.99)), ms(d[n-1]))
	return nil
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2fms", float64(d.Microseconds())/1000) }
