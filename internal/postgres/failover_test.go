package postgres_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fairplay/fairplay/internal/postgres"
	"github.com/fairplay/fairplay/internal/postgres/pgtest"
)

// A connection string naming several servers must ask for the writable one,
// or the pool could settle on a standby.
func TestOpenRefusesSeveralServersWithoutReadWrite(t *testing.T) {
	t.Parallel()
	// Port 1 refuses at once: the accepted strings fail to connect instead.
	const hosts = "postgres://u@127.0.0.1:1,127.0.0.2:1/db?sslmode=disable&connect_timeout=1"
	cases := []struct {
		name, url string
		refused   bool
	}{
		{"two hosts, no attribute", hosts, true},
		{"two hosts, any", hosts + "&target_session_attrs=any", true},
		{"two hosts, prefer-standby", hosts + "&target_session_attrs=prefer-standby", true},
		{"key=value form, no attribute", "host=127.0.0.1,127.0.0.2 port=1 user=u dbname=db sslmode=disable connect_timeout=1", true},
		{"two hosts, read-write", hosts + "&target_session_attrs=read-write", false},
		{"two hosts, primary", hosts + "&target_session_attrs=primary", false},
		{"key=value form, read-write", "host=127.0.0.1,127.0.0.2 port=1 user=u dbname=db sslmode=disable connect_timeout=1 target_session_attrs=read-write", false},
		// sslmode=prefer makes a fallback of the same server: one host.
		{"one host, sslmode=prefer", "postgres://u@127.0.0.1:1/db?sslmode=prefer&connect_timeout=1", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			pool, err := postgres.Open(ctx, c.url)
			if err == nil {
				pool.Close()
				t.Fatal("Open succeeded; nothing listens on port 1")
			}
			if refused := strings.Contains(err.Error(), "add target_session_attrs=read-write"); refused != c.refused {
				t.Errorf("Open: %v; want refused for the missing attribute: %t", err, c.refused)
			}
		})
	}
}

// A connection whose server turned read-only under it (a standby, a fenced
// primary) is closed on the first refused write, so the pool does not hand it
// out again, and the refusal counts as the database being unavailable (503).
func TestReadOnlyRefusalClosesTheConnection(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	pool, err := postgres.Open(ctx, pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	c, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, `SET default_transaction_read_only = on`); err != nil {
		t.Fatal(err)
	}
	_, err = c.Exec(ctx, `CREATE TABLE failover_probe (x int)`)
	if err == nil {
		t.Fatal("a write on a read-only connection succeeded")
	}
	if !postgres.IsUnavailable(err) {
		t.Errorf("IsUnavailable(%v) = false, want true (a failover under way answers 503)", err)
	}
	if !c.Conn().IsClosed() {
		t.Error("the connection that met a read-only server is still open")
	}
	c.Release()
	if err := postgres.CheckWritable(ctx, pool); err != nil {
		t.Errorf("CheckWritable on a fresh connection to the primary: %v", err)
	}
}

// Readiness asks whether the server reached takes writes: one that does not
// (here forced read-only for the connection; a standby in the failover
// drill) is not ready.
func TestCheckWritableRefusesAReadOnlyServer(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	cfg, err := pgxpool.ParseConfig(pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	// The first server only, as is, whatever DATABASE_URL asks of it
	// (target_session_attrs=read-write would refuse the connection).
	cfg.ConnConfig.Fallbacks, cfg.ConnConfig.ValidateConnect = nil, nil
	cfg.ConnConfig.RuntimeParams["default_transaction_read_only"] = "on"
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	err = postgres.CheckWritable(ctx, pool)
	if !errors.Is(err, postgres.ErrReadOnly) {
		t.Fatalf("CheckWritable: %v, want ErrReadOnly", err)
	}
	if !postgres.IsUnavailable(err) {
		t.Errorf("IsUnavailable(ErrReadOnly) = false")
	}
	// A closed connection is released into puddle's Destroy, which removes
	// it from the pool in a goroutine of its own: wait for that, boundedly.
	n := pool.Stat().TotalConns()
	for i := 0; n != 0 && i < 100; i++ {
		time.Sleep(50 * time.Millisecond)
		n = pool.Stat().TotalConns()
	}
	if n != 0 {
		t.Errorf("the read-only connection stayed in the pool (%d connections)", n)
	}
}
