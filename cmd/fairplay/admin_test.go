package main

import (
	"context"
	"errors"
	"io"
	"testing"

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
	var ue usageError
	if err := run(ctx, []string{"admin", "demote"}, io.Discard); !errors.As(err, &ue) {
		t.Fatalf("unknown subcommand: %v", err)
	}
}
