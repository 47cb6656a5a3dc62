package main

import (
	"context"
	"errors"
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

// defaultMemoryLimit is the Go runtime's soft memory limit unless
// GOMEMLIMIT is set.
const defaultMemoryLimit = 80 << 20

// defaultGCPercent is the collector's GOGC unless GOGC is set. With the
// soft memory limit above as the bound, the heap may grow to five times
// what is live before a collection (about 20 MiB live under make bench's
// dice load, so the limit decides): under GOGC=100 the collector's marking
// was ~13% of the server's CPU per dice bet (BENCH_PROFILE), collections
// four times as often for the same garbage.
const defaultGCPercent = 400

// serve is `fairplay serve`; addr, when set, overrides FAIRPLAY_HTTP_ADDR.
func serve(ctx context.Context, addr string) error {
	cfg, log, err := loadConfig()
	if err != nil {
		return err
	}
	if addr != "" {
		cfg.HTTPAddr = addr
	}
	version := currentVersion()
	if _, set := os.LookupEnv("GOMEMLIMIT"); !set {
		// A soft limit: sign-ins hash with 19 MiB of argon2id memory each, and
		// without it the heap doubles past them before the collector runs
		// (peak RSS 150–170 MB under `make bench`'s login load). The
		// collector works harder near the limit instead; GOMEMLIMIT wins.
		debug.SetMemoryLimit(defaultMemoryLimit)
	}
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(defaultGCPercent)
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
	// The internal listeners outlive the public server's drain and
	// shutdown, so scrapes still see them; they shut down (each finishing
	// its requests in flight) when serve returns.
	stopMetrics := serveInternal("metrics", mln, a.Server.MetricsHandler(), log)
	defer stopMetrics()
	if cfg.DebugAddr != "" {
		dln, err := net.Listen("tcp", cfg.DebugAddr)
		if err != nil {
			_ = ln.Close()
			return fmt.Errorf("listen (FAIRPLAY_DEBUG_ADDR): %w", err)
		}
		stopProfiler := serveInternal("profiler", dln, profiler(), log)
		defer stopProfiler()
		log.Warn("profiler serving (FAIRPLAY_DEBUG_ADDR)", "addr", dln.Addr().String())
	}
	log.Info("fairplay serving", "addr", ln.Addr().String(), "metrics_addr", mln.Addr().String(), "version", version)
	return a.Server.Serve(ctx, ln, server.Drain{Delay: cfg.DrainDelay, ShutdownTimeout: cfg.ShutdownTimeout})
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

// internalShutdownTimeout bounds an internal listener's shutdown: a scrape
// or profile in flight may finish, a long profile is cut.
const internalShutdownTimeout = 5 * time.Second

// serveInternal serves an internal listener (metrics, profiler) until the
// returned stop is called; stop closes the listener, lets the requests in
// flight finish (for up to internalShutdownTimeout) and returns once the
// server has stopped.
func serveInternal(name string, ln net.Listener, h http.Handler, log *slog.Logger) (stop func()) {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 120 * time.Second,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error(name+" server", "err", err)
		}
	}()
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), internalShutdownTimeout)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			log.Warn(name+" server: shutdown cut requests in flight", "err", err)
			_ = srv.Close()
		}
		<-done
	}
}

// migrate is `fairplay migrate`.
func migrate(ctx context.Context) error {
	cfg, log, err := loadConfig()
	if err != nil {
		return err
	}
	if err := cfg.Require("DATABASE_URL"); err != nil {
		return err
	}
	return postgres.Migrate(ctx, cfg.DatabaseURL, log)
}
