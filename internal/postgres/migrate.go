package postgres

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// ErrNotMigrated means the database schema is older than this binary.
var ErrNotMigrated = errors.New("database schema is not up to date")

// The migrations lock: Migrate polls for it every migrationLockPoll, for
// up to migrationLockWait (the operator's migrations Job has a 30-minute
// deadline, so a runner waiting behind a long migration is not given up on
// earlier than the Job itself would be).
const (
	migrationLockPoll = 1    // seconds
	migrationLockWait = 1800 // seconds
)

func provider(db *sql.DB, opts ...goose.ProviderOption) (*goose.Provider, error) {
	sub, err := fs.Sub(migrationFiles, "migrations")
	if err != nil {
		return nil, err
	}
	return goose.NewProvider(goose.DialectPostgres, db, sub, opts...)
}

// Migrate applies every pending embedded migration to the database at url and
// logs each one. It is what `fairplay migrate` and the operator's Job run.
//
// Runners take a Postgres session-level advisory lock (goose's session
// locker) around the migrations, so two at once — an operator Job retried
// while the previous one still runs, or a person running `fairplay migrate`
// by hand — apply each migration once: the second waits for the first and
// then finds nothing left to do. The lock belongs to the connection, so a
// runner that dies releases it with its session.
func Migrate(ctx context.Context, url string, log *slog.Logger) error {
	db, err := sql.Open("pgx", withoutPoolParams(url))
	if err != nil {
		return fmt.Errorf("open database: %w", err)
	}
	defer db.Close()
	locker, err := lock.NewPostgresSessionLocker(lock.WithLockTimeout(migrationLockPoll, migrationLockWait/migrationLockPoll))
	if err != nil {
		return fmt.Errorf("migrations lock: %w", err)
	}
	p, err := provider(db, goose.WithSessionLocker(locker))
	if err != nil {
		return fmt.Errorf("load migrations: %w", err)
	}
	results, err := p.Up(ctx)
	for _, r := range results {
		log.Info("migration applied", "version", r.Source.Version, "file", r.Source.Path, "duration", r.Duration)
	}
	if err != nil {
		return fmt.Errorf("apply migrations: %w", err)
	}
	v, err := p.GetDBVersion(ctx)
	if err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	log.Info("database schema is up to date", "version", v)
	return nil
}

// CheckMigrated returns an error wrapping ErrNotMigrated, with the versions in
// its text, when the database behind pool lacks any embedded migration. It
// only reads the version table and takes no lock: a server starting while a
// migration runs is told the schema is behind, not held up behind the lock.
func CheckMigrated(ctx context.Context, pool *pgxpool.Pool) error {
	db := stdlib.OpenDBFromPool(pool)
	defer db.Close()
	p, err := provider(db)
	if err != nil {
		return fmt.Errorf("load migrations: %w", err)
	}
	has, err := p.HasPending(ctx)
	if err != nil {
		return fmt.Errorf("%w: cannot read the schema version (%w); run `fairplay migrate`", ErrNotMigrated, err)
	}
	if has {
		cur, _ := p.GetDBVersion(ctx)
		sources := p.ListSources()
		want := sources[len(sources)-1].Version
		return fmt.Errorf("%w: database is at version %d, this server needs %d; run `fairplay migrate`", ErrNotMigrated, cur, want)
	}
	return nil
}

// MigrationsHash identifies the embedded migrations' content (for caching
// migrated template databases in tests).
func MigrationsHash() string {
	h := sha256.New()
	_ = fs.WalkDir(migrationFiles, "migrations", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := migrationFiles.ReadFile(path)
		if err != nil {
			return err
		}
		h.Write([]byte(path))
		h.Write(b)
		return nil
	})
	return hex.EncodeToString(h.Sum(nil))
}
