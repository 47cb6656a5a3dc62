// Package postgres is the Postgres side of Fairplay: the connection pool,
// the embedded schema migrations, and the stores that implement the domain
// packages' store interfaces. Queries take a pool or a transaction (DB) so a
// use case can run several of them in one transaction.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	neturl "net/url"
	"regexp"
	"runtime"
	"strings"
	"syscall"
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
//
// The URL may name several hosts (a primary and its standbys, in any order)
// with target_session_attrs=read-write (or primary): each new connection then
// tries the hosts in turn and keeps the first that accepts writes, so after a
// failover the pool reconnects to the promoted standby by itself. A URL with
// several hosts and no such attribute is refused, since a connection could
// land on a standby and every bet through it would fail. A connection that
// meets a read-only server (SQLSTATE 25006: the server it reached was demoted
// or fenced after it connected) is closed at once rather than returned to the
// pool, so the pool's next connection looks for the primary again.
func Open(ctx context.Context, url string) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("parse DATABASE_URL: %w", err)
	}
	if err := checkHosts(url, cfg.ConnConfig.Config); err != nil {
		return nil, err
	}
	cfg.ConnConfig.Tracer = otelpgx.NewTracer()
	// The batch statements' array parameters, written by themselves
	// (pgarray.go).
	cfg.AfterConnect = func(_ context.Context, c *pgx.Conn) error {
		registerBinaryArrays(c.TypeMap())
		return nil
	}
	onPgError := cfg.ConnConfig.OnPgError
	cfg.ConnConfig.OnPgError = func(c *pgconn.PgConn, pgErr *pgconn.PgError) bool {
		if pgErr.Code == codeReadOnlyTransaction {
			return false // close: this server no longer takes writes
		}
		return onPgError == nil || onPgError(c, pgErr)
	}
	// Four connections per core. More connections only add Postgres
	// backends competing for the same cores: dice at 64 players on 2 cores
	// measured (when a bet held its connection for two round trips) 2160 bets/s
	// with 4 connections, 2635 with 6, 2453–2731 with 8, 2558 with 16 and
	// 2353 with 32 (p99 46, 31, 33–36, 41 and 56 ms). The URL's
	// pool_max_conns still wins.
	if !strings.Contains(url, "pool_max_conns") {
		cfg.MaxConns = int32(max(4, 4*runtime.GOMAXPROCS(0)))
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

// targetSessionAttrs finds the target_session_attrs setting of a connection
// string, in either form (URL or key=value).
var targetSessionAttrs = regexp.MustCompile(`target_session_attrs\s*=\s*'?([A-Za-z-]+)`)

// checkHosts refuses a connection string naming several servers without
// asking for the writable one.
func checkHosts(url string, cfg pgconn.Config) error {
	hosts := map[string]bool{fmt.Sprintf("%s:%d", cfg.Host, cfg.Port): true}
	for _, f := range cfg.Fallbacks { // sslmode=prefer adds a fallback per host too
		hosts[fmt.Sprintf("%s:%d", f.Host, f.Port)] = true
	}
	if len(hosts) < 2 {
		return nil
	}
	attrs := "any"
	if m := targetSessionAttrs.FindStringSubmatch(url); m != nil {
		attrs = strings.ToLower(m[1])
	}
	if attrs != "read-write" && attrs != "primary" {
		return fmt.Errorf("DATABASE_URL names %d servers with target_session_attrs=%s: add target_session_attrs=read-write, "+
			"so that the server connects to the primary and not to a standby", len(hosts), attrs)
	}
	return nil
}

// CheckWritable asks the server behind one of the pool's connections whether
// it takes writes: nil from a primary, an error when it cannot be reached or
// is a standby (in recovery) or otherwise read-only. Readiness uses it, so a
// server whose database was demoted under it leaves the load balancers until
// the pool finds the new primary. A connection found read-only is closed.
func CheckWritable(ctx context.Context, pool *pgxpool.Pool) error {
	c, err := pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer c.Release()
	var readOnly bool
	if err := c.QueryRow(ctx, `SELECT pg_is_in_recovery() OR current_setting('transaction_read_only')::bool`).Scan(&readOnly); err != nil {
		return err
	}
	if readOnly {
		_ = c.Conn().Close(ctx) // released closed, the pool drops it
		return ErrReadOnly
	}
	return nil
}

// ErrReadOnly reports a database server that does not take writes (a standby).
var ErrReadOnly = errors.New("the database server is read-only (a standby): waiting for a primary")

// InTx runs fn in a transaction on pool, committing when fn returns nil and
// rolling back otherwise.
func InTx(ctx context.Context, pool *pgxpool.Pool, fn func(tx pgx.Tx) error) error {
	return pgx.BeginFunc(ctx, pool, fn)
}

// Postgres error codes the stores translate into domain errors.
const (
	codeUniqueViolation = "23505"
	codeCheckViolation  = "23514"
	// codeReadOnlyTransaction is read_only_sql_transaction: a write reached a
	// server that does not take writes (a standby, or a primary fenced read-only
	// during a failover).
	codeReadOnlyTransaction = "25006"
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

// IsUnavailable reports whether err means Postgres could not be reached or
// went away (refused or dropped connections, a server shutting down,
// starting up or out of connection slots), rather than a bad query: the
// transport answers those 503, not 500.
func IsUnavailable(err error) bool {
	if err == nil {
		return false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch {
		case strings.HasPrefix(pgErr.Code, "08"), // connection exception
			pgErr.Code == "57P01", pgErr.Code == "57P02", pgErr.Code == "57P03", // shutdown, crash, starting up
			pgErr.Code == "53300",                 // too many connections
			pgErr.Code == codeReadOnlyTransaction: // a standby or a fenced primary: a failover under way
			return true
		}
		return false
	}
	var connectErr *pgconn.ConnectError
	if errors.As(err, &connectErr) {
		return true
	}
	var netErr net.Error
	if errors.As(err, &netErr) {
		return true
	}
	return errors.Is(err, ErrReadOnly) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		pgconn.SafeToRetry(err) || strings.Contains(err.Error(), "conn closed")
}
