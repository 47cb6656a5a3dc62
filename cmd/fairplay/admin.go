package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"flag"
	"fmt"
	"time"

	"github.com/fairplay/fairplay/internal/accounts"
	"github.com/fairplay/fairplay/internal/postgres"
)

func admin(ctx context.Context, args []string) error {
	if len(args) == 0 || (args[0] != "create" && args[0] != "promote") {
		return usageError("usage: fairplay admin create|promote [flags]")
	}
	fs := flag.NewFlagSet("admin "+args[0], flag.ContinueOnError)
	username := fs.String("username", "admin", "username")
	email := fs.String("email", "", "email (create; default <username>@fairplay.local)")
	password := fs.String("password", "", "password (create; default FAIRPLAY_ADMIN_PASSWORD, else generated and printed)")
	ifMissing := fs.Bool("if-missing", false, "create: when the user exists, make it an administrator instead of failing")
	resetPassword := fs.Bool("reset-password", false, "create --if-missing: also set the existing user's password")
	if err := fs.Parse(args[1:]); err != nil {
		return usageError(err.Error())
	}
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
	svc := accounts.NewService(accounts.Options{Store: postgres.NewAccountStore(pool), Config: cfg, Logger: log})

	if args[0] == "promote" {
		u, err := svc.Promote(ctx, *username)
		if err != nil {
			return err
		}
		fmt.Printf("%s is now an administrator\n", u.Username)
		return nil
	}
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
			if err := svc.SetPassword(ctx, u.Username, pw); err != nil {
				return err
			}
			fmt.Printf("administrator %s already exists; password set\n", u.Username)
			return nil
		}
		fmt.Printf("administrator %s already exists (password unchanged)\n", u.Username)
		return nil
	}
	fmt.Printf("created administrator %s (%s)\n", u.Username, u.Email)
	if generated {
		fmt.Printf("password: %s\n", pw)
	}
	return nil
}

func keys(args []string) error {
	if len(args) == 0 || args[0] != "generate" {
		return usageError("usage: fairplay keys generate --dir DIR")
	}
	fs := flag.NewFlagSet("keys generate", flag.ContinueOnError)
	dir := fs.String("dir", "", "key directory (default FAIRPLAY_SIGNING_KEYS_DIR)")
	ifEmpty := fs.Bool("if-empty", false, "only when the directory holds no key yet")
	if err := fs.Parse(args[1:]); err != nil {
		return usageError(err.Error())
	}
	cfg, _, err := loadConfig()
	if err != nil {
		return err
	}
	if *dir == "" {
		*dir = cfg.SigningKeysDir
	}
	if *dir == "" {
		return usageError("keys generate: --dir or FAIRPLAY_SIGNING_KEYS_DIR is required")
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
	fmt.Printf("wrote signing key %s to %s\n", kid, *dir)
	return nil
}
