// Package postgres is the Postgres side of Fairplay: the connection pool,
// the embedded schema migrations, and the stores that implement the domain
// packages' store interfaces. Queries take a pool or a transaction (DB) so a
// use case can run several of them in one transaction.
package postgres

import (
	"context"
	"errors"
	"fmt"
	neturl "net/url"
	"runtime"
	"strings"
	"time"

	"github.com/exaring/otelpgx"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// DB is what a query needs: a pool or a transaction.
type DB interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
}

// Open connects a pool to url, traced with OpenTelemetry, and pings it.
func Open(ctx context.Context, url string) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("parse DATABASE_URL: %w", err)
	}
	cfg.ConnConfig.Tracer = otelpgx.NewTracer()
	// pgxpool's default (4 or GOMAXPROCS) starves a server that holds a
	// connection for each bet's transaction: measured with `make bench`, dice
	// at 32 players went from 574 to 721 bets/s with 16. The URL's
	// pool_max_conns still wins.
	if !strings.Contains(url, "pool_max_conns") {
		cfg.MaxConns = int32(max(16, 4*runtime.GOMAXPROCS(0)))
	}
	if cfg.MaxConnIdleTime == 0 || cfg.MaxConnIdleTime == 30*time.Minute {
		cfg.MaxConnIdleTime = 5 * time.Minute
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open postgres pool: %w", err)
	}
	pingCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := pool.Ping(pingCtx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("connect to postgres: %w", err)
	}
	return pool, nil
}

// InTx runs fn in a transaction on pool, committing when fn returns nil and
// rolling back otherwise.
func InTx(ctx context.Context, pool *pgxpool.Pool, fn func(tx pgx.Tx) error) error {
	return pgx.BeginFunc(ctx, pool, fn)
}

// Postgres error codes the stores translate into domain errors.
const (
	codeUniqueViolation = "23505"
	codeCheckViolation  = "23514"
)

// constraintError returns the violated constraint's name when err is a
// violation of the given class, or "".
func constraintError(err error, code string) string {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == code {
		return pgErr.ConstraintName
	}
	return ""
}

// withoutPoolParams drops pgxpool's own pool_* parameters from a connection
// URL, for the plain (database/sql) connections of the migrator, which would
// otherwise send them to the server as unknown settings.
func withoutPoolParams(raw string) string {
	u, err := neturl.Parse(raw)
	if err != nil || u.RawQuery == "" {
		return raw
	}
	q := u.Query()
	for k := range q {
		if strings.HasPrefix(k, "pool_") {
			q.Del(k)
		}
	}
	u.RawQuery = q.Encode()
	return u.String()
}
