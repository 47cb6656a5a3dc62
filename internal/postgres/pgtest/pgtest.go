// Package pgtest gives tests their own freshly migrated Postgres database.
// The first caller migrates a template database (named for a hash of the
// embedded migrations, created under an advisory lock so parallel test
// binaries agree); every test then gets a cheap copy (CREATE DATABASE ...
// TEMPLATE), dropped when the test ends. DATABASE_URL names the server; a
// test that cannot reach it fails, it never skips.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fairplay/fairplay/internal/postgres"
)

var (
	templateOnce sync.Once
	templateName string
	templateErr  error
)

// ServerURL returns DATABASE_URL or fails the test.
func ServerURL(t testing.TB) string {
	t.Helper()
	u := os.Getenv("DATABASE_URL")
	if u == "" {
		t.Fatal("DATABASE_URL is not set: run the tests with `make test`, which starts a local Postgres")
	}
	return u
}

func withDatabase(raw, name string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", err
	}
	u.Path = "/" + name
	return u.String(), nil
}

func prepareTemplate(ctx context.Context, serverURL string) (string, error) {
	name := "fairplay_tmpl_" + postgres.MigrationsHash()[:12]
	conn, err := pgx.Connect(ctx, serverURL)
	if err != nil {
		return "", fmt.Errorf("connect to %s: %w", serverURL, err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock(727274)`); err != nil {
		return "", err
	}
	defer conn.Exec(context.Background(), `SELECT pg_advisory_unlock(727274)`) //nolint:errcheck
	var exists bool
	if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, name).Scan(&exists); err != nil {
		return "", err
	}
	if exists {
		return name, nil
	}
	building := name + "_building"
	_, _ = conn.Exec(ctx, `DROP DATABASE IF EXISTS `+pgx.Identifier{building}.Sanitize())
	if _, err := conn.Exec(ctx, `CREATE DATABASE `+pgx.Identifier{building}.Sanitize()); err != nil {
		return "", fmt.Errorf("create template: %w", err)
	}
	tu, err := withDatabase(serverURL, building)
	if err != nil {
		return "", err
	}
	if err := postgres.Migrate(ctx, tu, slog.New(slog.NewTextHandler(io.Discard, nil))); err != nil {
		return "", err
	}
	if _, err := conn.Exec(ctx, `ALTER DATABASE `+pgx.Identifier{building}.Sanitize()+` RENAME TO `+pgx.Identifier{name}.Sanitize()); err != nil {
		return "", fmt.Errorf("publish template: %w", err)
	}
	return name, nil
}

// URL creates a migrated database for this test and returns its URL.
func URL(t testing.TB) string {
	t.Helper()
	server := ServerURL(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	templateOnce.Do(func() { templateName, templateErr = prepareTemplate(ctx, server) })
	if templateErr != nil {
		t.Fatalf("prepare template database: %v", templateErr)
	}
	return create(t, server, templateName)
}

// EmptyURL creates an empty (unmigrated) database for this test.
func EmptyURL(t testing.TB) string {
	t.Helper()
	return create(t, ServerURL(t), "template0")
}

func create(t testing.TB, server, template string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "fairplay_test_" + strings.ToLower(hex.EncodeToString(b))
	conn, err := pgx.Connect(ctx, server)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `CREATE DATABASE `+pgx.Identifier{name}.Sanitize()+` TEMPLATE `+pgx.Identifier{template}.Sanitize()); err != nil {
		t.Fatalf("create test database: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, server)
		if err != nil {
			t.Errorf("drop test database: %v", err)
			return
		}
		defer c.Close(ctx)
		if _, err := c.Exec(ctx, `DROP DATABASE IF EXISTS `+pgx.Identifier{name}.Sanitize()+` WITH (FORCE)`); err != nil {
			t.Errorf("drop test database: %v", err)
		}
	})
	u, err := withDatabase(server, name)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// New returns a pool on a fresh migrated database, closed when the test ends.
func New(t testing.TB) *pgxpool.Pool {
	t.Helper()
	u := URL(t)
	pool, err := postgres.Open(context.Background(), u)
	if err != nil {
		t.Fatalf("open test database: %v", err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// AwaitActivity returns once pg_stat_activity of pool's database shows a
// backend other than the asking one where says (or, when !present, shows
// none), polling for at most 10 seconds: how a test waits for a statement to
// wait for a lock, or to be done, that it cannot see from its own side.
// what names the state in the failure.
func AwaitActivity(t testing.TB, pool *pgxpool.Pool, what string, present bool, where string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; {
		var there bool
		if err := pool.QueryRow(context.Background(), `SELECT EXISTS (SELECT 1 FROM pg_stat_activity
			WHERE datname = current_database() AND pid <> pg_backend_pid() AND `+where+`)`).Scan(&there); err != nil {
			t.Fatal(err)
		}
		if there == present {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("never seen: %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
