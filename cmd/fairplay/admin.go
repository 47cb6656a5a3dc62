package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"flag"
	"io"
	"time"

	"github.com/fairplay/fairplay/internal/accounts"
	"github.com/fairplay/fairplay/internal/postgres"
	"github.com/fairplay/fairplay/internal/settings"
)

// adminCreate is `fairplay admin create`.
func adminCreate(fs *flag.FlagSet) func(context.Context, io.Writer) error {
	username := fs.String("username", "admin", "username")
	email := fs.String("email", "", "email (default <username>@fairplay.local)")
	password := fs.String("password", "", "password (default FAIRPLAY_ADMIN_PASSWORD, else generated and printed)")
	ifMissing := fs.Bool("if-missing", false, "when the user exists with this email, make it an administrator instead of failing")
	resetPassword := fs.Bool("reset-password", false, "with --if-missing: also set the existing user's password (ending their sessions; a password it has already is left)")
	return func(ctx context.Context, stdout io.Writer) error {
		return withAccounts(ctx, func(cfg settings.Config, svc *accounts.Service) error {
			if *email == "" {
				*email = *username + "@fairplay.local"
			}
			pw, generated := *password, false
			if pw == "" {
				pw = cfg.AdminPassword
			}
			if pw == "" {
				b := make([]byte, 12)
				_, _ = rand.Read(b)
				pw, generated = base64.RawURLEncoding.EncodeToString(b), true
			}
			u, created, err := svc.CreateAdmin(ctx, *username, *email, pw, *ifMissing)
			if err != nil {
				return err
			}
			if !created {
				if *resetPassword {
					changed, err := svc.SetPassword(ctx, u.Username, pw)
					if err != nil {
						return err
					}
					if !changed {
						say(stdout, "administrator %s already exists with this password\n", u.Username)
						return nil
					}
					say(stdout, "administrator %s already exists; password set (their sessions ended)\n", u.Username)
					return nil
				}
				say(stdout, "administrator %s already exists (password unchanged)\n", u.Username)
				return nil
			}
			say(stdout, "created administrator %s (%s)\n", u.Username, u.Email)
			if generated {
				say(stdout, "password: %s\n", pw)
			}
			return nil
		})
	}
}

// adminPromote is `fairplay admin promote`.
func adminPromote(fs *flag.FlagSet) func(context.Context, io.Writer) error {
	username := fs.String("username", "", "the user to make an administrator")
	return func(ctx context.Context, stdout io.Writer) error {
		if *username == "" {
			return usageError("fairplay admin promote: --username is required")
		}
		return withAccounts(ctx, func(_ settings.Config, svc *accounts.Service) error {
			u, err := svc.Promote(ctx, *username)
			if err != nil {
				return err
			}
			say(stdout, "%s is now an administrator\n", u.Username)
			return nil
		})
	}
}

// userResetTwoFactor is `fairplay user reset-2fa`.
func userResetTwoFactor(fs *flag.FlagSet) func(context.Context, io.Writer) error {
	username := fs.String("username", "", "the user (username or email) whose two-factor sign-in to turn off")
	return func(ctx context.Context, stdout io.Writer) error {
		if *username == "" {
			return usageError("fairplay user reset-2fa: --username is required")
		}
		return withAccounts(ctx, func(_ settings.Config, svc *accounts.Service) error {
			u, ended, err := svc.ResetTwoFactor(ctx, *username)
			if err != nil {
				return err
			}
			say(stdout, "two-factor sign-in is off for %s; %d sessions ended (they sign in again with the password)\n",
				u.Username, ended)
			return nil
		})
	}
}

// withAccounts loads the configuration, opens the migrated database and
// calls f with the accounts service.
func withAccounts(ctx context.Context, f func(settings.Config, *accounts.Service) error) error {
	cfg, log, err := loadConfig()
	if err != nil {
		return err
	}
	if err := cfg.Require("DATABASE_URL"); err != nil {
		return err
	}
	pool, err := postgres.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		return err
	}
	defer pool.Close()
	if err := postgres.CheckMigrated(ctx, pool); err != nil {
		return err
	}
	return f(cfg, accounts.NewService(accounts.Options{Store: postgres.NewAccountStore(pool), Config: cfg, Logger: log}))
}

// keysGenerate is `fairplay keys generate`.
func keysGenerate(fs *flag.FlagSet) func(context.Context, io.Writer) error {
	dir := fs.String("dir", "", "key directory (default FAIRPLAY_SIGNING_KEYS_DIR)")
	ifEmpty := fs.Bool("if-empty", false, "only when the directory holds no key yet")
	return func(_ context.Context, stdout io.Writer) error {
		if *dir == "" {
			cfg, _, err := loadConfig()
			if err != nil {
				return err
			}
			*dir = cfg.SigningKeysDir
		}
		if *dir == "" {
			return usageError("fairplay keys generate: --dir or FAIRPLAY_SIGNING_KEYS_DIR is required")
		}
		if *ifEmpty {
			if ks, err := accounts.LoadKeySet(*dir, accounts.KeySetOptions{}); err == nil && len(ks.KeyIDs()) > 0 {
				return nil
			}
		}
		kid, err := accounts.WriteNewKey(*dir, time.Now())
		if err != nil {
			return err
		}
		say(stdout, "wrote signing key %s to %s\n", kid, *dir)
		return nil
	}
}
