package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"time"

	"github.com/fairplay/fairplay/internal/accounts"
	"github.com/fairplay/fairplay/internal/cache"
	"github.com/fairplay/fairplay/internal/postgres"
	"github.com/fairplay/fairplay/internal/rpc"
	"github.com/fairplay/fairplay/internal/server"
	"github.com/fairplay/fairplay/internal/settings"
	"github.com/fairplay/fairplay/internal/telemetry"
)

func loadConfig() (settings.Config, *slog.Logger, error) {
	cfg, err := settings.FromEnv()
	if err != nil {
		return cfg, nil, fmt.Errorf("configuration: %w", err)
	}
	log := telemetry.NewLogger(os.Stderr, cfg.LogFormat, cfg.LogLevel)
	slog.SetDefault(log)
	return cfg, log, nil
}

func serve(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	addr := fs.String("addr", "", "listen address (overrides FAIRPLAY_HTTP_ADDR)")
	if err := fs.Parse(args); err != nil {
		return usageError(err.Error())
	}
	cfg, log, err := loadConfig()
	if err != nil {
		return err
	}
	if *addr != "" {
		cfg.HTTPAddr = *addr
	}
	if err := cfg.Require("DATABASE_URL", "REDIS_URL"); err != nil {
		return err
	}
	shutdownTracing, err := telemetry.SetupTracing(ctx, version)
	if err != nil {
		return err
	}
	defer func() { _ = shutdownTracing(context.Background()) }()

	pool, err := postgres.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		return err
	}
	defer pool.Close()
	if err := postgres.CheckMigrated(ctx, pool); err != nil {
		return err
	}
	rdb, err := cache.Open(cfg.RedisURL)
	if err != nil {
		return err
	}
	defer rdb.Close()

	keys, err := accounts.LoadKeySet(cfg.SigningKeysDir, accounts.KeySetOptions{Logger: log})
	if err != nil {
		return err
	}
	go keys.Watch(ctx, 10*time.Second)

	var bots accounts.BotChecker
	if cfg.TurnstileSecretKey == "" {
		log.Warn("development mode: TURNSTILE_SECRET_KEY is not set, the bot check accepts only the development token",
			"token", accounts.DevelopmentBotToken)
		bots = accounts.DevelopmentBotCheck{}
	} else {
		bots = accounts.NewTurnstile(cfg.TurnstileSecretKey, cfg.TurnstileSiteKey, cfg.TurnstileVerifyURL, nil)
	}

	metrics := telemetry.NewMetrics()
	metrics.RegisterPools(pool, rdb)
	limiter := cache.NewLimiter(rdb, cfg.RedisPrefix)
	limiter.Errors = metrics.RateLimitErrors

	acc := accounts.NewService(accounts.Options{
		Store: postgres.NewAccountStore(pool), Tokens: accounts.NewTokens(keys, cfg.AccessTokenTTL, nil),
		Bots: bots, Limiter: limiter, Config: cfg, Logger: log,
	})
	var trusted []netip.Prefix
	for _, p := range cfg.TrustedProxies {
		pfx, err := netip.ParsePrefix(p)
		if err != nil {
			return fmt.Errorf("FAIRPLAY_TRUSTED_PROXIES: %w", err)
		}
		trusted = append(trusted, pfx)
	}
	srv := server.New(server.Deps{
		Handlers:       rpc.Handlers{Auth: rpc.NewAuthHandler(acc, log)},
		Postgres:       pool,
		Redis:          rdb,
		Metrics:        metrics,
		Logger:         log,
		TrustedProxies: trusted,
		SecureCookies:  cfg.SecureCookies,
	})
	ln, err := net.Listen("tcp", cfg.HTTPAddr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	log.Info("fairplay serving", "addr", ln.Addr().String(), "version", version)
	return srv.Serve(ctx, ln, cfg.ShutdownTimeout)
}

func migrate(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("migrate", flag.ContinueOnError)
	if err := fs.Parse(args); err != nil {
		return usageError(err.Error())
	}
	cfg, log, err := loadConfig()
	if err != nil {
		return err
	}
	if err := cfg.Require("DATABASE_URL"); err != nil {
		return err
	}
	return postgres.Migrate(ctx, cfg.DatabaseURL, log)
}
