package main

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fairplay/fairplay/internal/accounts"
	"github.com/fairplay/fairplay/internal/postgres"
	"github.com/fairplay/fairplay/internal/postgres/pgtest"
)

// TestAdminCommands runs `fairplay admin create` and `admin promote` against
// a real database. It sets environment variables, so it is not parallel.
func TestAdminCommands(t *testing.T) {
	url := pgtest.URL(t)
	t.Setenv("DATABASE_URL", url)
	t.Setenv("FAIRPLAY_ADMIN_PASSWORD", "")
	ctx := context.Background()
	pool, err := postgres.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	isAdmin := func(username string) bool {
		t.Helper()
		var admin bool
		if err := pool.QueryRow(ctx, `SELECT is_admin FROM users WHERE username = $1 AND deleted_at IS NULL`, username).Scan(&admin); err != nil {
			t.Fatalf("%s: %v", username, err)
		}
		return admin
	}

	for _, tc := range []struct {
		name string
		args []string
		err  error
	}{
		{"create", []string{"admin", "create", "--username", "ops", "--password", "secret123"}, nil},
		{"create again", []string{"admin", "create", "--username", "ops", "--password", "secret123"}, accounts.ErrUsernameTaken},
		{"create if missing", []string{"admin", "create", "--username", "ops", "--if-missing"}, nil},
		{"create with a generated password", []string{"admin", "create", "--username", "ops2"}, nil},
		{"bad username", []string{"admin", "create", "--username", "No Way", "--password", "secret123"}, accounts.ErrUsernameChars},
		{"promote unknown", []string{"admin", "promote", "--username", "ghost"}, accounts.ErrUserNotFound},
	} {
		if err := run(ctx, tc.args, io.Discard); !errors.Is(err, tc.err) {
			t.Fatalf("%s: %v, want %v", tc.name, err, tc.err)
		}
	}
	if !isAdmin("ops") || !isAdmin("ops2") {
		t.Fatal("created accounts are not administrators")
	}
	if _, err := pool.Exec(ctx, `INSERT INTO users (id, username, email, password_hash) VALUES (gen_random_uuid(), 'carl', 'carl@example.com', 'x')`); err != nil {
		t.Fatal(err)
	}
	if err := run(ctx, []string{"admin", "promote", "--username", "carl"}, io.Discard); err != nil || !isAdmin("carl") {
		t.Fatalf("promote: %v", err)
	}
	if err := run(ctx, []string{"admin", "promote", "--username", "carl"}, io.Discard); err != nil {
		t.Fatalf("promote again: %v", err)
	}
	for i, want := range []string{"password set (their sessions ended)", "already exists with this password"} {
		var out strings.Builder
		if err := run(ctx, []string{"admin", "create", "--username", "ops", "--if-missing", "--reset-password",
			"--password", "another123"}, &out); err != nil || !strings.Contains(out.String(), want) {
			t.Fatalf("reset password, run %d: %q, %v; want %q", i+1, out.String(), err, want)
		}
	}
	var ue usageError
	if err := run(ctx, []string{"admin", "demote"}, io.Discard); !errors.As(err, &ue) {
		t.Fatalf("unknown subcommand: %v", err)
	}
	// Each change is in the audit log with no administrator as its actor
	// (migration 00030); a command that changed nothing (create
	// --if-missing of an administrator, a second promote) wrote nothing.
	if got := auditLog(t, pool); got != "create_admin ops {} {\"email\": \"ops@fairplay.local\", \"isAdmin\": true, \"username\": \"ops\"}\n"+
		"create_admin ops2 {} {\"email\": \"ops2@fairplay.local\", \"isAdmin\": true, \"username\": \"ops2\"}\n"+
		"promote carl {\"isAdmin\": false} {\"isAdmin\": true}\n"+
		"set_password ops {} {\"sessionsRevoked\": 0}\n" {
		t.Errorf("audit log:\n%s", got)
	}
}

// auditLog is admin_audit oldest first, one row a line (action, target,
// before, after), for the rows of operator commands: no actor.
func auditLog(t *testing.T, pool interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}) string {
	t.Helper()
	var s string
	if err := pool.QueryRow(context.Background(), `
		SELECT coalesce(string_agg(concat_ws(' ', a.action, u.username, a.before, a.after) || E'\n', '' ORDER BY a.id), '')
		FROM admin_audit a JOIN users u ON u.id = a.target_user_id WHERE a.actor_id IS NULL`).Scan(&s); err != nil {
		t.Fatal(err)
	}
	return s
}

// waitForLockWait returns once a statement of another connection waits for a
// row lock, and fails the test if done answers first.
func waitForLockWait(t *testing.T, pool interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}, done <-chan error) {
	t.Helper()
	for range 500 {
		select {
		case err := <-done:
			t.Fatalf("finished without waiting for the row: %v", err)
		default:
		}
		var n int
		if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND pid <> pg_backend_pid() AND wait_event_type = 'Lock'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("nothing waited for the row within 5 s")
}

// TestUserResetTwoFactor runs `fairplay user reset-2fa` against a real
// database: the user's two-factor keys and recovery codes are gone and every
// session of theirs is ended, another user's are untouched, and an unknown
// user or a missing --username is refused. It sets environment variables,
// so it is not parallel.
func TestUserResetTwoFactor(t *testing.T) {
	url := pgtest.URL(t)
	t.Setenv("DATABASE_URL", url)
	ctx := context.Background()
	pool, err := postgres.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	for _, name := range []string{"lost", "other"} {
		if _, err := pool.Exec(ctx, `
			WITH u AS (
				INSERT INTO users (id, username, email, password_hash, totp_secret, totp_last_step)
				VALUES (gen_random_uuid(), $1, $1 || '@example.com', 'x', '\x0102', 7) RETURNING id
			), s AS (
				INSERT INTO sessions (id, user_id, refresh_hash)
				SELECT gen_random_uuid(), id, uuid_send(gen_random_uuid()) FROM u
				UNION ALL
				SELECT gen_random_uuid(), id, uuid_send(gen_random_uuid()) FROM u
			)
			INSERT INTO recovery_codes (user_id, code_hash) SELECT id, '\x00' FROM u`, name); err != nil {
			t.Fatal(err)
		}
	}
	state := func(name string) (secret bool, codes, live int) {
		t.Helper()
		if err := pool.QueryRow(ctx, `
			SELECT u.totp_secret IS NOT NULL,
			       (SELECT count(*) FROM recovery_codes r WHERE r.user_id = u.id),
			       (SELECT count(*) FROM sessions s WHERE s.user_id = u.id AND s.revoked_at IS NULL)
			FROM users u WHERE u.username = $1`, name).Scan(&secret, &codes, &live); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return secret, codes, live
	}
	var out strings.Builder
	if err := run(ctx, []string{"user", "reset-2fa", "--username", "LOST@example.com"}, &out); err != nil {
		t.Fatalf("reset-2fa: %v", err)
	}
	if !strings.Contains(out.String(), "two-factor sign-in is off for lost; 2 sessions ended") {
		t.Errorf("output: %q", out.String())
	}
	if secret, codes, live := state("lost"); secret || codes != 0 || live != 0 {
		t.Errorf("lost after the reset: key %v, %d recovery codes, %d live sessions; want none", secret, codes, live)
	}
	if secret, codes, live := state("other"); !secret || codes != 1 || live != 2 {
		t.Errorf("another user after the reset: key %v, %d recovery codes, %d live sessions; want untouched", secret, codes, live)
	}
	if got := auditLog(t, pool); got != "reset_2fa lost {\"twoFactor\": true} {\"twoFactor\": false, \"sessionsRevoked\": 2}\n" {
		t.Errorf("audit log: %q", got)
	}
	// The audit row's "before" is the row the reset changed: "other", its
	// 2FA off, turns it on in a transaction that the reset waits behind, so
	// a read made before the reset's own would say off.
	if _, err := pool.Exec(ctx, `UPDATE users SET totp_secret = NULL WHERE username = 'other'`); err != nil {
		t.Fatal(err)
	}
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, `UPDATE users SET totp_secret = '\x0102' WHERE username = 'other'`); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"user", "reset-2fa", "--username", "other"}, io.Discard) }()
	waitForLockWait(t, pool, done)
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("reset-2fa of other: %v", err)
	}
	// And a reset of an account whose 2FA is already off says so.
	if err := run(ctx, []string{"user", "reset-2fa", "--username", "lost"}, io.Discard); err != nil {
		t.Fatalf("reset-2fa of lost again: %v", err)
	}
	if got, want := auditLog(t, pool), "reset_2fa lost {\"twoFactor\": true} {\"twoFactor\": false, \"sessionsRevoked\": 2}\n"+
		"reset_2fa other {\"twoFactor\": true} {\"twoFactor\": false, \"sessionsRevoked\": 2}\n"+
		"reset_2fa lost {\"twoFactor\": false} {\"twoFactor\": false, \"sessionsRevoked\": 0}\n"; got != want {
		t.Errorf("audit log:\n%s\nwant:\n%s", got, want)
	}
	if err := run(ctx, []string{"user", "reset-2fa", "--username", "ghost"}, io.Discard); !errors.Is(err, accounts.ErrUserNotFound) {
		t.Errorf("an unknown user: %v, want ErrUserNotFound", err)
	}
	var ue usageError
	if err := run(ctx, []string{"user", "reset-2fa"}, io.Discard); !errors.As(err, &ue) {
		t.Errorf("no --username: %v, want a usage error", err)
	}
}
