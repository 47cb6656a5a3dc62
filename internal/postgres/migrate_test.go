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
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
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

// migratedDatabase is a new database migrated by Migrate, as a release's
// migrate leaves it (not pgtest's template), and a pool on it.
func migratedDatabase(t *testing.T) (string, *pgxpool.Pool) {
	t.Helper()
	ctx := context.Background()
	url := pgtest.EmptyURL(t)
	if err := postgres.Migrate(ctx, url, slog.New(slog.NewTextHandler(io.Discard, nil))); err != nil {
		t.Fatal(err)
	}
	return url, openPool(t, url)
}

// databaseAt is a new database migrated up to version, and a pool on it,
// for the tests of one migration.
func databaseAt(t *testing.T, version int64) (string, *pgxpool.Pool) {
	t.Helper()
	url := pgtest.EmptyURL(t)
	if err := postgres.MigrateUpTo(context.Background(), url, version); err != nil {
		t.Fatal(err)
	}
	return url, openPool(t, url)
}

// openPool opens a pool on url, closed when the test ends.
func openPool(t *testing.T, url string) *pgxpool.Pool {
	t.Helper()
	pool, err := postgres.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// A rollback of spec.image runs the previous release against a database a
// newer release has migrated further (docs/upgrades.md, expand/contract):
// its migrate is a no-op that keeps the newer migration, and it serves.
func TestOlderReleaseRunsOnANewerSchema(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url, pool := migratedDatabase(t)
	// What the newer release's expand-only migration left behind.
	if _, err := pool.Exec(ctx, `CREATE TABLE newer_release_table (id bigint PRIMARY KEY);
		ALTER TABLE users ADD COLUMN newer_release_note text;
		INSERT INTO goose_db_version (version_id, is_applied) VALUES (99990, true)`); err != nil {
		t.Fatal(err)
	}
	if err := postgres.Migrate(ctx, url, slog.New(slog.NewTextHandler(io.Discard, nil))); err != nil {
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

// Bets and ledger entries refer to their player and seed pair without
// foreign-key checks (migration 00016): no player or pair is ever deleted,
// and the database refuses to, so no entry can lose them.
func TestPlayersAndSeedPairsAreNeverDeleted(t *testing.T) {
	t.Parallel()
	pool := pgtest.New(t)
	ctx := context.Background()
	var user, pair string
	if err := pool.QueryRow(ctx, `
		WITH u AS (
			INSERT INTO users (id, username, email, password_hash, balance)
			VALUES (gen_random_uuid(), 'keeper', 'k@x.io', 'h', 5) RETURNING id
		)
		INSERT INTO seed_pairs (id, user_id, server_seed, server_seed_hash, client_seed, nonce)
		SELECT gen_random_uuid(), u.id, 's', 'h', 'c', 0 FROM u RETURNING user_id, id`).Scan(&user, &pair); err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{
		`DELETE FROM seed_pairs WHERE id = '` + pair + `'`,
		`DELETE FROM users WHERE id = '` + user + `'`,
		`DELETE FROM users WHERE false`,
		`TRUNCATE seed_pairs CASCADE`,
		`TRUNCATE users CASCADE`,
	} {
		_, err := pool.Exec(ctx, stmt)
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "23001" || !strings.Contains(pgErr.Message, "never deleted") {
			t.Errorf("%s: %v, want restrict_violation 'never deleted'", stmt, err)
		}
	}
	var users, pairs int
	if err := pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM users), (SELECT count(*) FROM seed_pairs)`).Scan(&users, &pairs); err != nil {
		t.Fatal(err)
	}
	if users != 1 || pairs != 1 {
		t.Fatalf("%d users and %d seed pairs left, want 1 and 1", users, pairs)
	}
}

// Migration 00016's way back restores the foreign keys, checked against
// the rows written without them, and the way forward drops them again.
func TestMigration16DownRestoresTheForeignKeys(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url, pool := migratedDatabase(t)
	// A bet and its ledger entry, written without the checks.
	if _, err := pool.Exec(ctx, `
		WITH u AS (
			INSERT INTO users (id, username, email, password_hash, balance)
			VALUES (gen_random_uuid(), 'roundtrip', 'r@x.io', 'h', 5) RETURNING id
		), p AS (
			INSERT INTO seed_pairs (id, user_id, server_seed, server_seed_hash, client_seed, nonce)
			SELECT gen_random_uuid(), u.id, 's', 'h', 'c', 1 FROM u RETURNING id, user_id
		), b AS (
			INSERT INTO bets (id, user_id, game, status, amount, seed_pair_id, client_seed, nonce, settled_at)
			SELECT gen_random_uuid(), p.user_id, 'dice', 'settled', 1, p.id, 'c', 1, now() FROM p RETURNING id, user_id
		)
		INSERT INTO ledger_entries (user_id, kind, amount, balance_after, ref_id)
		SELECT b.user_id, 'bet', -1, 4, b.id FROM b`); err != nil {
		t.Fatal(err)
	}
	keys := func() (n int) {
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_constraint WHERE contype = 'f' AND convalidated
			AND conname IN ('bets_user_id_fkey', 'bets_seed_pair_id_fkey', 'ledger_entries_user_id_fkey')`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := keys(); n != 0 {
		t.Fatalf("%d of the hot inserts' foreign keys after migrating, want none", n)
	}
	if err := postgres.MigrateDownTo(ctx, url, 15); err != nil {
		t.Fatalf("migration 00016 down: %v", err)
	}
	if n := keys(); n != 3 {
		t.Fatalf("%d of the 3 foreign keys back after 00016 down", n)
	}
	if _, err := pool.Exec(ctx, `DELETE FROM users WHERE false`); err != nil {
		t.Fatalf("the delete refusal outlived 00016 down: %v", err)
	}
	if err := postgres.Migrate(ctx, url, slog.New(slog.NewTextHandler(io.Discard, nil))); err != nil {
		t.Fatal(err)
	}
	if n := keys(); n != 0 {
		t.Fatalf("%d foreign keys after migrating up again", n)
	}
}

// fairplay_usage finds a period's start from the UTC wall-clock time
// (migration 00017) instead of date_trunc's zone argument: the same instant
// for every period, every 7 minutes and 1 second of two years (month and
// year ends, a leap day, daylight-saving changes), and the installed
// function counts a period's start in it and the microsecond before not, and
// fairplay_period_start (migration 00019: the batch of bets' period starts)
// is date_trunc's, whatever the session's time zone and abbreviations.
func TestPeriodStartIsUTCs(t *testing.T) {
	t.Parallel()
	pool := pgtest.New(t)
	ctx := context.Background()
	for _, zone := range []string{"UTC", "America/New_York", "Asia/Kolkata", "Pacific/Chatham", "Australia/Lord_Howe"} {
		for _, abbrevs := range []string{"Default", "India", "Australia"} {
			var checked, differ int
			var wrong []string
			if err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
				if _, err := tx.Exec(ctx, "SELECT set_config('TimeZone', $1, true), set_config('timezone_abbreviations', $2, true)",
					zone, abbrevs); err != nil {
					return err
				}
				if err := tx.QueryRow(ctx, `
					SELECT count(*),
					       count(*) FILTER (WHERE date_trunc(p, t, 'UTC')
					                              IS DISTINCT FROM date_trunc(p, t AT TIME ZONE 'UTC') AT TIME ZONE 'UTC')
					FROM generate_series('2023-12-30 00:00:00+00'::timestamptz, '2025-12-31 23:59:59+00',
					                     interval '7 minutes 1 second') t,
					     unnest(ARRAY['day', 'week', 'month']) p`).Scan(&checked, &differ); err != nil {
					return err
				}
				return tx.QueryRow(ctx, `
					SELECT coalesce(array_agg(p), '{}') FROM unnest(ARRAY['day', 'week', 'month']) p
					WHERE fairplay_usage(p, date_trunc(p, now(), 'UTC'), 1, 0) <> 1
					   OR fairplay_usage(p, date_trunc(p, now(), 'UTC') - interval '1 microsecond', 1, 0) <> 0
					   OR fairplay_period_start(p) <> date_trunc(p, now(), 'UTC')`).Scan(&wrong)
			}); err != nil {
				t.Fatal(err)
			}
			if checked < 400_000 || differ != 0 || len(wrong) > 0 {
				t.Errorf("TimeZone %s, abbreviations %s: %d of %d period starts differ; fairplay_usage or fairplay_period_start wrong at the start of %v",
					zone, abbrevs, differ, checked, wrong)
			}
		}
	}
}

// The username's format and the limits' sign (constraint triggers since
// migration 00021, CHECKs before and after undoing it) refuse a row that
// breaks them, inserted or updated, with the constraint's name and
// SQLSTATE 23514; a NULL limit passes; an update of the balance alone does
// not run them (a row that breaks them, written while they were away, is
// not refused for it).
func TestUserChecksWhereTheyChange(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url, pool := migratedDatabase(t)
	refused := func(t *testing.T, name, constraint, sql string) {
		t.Helper()
		_, err := pool.Exec(ctx, sql)
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "23514" || pgErr.ConstraintName != constraint ||
			!strings.Contains(pgErr.Message, `violates check constraint "`+constraint+`"`) {
			t.Errorf("%s: %v, want check violation of %s", name, err, constraint)
		}
	}
	accepted := func(t *testing.T, name, sql string) {
		t.Helper()
		if _, err := pool.Exec(ctx, sql); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	rules := func(t *testing.T) {
		refused(t, "insert a bad username", "users_username_format",
			`INSERT INTO users (id, username, email, password_hash) VALUES (gen_random_uuid(), 'Bad Name', 'b@x.io', 'h')`)
		refused(t, "insert a zero limit", "users_limits_positive",
			`INSERT INTO users (id, username, email, password_hash, wager_limit_week) VALUES (gen_random_uuid(), 'zero', 'z@x.io', 'h', 0)`)
		accepted(t, "insert a good player", `INSERT INTO users (id, username, email, password_hash, loss_limit_day)
			VALUES (gen_random_uuid(), 'good_one', 'g@x.io', 'h', 5) ON CONFLICT DO NOTHING`)
		refused(t, "rename badly", "users_username_format", `UPDATE users SET username = 'ab' WHERE username = 'good_one'`)
		for _, col := range []string{"loss_limit_day", "loss_limit_week", "loss_limit_month", "wager_limit_day",
			"wager_limit_week", "wager_limit_month", "next_loss_limit_day", "next_loss_limit_week", "next_loss_limit_month",
			"next_wager_limit_day", "next_wager_limit_week", "next_wager_limit_month", "reality_check_minutes"} {
			refused(t, "set "+col+" to -1", "users_limits_positive", `UPDATE users SET `+col+` = -1 WHERE username = 'good_one'`)
		}
		accepted(t, "lift a limit (NULL)", `UPDATE users SET loss_limit_day = NULL WHERE username = 'good_one'`)
		accepted(t, "set a limit", `UPDATE users SET loss_limit_day = 7 WHERE username = 'good_one'`)
		refused(t, "rename badly on conflict", "users_username_format", `
			INSERT INTO users (id, username, email, password_hash)
			SELECT id, username, email, password_hash FROM users WHERE username = 'good_one'
			ON CONFLICT (id) DO UPDATE SET username = 'NO'`)
		refused(t, "put the rule off to the commit", "users_limits_positive", `
			BEGIN; SET CONSTRAINTS ALL DEFERRED;
			UPDATE users SET reality_check_minutes = 0 WHERE username = 'good_one';
			COMMIT`)
		refused(t, "as a replica would", "users_username_format", `
			BEGIN; SET LOCAL session_replication_role = replica;
			UPDATE users SET username = 'a b' WHERE username = 'good_one';
			COMMIT`)
	}
	t.Run("triggers", func(t *testing.T) {
		rules(t)
		var deferrable, always int
		if err := pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE c.condeferrable), count(*) FILTER (WHERE t.tgenabled = 'A')
			FROM pg_constraint c JOIN pg_trigger t ON t.tgconstraint = c.oid
			WHERE c.conname IN ('users_username_format', 'users_limits_positive')`).Scan(&deferrable, &always); err != nil ||
			deferrable != 0 || always != 2 {
			t.Errorf("%d deferrable, %d of 2 enabled always (%v)", deferrable, always, err)
		}
		// A row the rules would refuse, as a CHECK-less past could have
		// left it: a balance update does not look at it.
		accepted(t, "write a bad row without the triggers", `
			ALTER TABLE users DISABLE TRIGGER users_username_format;
			UPDATE users SET username = 'X' WHERE username = 'good_one';
			ALTER TABLE users ENABLE TRIGGER users_username_format`)
		accepted(t, "update its balance", `UPDATE users SET balance = balance + 1 WHERE username = 'X'`)
		refused(t, "update its name", "users_username_format", `UPDATE users SET username = username WHERE username = 'X'`)
		accepted(t, "put it right", `
			ALTER TABLE users DISABLE TRIGGER users_username_format;
			UPDATE users SET username = 'good_one' WHERE username = 'X';
			ALTER TABLE users ENABLE TRIGGER users_username_format`)
	})
	if err := postgres.MigrateDownTo(ctx, url, 20); err != nil {
		t.Fatalf("migration 00021 down: %v", err)
	}
	t.Run("checks after 00021 down", rules)
	// The CHECKs as migrations 00001 and 00015 made them.
	for name, want := range map[string]string{
		"users_username_format": `CHECK ((username ~ '^[a-z0-9_]{3,20}$'::text))`,
		"users_limits_positive": `CHECK (((loss_limit_day > 0) AND (loss_limit_week > 0) AND (loss_limit_month > 0) AND ` +
			`(wager_limit_day > 0) AND (wager_limit_week > 0) AND (wager_limit_month > 0) AND (next_loss_limit_day > 0) AND ` +
			`(next_loss_limit_week > 0) AND (next_loss_limit_month > 0) AND (next_wager_limit_day > 0) AND ` +
			`(next_wager_limit_week > 0) AND (next_wager_limit_month > 0) AND (reality_check_minutes > 0)))`,
	} {
		var def string
		if err := pool.QueryRow(ctx, `SELECT pg_get_constraintdef(oid) FROM pg_constraint
			WHERE contype = 'c' AND convalidated AND conname = $1`, name).Scan(&def); err != nil || def != want {
			t.Fatalf("%s after 00021 down: %q (%v), want %q", name, def, err, want)
		}
	}
	if err := postgres.Migrate(ctx, url, slog.New(slog.NewTextHandler(io.Discard, nil))); err != nil {
		t.Fatal(err)
	}
	t.Run("triggers again", rules)
}

// functionDefs is the text of each named function (pg_get_functiondef:
// its body and settings).
func functionDefs(t *testing.T, pool *pgxpool.Pool, names ...string) map[string]string {
	t.Helper()
	rows, err := pool.Query(context.Background(), `SELECT proname, pg_get_functiondef(oid) FROM pg_proc
		WHERE proname = ANY($1)`, names)
	if err != nil {
		t.Fatal(err)
	}
	kvs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (kv [2]string, err error) {
		err = r.Scan(&kv[0], &kv[1])
		return kv, err
	})
	if err != nil || len(kvs) != len(names) {
		t.Fatalf("functions: %d of %d (%v)", len(kvs), len(names), err)
	}
	defs := map[string]string{}
	for _, kv := range kvs {
		defs[kv[0]] = kv[1]
	}
	return defs
}

// schemaExtras are the triggers (with whether they fire) and the column
// comments of the database, one line each, for the ways back that must
// restore them too.
func schemaExtras(t *testing.T, pool *pgxpool.Pool) string {
	t.Helper()
	var s string
	if err := pool.QueryRow(context.Background(), `SELECT concat_ws(E'\n',
		(SELECT string_agg(pg_get_triggerdef(oid) || ' ' || tgenabled::text, E'\n' ORDER BY tgname) FROM pg_trigger
		 WHERE NOT tgisinternal),
		(SELECT string_agg(c.relname || '.' || a.attname || ': ' || d.description, E'\n' ORDER BY 1)
		 FROM pg_description d JOIN pg_class c ON c.oid = d.objoid
		 JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = d.objsubid
		 WHERE d.classoid = 'pg_class'::regclass AND d.objsubid > 0))`).Scan(&s); err != nil {
		t.Fatal(err)
	}
	return s
}

// checkDownRestores migrates a new database to version from, then all the
// way up, where changed tells whether each function's text is the new one,
// then down to from again, where every function must be as it was, and
// every trigger and column comment.
func checkDownRestores(t *testing.T, from int64, changed func(name, def string) bool, names ...string) {
	t.Helper()
	ctx := context.Background()
	url := pgtest.EmptyURL(t)
	if err := postgres.MigrateUpTo(ctx, url, from); err != nil {
		t.Fatal(err)
	}
	pool, err := postgres.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	before, extras := functionDefs(t, pool, names...), schemaExtras(t, pool)
	if err := postgres.Migrate(ctx, url, slog.New(slog.NewTextHandler(io.Discard, nil))); err != nil {
		t.Fatal(err)
	}
	for name, def := range functionDefs(t, pool, names...) {
		if def == before[name] || !changed(name, def) {
			t.Errorf("%s after the migrations past %d is not their text:\n%s", name, from, def)
		}
	}
	if err := postgres.MigrateDownTo(ctx, url, from); err != nil {
		t.Fatalf("down to %d: %v", from, err)
	}
	for name, def := range functionDefs(t, pool, names...) {
		if def != before[name] {
			t.Errorf("%s down at %d:\n%s\nwant:\n%s", name, from, def, before[name])
		}
	}
	if got := schemaExtras(t, pool); got != extras {
		t.Errorf("triggers and column comments down at %d:\n%s\nwant:\n%s", from, got, extras)
	}
}

// TestMigration22DownRestoresTheFunctions: migration 00022 rewrites the two
// batch functions, and its way back gives them back as 00019 and 00020
// made them, text and settings.
func TestMigration22DownRestoresTheFunctions(t *testing.T) {
	t.Parallel()
	checkDownRestores(t, 21, func(_, def string) bool {
		return strings.Contains(def, "array_position(p_users") && !strings.Contains(def, "row_number()")
	}, "fairplay_place_bets", "fairplay_play_actions")
}

// TestMigration23DownRestoresTheFunction: migration 00023 makes every
// action of fairplay_play_actions need its player's row, and its way back
// gives the function back as 00022 made it.
func TestMigration23DownRestoresTheFunction(t *testing.T) {
	t.Parallel()
	checkDownRestores(t, 22, func(_, def string) bool {
		return strings.Contains(def, "FROM a JOIN g ON g.ord = a.ord JOIN m ON m.id = a.user_id") &&
			strings.Contains(def, "WHEN mm.id IS NULL THEN 'busy'")
	}, "fairplay_play_actions")
}

// TestMigration24DownRestoresTheFunctions: migration 00024 takes the sorts
// out of both batch functions (they answer in no particular order, the
// callers match answers by ord), and its way back gives them back as 00022
// and 00023 made them.
func TestMigration24DownRestoresTheFunctions(t *testing.T) {
	t.Parallel()
	checkDownRestores(t, 23, func(_, def string) bool {
		return strings.Contains(def, "In no particular order") && !strings.Contains(def, "ORDER BY r.ord") &&
			!strings.Contains(def, "ORDER BY a.ord;") && !strings.Contains(def, "ON upd.ord = c.ord ORDER BY")
	}, "fairplay_place_bets", "fairplay_play_actions")
}

// TestMigration26DownRestoresTheFunction: migration 00026 makes a
// statement's inserted bets append one pending statistics row per hour and
// game, and its way back gives the trigger function back as 00007 made it.
func TestMigration26DownRestoresTheFunction(t *testing.T) {
	t.Parallel()
	checkDownRestores(t, 25, func(_, def string) bool {
		return strings.Contains(def, "fairplay_stats_bucket('1 hour', created_at)") && strings.Contains(def, "GROUP BY 1, 2")
	}, "fairplay_bet_stats_inserted")
}

// TestMigration27DownRestoresTheFunction: migration 00027 makes a period's
// count stop at the ends of bigint, and its way back gives fairplay_count
// back as 00019 made it.
func TestMigration27DownRestoresTheFunction(t *testing.T) {
	t.Parallel()
	checkDownRestores(t, 26, func(_, def string) bool {
		return strings.Contains(def, "9223372036854775807 - greatest(p_add, 0)")
	}, "fairplay_count")
}

// TestMigration28KeepsEveryNonce: migration 00028 moves each active pair's
// nonce into its player's row, its triggers keep the row following the
// pair's changes (a new client seed, a reveal that keeps the nonce the pair
// ended at, a new pair), even with triggers off for the session, and its way
// back puts the nonces the players' rows reached back in the pairs, with
// fairplay_place_bets as 00024 made it.
func TestMigration28KeepsEveryNonce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url, pool := databaseAt(t, 27)
	// Ann: a revealed pair at nonce 7 and an active one at 3. Bob: an active
	// pair at 0. Cid: no pair yet.
	if _, err := pool.Exec(ctx, `
		INSERT INTO users (id, username, email, password_hash) VALUES
			('00000000-0000-0000-0000-00000000000a', 'ann', 'a@x.io', 'h'),
			('00000000-0000-0000-0000-00000000000b', 'bob', 'b@x.io', 'h'),
			('00000000-0000-0000-0000-00000000000c', 'cid', 'c@x.io', 'h');
		INSERT INTO seed_pairs (id, user_id, server_seed, server_seed_hash, client_seed, nonce, revealed_at) VALUES
			('00000000-0000-0000-0000-0000000000a1', '00000000-0000-0000-0000-00000000000a', 's', 'h', 'old', 7, now()),
			('00000000-0000-0000-0000-0000000000a2', '00000000-0000-0000-0000-00000000000a', 's', 'h', 'ann', 3, NULL),
			('00000000-0000-0000-0000-0000000000b1', '00000000-0000-0000-0000-00000000000b', 's', 'h', 'bob', 0, NULL)`); err != nil {
		t.Fatal(err)
	}
	if err := postgres.MigrateUpTo(ctx, url, 28); err != nil {
		t.Fatal(err)
	}
	row := func(user string) string {
		t.Helper()
		var s string
		if err := pool.QueryRow(ctx, `SELECT concat_ws(' ', coalesce(right(seed_pair::text, 2), '-'), coalesce(seed_client, '-'),
			coalesce(seed_nonce::text, '-')) FROM users WHERE username = $1`, user).Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	pairNonce := func(id string) int64 {
		t.Helper()
		return queryInt(t, pool, `SELECT nonce FROM seed_pairs WHERE id = $1`, "00000000-0000-0000-0000-0000000000"+id)
	}
	for user, want := range map[string]string{"ann": "a2 ann 3", "bob": "b1 bob 0", "cid": "- - -"} {
		if got := row(user); got != want {
			t.Errorf("%s's row after 00028: %q, want %q", user, got, want)
		}
	}
	// Ann's row moves on without the pair's copy (as once a release stops
	// writing it); her new client seed answers with the row's nonce.
	mustExec(t, pool, `UPDATE users SET seed_nonce = seed_nonce + 2 WHERE username = 'ann'`)
	if n := queryInt(t, pool, `UPDATE seed_pairs SET client_seed = 'ann2' WHERE id = '00000000-0000-0000-0000-0000000000a2'
		RETURNING nonce`); n != 5 {
		t.Errorf("a new client seed answered nonce %d, want the row's 5", n)
	}
	if got := row("ann"); got != "a2 ann2 5" {
		t.Errorf("ann's row after a new client seed: %q", got)
	}
	// The pair's nonce moved on in the pair's row alone (a bet of 00024's
	// function that began before the migration committed) moves the row on;
	// a copy written at or behind the row (a batch's own) leaves it.
	mustExec(t, pool, `UPDATE seed_pairs SET nonce = 6 WHERE id = '00000000-0000-0000-0000-0000000000a2'`)
	if got := row("ann"); got != "a2 ann2 6" {
		t.Errorf("ann's row after her pair's nonce moved on: %q", got)
	}
	mustExec(t, pool, `UPDATE seed_pairs SET nonce = 4 WHERE id = '00000000-0000-0000-0000-0000000000a2'`)
	mustExec(t, pool, `UPDATE seed_pairs SET nonce = 6 WHERE id = '00000000-0000-0000-0000-0000000000a2'`)
	if got := row("ann"); got != "a2 ann2 6" {
		t.Errorf("ann's row after a copy behind it: %q", got)
	}
	// The rotation, written with triggers off for the session (a restore, a
	// bulk tool): the revealed pair keeps the nonce it ended at, and the new
	// one is the row's.
	mustExec(t, pool, `UPDATE users SET seed_nonce = 9 WHERE username = 'ann'`)
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{`SET LOCAL session_replication_role = replica`,
		`UPDATE seed_pairs SET revealed_at = now() WHERE id = '00000000-0000-0000-0000-0000000000a2'`} {
		if _, err := tx.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if n := pairNonce("a2"); n != 9 {
		t.Errorf("the revealed pair keeps nonce %d, want 9", n)
	}
	if got := row("ann"); got != "- - -" {
		t.Errorf("ann's row after the reveal: %q", got)
	}
	mustExec(t, pool, `INSERT INTO seed_pairs (id, user_id, server_seed, server_seed_hash, client_seed) VALUES
		('00000000-0000-0000-0000-0000000000a3', '00000000-0000-0000-0000-00000000000a', 's', 'h', 'ann3'),
		('00000000-0000-0000-0000-0000000000c1', '00000000-0000-0000-0000-00000000000c', 's', 'h', 'cid')`)
	for user, want := range map[string]string{"ann": "a3 ann3 0", "cid": "c1 cid 0"} {
		if got := row(user); got != want {
			t.Errorf("%s's row after a new pair: %q, want %q", user, got, want)
		}
	}
	// Revealing a pair that is no longer the row's leaves the row alone.
	mustExec(t, pool, `UPDATE seed_pairs SET revealed_at = now() WHERE id = '00000000-0000-0000-0000-0000000000a1'`)
	if n := pairNonce("a1"); n != 7 {
		t.Errorf("a pair revealed before keeps nonce %d, want 7", n)
	}
	if got := row("ann"); got != "a3 ann3 0" {
		t.Errorf("ann's row after an old pair's update: %q", got)
	}
	// Down: the rows' nonces go back to the pairs.
	mustExec(t, pool, `UPDATE users SET seed_nonce = 4 WHERE username = 'bob'`)
	if err := postgres.MigrateDownTo(ctx, url, 27); err != nil {
		t.Fatalf("00028 down: %v", err)
	}
	for id, want := range map[string]int64{"a1": 7, "a2": 9, "a3": 0, "b1": 4, "c1": 0} {
		if n := pairNonce(id); n != want {
			t.Errorf("pair %s's nonce %d after 00028 down, want %d", id, n, want)
		}
	}
	if n := queryInt(t, pool, `SELECT count(*) FROM information_schema.columns WHERE table_name = 'users'
		AND column_name IN ('seed_pair', 'seed_client', 'seed_nonce')`); n != 0 {
		t.Errorf("%d of the players' seed columns left after 00028 down", n)
	}
}

// TestMigration28DownRestoresTheFunction: 00028's way back gives
// fairplay_place_bets back as 00024 made it.
func TestMigration28DownRestoresTheFunction(t *testing.T) {
	t.Parallel()
	checkDownRestores(t, 27, func(_, def string) bool {
		return strings.Contains(def, "seed_nonce = a.nonce") && !strings.Contains(def, "pairs AS MATERIALIZED")
	}, "fairplay_place_bets")
}

// TestMigration29StopsWritingThePairsCopy: migration 00029 is 00028's
// contract half. A bet moves its pair's nonce on in the player's row alone,
// a reveal still keeps the nonce the pair ended at, and the way back
// catches every active pair's copy up with its player's row and writes the
// copies per bet again, as the release before 00028 needs.
func TestMigration29StopsWritingThePairsCopy(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url, pool := databaseAt(t, 28)
	store := postgres.NewPlayStore(pool)
	ann, bob := newBatchPlayer(t, pool, "ann", 1000e8), newBatchPlayer(t, pool, "bob", 1000e8)
	copyOf := func(p batchPlayer) int64 {
		t.Helper()
		return queryInt(t, pool, `SELECT nonce FROM seed_pairs WHERE id = $1`, p.pair.ID)
	}
	bet := func(bets ...postgres.BatchBet) {
		t.Helper()
		for i, r := range postgres.ExecBetBatch(store, bets) {
			if r.Err != nil {
				t.Fatalf("bet %d: %v", i, r.Err)
			}
		}
	}
	triggers := func() int64 {
		t.Helper()
		return queryInt(t, pool, `SELECT count(*) FROM pg_trigger WHERE tgname = 'seed_pairs_nonce_moved'`)
	}
	// 00028 writes the copy with each bet.
	bet(ann.bet(1, 1, 0, "50.00"), bob.bet(1, 1, 0, "50.00"))
	if a, b := copyOf(ann), copyOf(bob); a != 1 || b != 1 {
		t.Fatalf("copies at 00028 after a bet each: %d and %d, want 1", a, b)
	}
	if err := postgres.MigrateUpTo(ctx, url, 29); err != nil {
		t.Fatal(err)
	}
	if n := triggers(); n != 0 {
		t.Errorf("seed_pairs_nonce_moved is still there after 00029")
	}
	// 00029: the row moves on, the copy stays.
	bet(ann.bet(2, 1, 0, "50.00"), bob.bet(2, 1, 0, "50.00"))
	bet(ann.bet(3, 1, 0, "50.00"))
	if a, b := copyOf(ann), copyOf(bob); a != 1 || b != 1 {
		t.Errorf("copies after 00029's bets: %d and %d, want 1 (not written)", a, b)
	}
	for p, want := range map[batchPlayer]int64{ann: 3, bob: 2} {
		if n := queryInt(t, pool, pairNonceSQL, p.pair.ID); n != want {
			t.Errorf("pair %s at nonce %d, want %d", p.pair.ClientSeed, n, want)
		}
	}
	// A reveal keeps the nonce the pair ended at, from the player's row.
	mustExec(t, pool, `UPDATE seed_pairs SET revealed_at = now() WHERE id = $1`, ann.pair.ID)
	if n := copyOf(ann); n != 3 {
		t.Errorf("ann's revealed pair keeps nonce %d, want 3", n)
	}
	// Down: bob's copy catches up, and bets write it again.
	if err := postgres.MigrateDownTo(ctx, url, 28); err != nil {
		t.Fatalf("00029 down: %v", err)
	}
	if n := triggers(); n != 1 {
		t.Errorf("seed_pairs_nonce_moved not back after 00029 down")
	}
	if n := copyOf(bob); n != 2 {
		t.Errorf("bob's copy after 00029 down: %d, want 2", n)
	}
	bet(bob.bet(3, 1, 0, "50.00"))
	if n := copyOf(bob); n != 3 {
		t.Errorf("bob's copy after a bet at 00028 again: %d, want 3", n)
	}
	if n := copyOf(ann); n != 3 {
		t.Errorf("ann's revealed pair after 00029 down: nonce %d, want 3", n)
	}
}

// TestMigration29DownRestoresTheFunction: 00029's way back gives
// fairplay_place_bets back as 00028 made it.
func TestMigration29DownRestoresTheFunction(t *testing.T) {
	t.Parallel()
	checkDownRestores(t, 28, func(_, def string) bool {
		return strings.Contains(def, "seed_nonce = a.nonce") && !strings.Contains(def, "UPDATE seed_pairs") &&
			!strings.Contains(def, "nonce_in_row")
	}, "fairplay_place_bets")
}

// TestMigration33DownRestoresTheFunction: migration 00033 reads a bet's
// params and state as JSON only in the insert of the bets placed, and its
// way back gives fairplay_place_bets back as 00029 made it.
func TestMigration33DownRestoresTheFunction(t *testing.T) {
	t.Parallel()
	checkDownRestores(t, 32, func(_, def string) bool {
		return strings.Contains(def, "c.nonce, c.params::jsonb, c.state::jsonb, c.at") &&
			!strings.Contains(def, "state::jsonb AS state")
	}, "fairplay_place_bets")
}

// TestMigration36DownRestoresTheFunction: migration 00036 keeps the reality
// check's mark behind Postgres' clock and writes the session only when
// something changed; its way back gives the function back as 00034 made it.
func TestMigration36DownRestoresTheFunction(t *testing.T) {
	t.Parallel()
	checkDownRestores(t, 35, func(_, def string) bool {
		return strings.Contains(def, "least(max(b.created_at), statement_timestamp())") &&
			strings.Contains(def, "still IS DISTINCT FROM s.rc_pending")
	}, "fairplay_reality_check")
}

// TestMigration37DownRestoresTheFunction: migration 00037 keeps the reality
// check's running games in id order; its way back gives the function back
// as 00036 made it.
func TestMigration37DownRestoresTheFunction(t *testing.T) {
	t.Parallel()
	checkDownRestores(t, 36, func(_, def string) bool {
		return strings.Contains(def, "array_agg(f.id ORDER BY f.id)")
	}, "fairplay_reality_check")
}

// TestMigration30AuditsOperatorCommands: after migration 00030 an audit row
// without an actor is an operator's command, and only such an action may
// lack one; its way back refuses while the log holds one (the log is never
// rewritten), and otherwise restores the log's rules: every row has an
// actor again.
func TestMigration30AuditsOperatorCommands(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, withRow := range []bool{true, false} {
		url, pool := databaseAt(t, 30)
		mustExec(t, pool, `INSERT INTO users (id, username, email, password_hash) VALUES
			('00000000-0000-0000-0000-00000000000a', 'ann', 'a@x.io', 'h')`)
		insert := func(action string) error {
			_, err := pool.Exec(ctx, `INSERT INTO admin_audit (actor_id, action, target_user_id)
				VALUES (NULL, $1, '00000000-0000-0000-0000-00000000000a')`, action)
			return err
		}
		if err := insert("adjust_balance"); !isConstraint(err, "admin_audit_actor_check") {
			t.Errorf("an administrator's action without an actor: %v, want admin_audit_actor_check", err)
		}
		if withRow {
			if err := insert("promote"); err != nil {
				t.Fatal(err)
			}
			if err := postgres.MigrateDownTo(ctx, url, 29); err == nil || !strings.Contains(err.Error(), "cannot be undone") {
				t.Errorf("00030 down with an operator's row: %v, want a refusal", err)
			}
			if n := queryInt(t, pool, `SELECT count(*) FROM admin_audit`); n != 1 {
				t.Errorf("%d audit rows after the refused way back, want 1", n)
			}
			continue
		}
		if err := postgres.MigrateDownTo(ctx, url, 29); err != nil {
			t.Fatalf("00030 down: %v", err)
		}
		// An action the log knew before, without an actor: the column is
		// NOT NULL again (23502), not only the actions' check.
		var pgErr *pgconn.PgError
		if err := insert("adjust_balance"); !errors.As(err, &pgErr) || pgErr.Code != "23502" {
			t.Errorf("an audit row without an actor after 00030 down: %v, want a not-null violation", err)
		}
		if err := insert("promote"); err == nil {
			t.Error("an operator's action after 00030 down")
		}
	}
}

// TestMigration31RequestIDs: migration 00031 keeps an adjustment's request
// id on its audit row, one per administrator and id, and its way back drops
// the column and its index.
func TestMigration31RequestIDs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url, pool := databaseAt(t, 31)
	mustExec(t, pool, `INSERT INTO users (id, username, email, password_hash) VALUES
		('00000000-0000-0000-0000-00000000000a', 'ann', 'a@x.io', 'h'),
		('00000000-0000-0000-0000-00000000000b', 'bob', 'b@x.io', 'h')`)
	insert := func(actor string) error {
		_, err := pool.Exec(ctx, `INSERT INTO admin_audit (actor_id, action, target_user_id, request_id)
			VALUES ($1, 'adjust_balance', '00000000-0000-0000-0000-00000000000a', '00000000-0000-0000-0000-0000000000ee')`,
			"00000000-0000-0000-0000-00000000000"+actor)
		return err
	}
	if err := insert("a"); err != nil {
		t.Fatal(err)
	}
	if err := insert("a"); !isConstraint(err, "admin_audit_request_key") {
		t.Errorf("an administrator's request id twice: %v, want admin_audit_request_key", err)
	}
	if err := insert("b"); err != nil {
		t.Errorf("another administrator's same request id: %v", err)
	}
	if err := postgres.MigrateDownTo(ctx, url, 30); err != nil {
		t.Fatalf("00031 down: %v", err)
	}
	if n := queryInt(t, pool, `SELECT count(*) FROM information_schema.columns
		WHERE table_name = 'admin_audit' AND column_name = 'request_id'`); n != 0 {
		t.Error("admin_audit.request_id is still there after 00031 down")
	}
}

// isConstraint tells whether err is Postgres refusing a row by the named
// constraint.
func isConstraint(err error, name string) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.ConstraintName == name
}
