package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"runtime/debug"
	"time"

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

// defaultMemoryLimit is the Go runtime's soft memory limit unless
// GOMEMLIMIT is set.
const defaultMemoryLimit = 80 << 20

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
	if _, set := os.LookupEnv("GOMEMLIMIT"); !set {
		// A soft limit: sign-ins hash with 19 MiB of argon2id memory each, and
		// without it the heap doubles past them before the collector runs
		// (peak RSS 150–170 MB under `make bench`'s login load). The
		// collector works harder near the limit instead; GOMEMLIMIT wins.
		debug.SetMemoryLimit(defaultMemoryLimit)
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
	mln, err := net.Listen("tcp", cfg.MetricsAddr)
	if err != nil {
		_ = ln.Close()
		return fmt.Errorf("listen (FAIRPLAY_METRICS_ADDR): %w", err)
	}
	// The internal listeners outlive the public server's draining, so the
	// last scrapes still see the shutdown; they close when serve returns.
	internal, stopInternal := context.WithCancel(context.WithoutCancel(ctx))
	defer stopInternal()
	serveInternal(internal, "metrics", mln, a.Server.MetricsHandler(), log)
	if cfg.DebugAddr != "" {
		dln, err := net.Listen("tcp", cfg.DebugAddr)
		if err != nil {
			_ = ln.Close()
			return fmt.Errorf("listen (FAIRPLAY_DEBUG_ADDR): %w", err)
		}
		serveInternal(internal, "profiler", dln, profiler(), log)
		log.Warn("profiler serving (FAIRPLAY_DEBUG_ADDR)", "addr", dln.Addr().String())
	}
	log.Info("fairplay serving", "addr", ln.Addr().String(), "metrics_addr", mln.Addr().String(), "version", version)
	return a.Server.Serve(ctx, ln, cfg.ShutdownTimeout)
}

// profiler is Go's profiler (net/http/pprof) under /debug/pprof/.
func profiler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return mux
}

// serveInternal serves an internal listener (metrics, profiler) until ctx
// ends.
func serveInternal(ctx context.Context, name string, ln net.Listener, h http.Handler, log *slog.Logger) {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 120 * time.Second}
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error(name+" server", "err", err)
		}
	}()
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
