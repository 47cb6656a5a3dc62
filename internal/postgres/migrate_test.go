package postgres_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"

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
