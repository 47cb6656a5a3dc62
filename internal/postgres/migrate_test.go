package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/pressly/goose/v3/lock"

	"github.com/fairplay/fairplay/internal/postgres"
	"github.com/fairplay/fairplay/internal/postgres/pgtest"
)

func TestServeRefusesUnmigratedDatabase(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := pgtest.EmptyURL(t)
	pool, err := postgres.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	err = postgres.CheckMigrated(ctx, pool)
	if !errors.Is(err, postgres.ErrNotMigrated) || !strings.Contains(err.Error(), "fairplay migrate") {
		t.Fatalf("unmigrated database: %v", err)
	}
	if err := postgres.Migrate(ctx, url, slog.New(slog.NewTextHandler(io.Discard, nil))); err != nil {
		t.Fatal(err)
	}
	if err := postgres.CheckMigrated(ctx, pool); err != nil {
		t.Fatalf("after migrate: %v", err)
	}
	// Migrating again is a no-op.
	if err := postgres.Migrate(ctx, url, slog.New(slog.NewTextHandler(io.Discard, nil))); err != nil {
		t.Fatal(err)
	}
}

func TestBalanceCannotGoNegative(t *testing.T) {
	t.Parallel()
	pool := pgtest.New(t)
	ctx := context.Background()
	_, err := pool.Exec(ctx, `INSERT INTO users (id, username, email, password_hash, balance) VALUES (gen_random_uuid(), 'neg', 'n@x.io', 'h', -1)`)
	if err == nil || !strings.Contains(err.Error(), "users_balance_non_negative") {
		t.Fatalf("negative balance accepted: %v", err)
	}
}

func TestMigrateIgnoresPoolParameters(t *testing.T) {
	t.Parallel()
	url := pgtest.EmptyURL(t) + "&pool_max_conns=7&pool_min_conns=1"
	if err := postgres.Migrate(context.Background(), url, slog.New(slog.NewTextHandler(io.Discard, nil))); err != nil {
		t.Fatalf("migrate with pool parameters: %v", err)
	}
	pool, err := postgres.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if got := pool.Config().MaxConns; got != 7 {
		t.Fatalf("pool_max_conns ignored: %d", got)
	}
}

// Two or more `fairplay migrate` runners at once (a retried operator Job
// while the old one still runs, or a human) must not race: every runner
// succeeds, each migration is applied exactly once, and the schema ends at
// the latest version.
func TestConcurrentMigrationsApplyEachOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := pgtest.EmptyURL(t)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	const runners = 4
	start := make(chan struct{})
	errs := make(chan error, runners)
	var wg sync.WaitGroup
	for range runners {
		wg.Go(func() {
			<-start
			errs <- postgres.Migrate(ctx, url, log)
		})
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("concurrent migrate: %v", err)
		}
	}

	pool, err := postgres.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if err := postgres.CheckMigrated(ctx, pool); err != nil {
		t.Fatalf("after concurrent migrations: %v", err)
	}
	rows, err := pool.Query(ctx, `SELECT version_id, count(*) FROM goose_db_version GROUP BY version_id HAVING count(*) > 1`)
	if err != nil {
		t.Fatal(err)
	}
	dups, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (string, error) {
		var v, n int64
		err := r.Scan(&v, &n)
		return fmt.Sprintf("version %d applied %d times", v, n), err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(dups) > 0 {
		t.Errorf("migrations applied more than once: %v", dups)
	}
	var latest, applied int64
	if err := pool.QueryRow(ctx, `SELECT max(version_id), count(*) FILTER (WHERE version_id > 0) FROM goose_db_version`).Scan(&latest, &applied); err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob("migrations/*.sql")
	if err != nil || len(files) == 0 {
		t.Fatalf("migration files: %v %v", files, err)
	}
	want, err := strconv.ParseInt(strings.SplitN(filepath.Base(files[len(files)-1]), "_", 2)[0], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	if latest != want || applied != int64(len(files)) {
		t.Errorf("schema at version %d with %d migrations applied; want version %d with %d", latest, applied, want, len(files))
	}
}

// A server starting while a runner holds the migrations lock reads the
// schema version without waiting for the lock.
func TestCheckMigratedIgnoresTheMigrationsLock(t *testing.T) {
	t.Parallel()
	pool := pgtest.New(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	holder, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Release()
	if _, err := holder.Exec(ctx, `SELECT pg_advisory_lock($1)`, lock.DefaultLockID); err != nil {
		t.Fatal(err)
	}
	defer holder.Exec(context.Background(), `SELECT pg_advisory_unlock($1)`, lock.DefaultLockID) //nolint:errcheck
	if err := postgres.CheckMigrated(ctx, pool); err != nil {
		t.Fatalf("check with the migrations lock held: %v", err)
	}
}

// A rollback of spec.image runs the previous release against a database a
// newer release has migrated further (docs/upgrades.md, expand/contract):
// its migrate is a no-op that keeps the newer migration, and it serves.
func TestOlderReleaseRunsOnANewerSchema(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := pgtest.EmptyURL(t)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	if err := postgres.Migrate(ctx, url, quiet); err != nil {
		t.Fatal(err)
	}
	pool, err := postgres.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	// What the newer release's expand-only migration left behind.
	if _, err := pool.Exec(ctx, `CREATE TABLE newer_release_table (id bigint PRIMARY KEY);
		ALTER TABLE users ADD COLUMN newer_release_note text;
		INSERT INTO goose_db_version (version_id, is_applied) VALUES (99990, true)`); err != nil {
		t.Fatal(err)
	}
	if err := postgres.Migrate(ctx, url, quiet); err != nil {
		t.Fatalf("the older release's migrate on a newer schema: %v", err)
	}
	if err := postgres.CheckMigrated(ctx, pool); err != nil {
		t.Fatalf("the older release refuses a newer schema: %v", err)
	}
	var newest int64
	if err := pool.QueryRow(ctx, `SELECT max(version_id) FROM goose_db_version WHERE is_applied`).Scan(&newest); err != nil {
		t.Fatal(err)
	}
	if newest != 99990 {
		t.Fatalf("schema version %d after the older release's migrate, want the newer 99990 kept", newest)
	}
}
