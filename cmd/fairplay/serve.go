package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"

	"github.com/fairplay/fairplay/internal/app"
	"github.com/fairplay/fairplay/internal/postgres"
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
	shutdownTracing, err := telemetry.SetupTracing(ctx, version)
	if err != nil {
		return err
	}
	defer func() { _ = shutdownTracing(context.Background()) }()

	a, err := app.New(ctx, cfg, log, app.Options{})
	if err != nil {
		return err
	}
	defer a.Close()
	a.Run(ctx)
	ln, err := net.Listen("tcp", cfg.HTTPAddr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	log.Info("fairplay serving", "addr", ln.Addr().String(), "version", version)
	return a.Server.Serve(ctx, ln, cfg.ShutdownTimeout)
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
