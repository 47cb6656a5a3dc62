// Package app wires Fairplay's parts into a running server: Postgres, Redis,
// signing keys, the bot check, the domain services, the handlers and the HTTP
// server. `fairplay serve` and the black-box test suites both build it here,
// so tests run exactly the production wiring.
package app

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"math/big"
	"net/http"
	"net/netip"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"github.com/fairplay/fairplay/internal/accounts"
	"github.com/fairplay/fairplay/internal/admin"
	"github.com/fairplay/fairplay/internal/cache"
	rglimits "github.com/fairplay/fairplay/internal/limits"
	"github.com/fairplay/fairplay/internal/live"
	"github.com/fairplay/fairplay/internal/play"
	"github.com/fairplay/fairplay/internal/postgres"
	"github.com/fairplay/fairplay/internal/rpc"
	"github.com/fairplay/fairplay/internal/server"
	"github.com/fairplay/fairplay/internal/settings"
	"github.com/fairplay/fairplay/internal/telemetry"
	"github.com/fairplay/fairplay/internal/wallet"
)

// App is a wired server and what it holds open.
type App struct {
	Config   settings.Config
	Postgres *pgxpool.Pool
	Redis    *redis.Client
	Keys     *accounts.KeySet
	Accounts *accounts.Service
	Play     *play.Service
	Admin    *admin.Service
	TopUps   *wallet.TopUps
	Limits   *rglimits.Service
	// Live is this replica's fan-out of the live bets feed, and LiveFeed
	// carries the feed between replicas (Redis pub/sub).
	Live     *live.Hub
	LiveFeed *cache.LiveFeed
	Metrics  *telemetry.Metrics
	Server   *server.Server
	log      *slog.Logger
	now      func() time.Time
}

// Options adjust the wiring for tests.
type Options struct {
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// Bots replaces the bot check chosen from the configuration.
	Bots accounts.BotChecker
	// Hasher replaces the production password hasher (tests use a cheap one).
	Hasher *accounts.Hasher
}

// New connects to Postgres (refusing an unmigrated database) and Redis and
// builds the server.
func New(ctx context.Context, cfg settings.Config, log *slog.Logger, o Options) (*App, error) {
	if err := cfg.Require("DATABASE_URL", "REDIS_URL"); err != nil {
		return nil, err
	}
	limits := play.Limits{MinBet: cfg.MinBet, MaxBet: cfg.MaxBet, MaxPayout: cfg.MaxPayout}
	if err := limits.Validate(); err != nil {
		return nil, fmt.Errorf("bet limits (FAIRPLAY_MIN_BET, FAIRPLAY_MAX_BET, FAIRPLAY_MAX_PAYOUT): %w", err)
	}
	pool, err := postgres.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		return nil, err
	}
	a := &App{Config: cfg, Postgres: pool, log: log, now: o.Now}
	if a.now == nil {
		a.now = time.Now
	}
	if err := postgres.CheckMigrated(ctx, pool); err != nil {
		a.Close()
		return nil, err
	}
	if a.Redis, err = cache.Open(cfg.RedisURL); err != nil {
		a.Close()
		return nil, err
	}
	if a.Keys, err = accounts.LoadKeySet(cfg.SigningKeysDir, accounts.KeySetOptions{
		ActivationDelay: cfg.SigningKeyActivationDelay, Logger: log, Now: o.Now,
	}); err != nil {
		a.Close()
		return nil, err
	}
	bots := o.Bots
	if bots == nil {
		if cfg.TurnstileSecretKey == "" {
			log.Warn("development mode: TURNSTILE_SECRET_KEY is not set, the bot check accepts only the development token",
				"token", accounts.DevelopmentBotToken)
			bots = accounts.DevelopmentBotCheck{}
		} else {
			bots = accounts.NewTurnstile(cfg.TurnstileSecretKey, cfg.TurnstileSiteKey, cfg.TurnstileVerifyURL, nil)
		}
	}
	a.Metrics = telemetry.NewMetrics()
	a.Metrics.RegisterPools(pool, a.Redis)
	limiter := cache.NewLimiter(a.Redis, cfg.RedisPrefix)
	limiter.Errors = a.Metrics.RateLimitErrors
	limiter.Logger = log

	a.Accounts = accounts.NewService(accounts.Options{
		Store: postgres.NewAccountStore(pool), Tokens: accounts.NewTokens(a.Keys, cfg.AccessTokenTTL, o.Now),
		Bots: bots, Limiter: limiter, Config: cfg, Logger: log, Now: o.Now, Hasher: o.Hasher,
	})
	a.Live = live.NewHub(live.HubOptions{MaxWatchers: cfg.LiveMaxWatchers, MaxPerClient: cfg.LiveMaxWatchersPerIP,
		GroupOf: accounts.SiteOf})
	a.LiveFeed = cache.NewLiveFeed(a.Redis, cfg.RedisPrefix, a.Live, log)
	a.Metrics.RegisterLive(func() telemetry.LiveStats {
		h, f := a.Live.Stats(), a.LiveFeed.Stats()
		return telemetry.LiveStats{Watchers: h.Watchers, WatchersDropped: h.Dropped, WatchersDisplaced: h.Displaced,
			Published: f.Published, Dropped: f.Dropped}
	})
	playStore := postgres.NewPlayStore(pool)
	playStore.SetLogger(log)
	a.Metrics.RegisterBetBatches(func() telemetry.BetBatchStats {
		statements, bets, alone := playStore.BetBatches()
		busy, _ := playStore.BatchTime()
		return telemetry.BetBatchStats{Statements: statements, Bets: bets, Alone: alone, Busy: busy}
	})
	a.Metrics.RegisterActionBatches(func() telemetry.BetBatchStats {
		statements, actions, alone := playStore.ActionBatches()
		_, busy := playStore.BatchTime()
		return telemetry.BetBatchStats{Statements: statements, Bets: actions, Alone: alone, Busy: busy}
	})
	a.Metrics.RegisterGameActions(func() telemetry.GameActionStats {
		cached, locked := playStore.GameActions()
		return telemetry.GameActionStats{Cached: cached, Locked: locked}
	})
	a.Play = play.NewService(play.Options{
		Store: playStore, Limiter: limiter, BetRate: cfg.BetsPerUser, Metrics: a.Metrics,
		Logger: log, Now: o.Now, Limits: limits, Feed: a.LiveFeed,
	})
	a.TopUps = wallet.NewTopUps(postgres.NewWalletStore(pool), wallet.TopUpPolicy{
		Amount: cfg.TopUpAmount, Interval: cfg.TopUpInterval, Threshold: limits.MinBet,
	}, o.Now)
	a.Limits = rglimits.NewService(postgres.NewLimitsStore(pool))
	a.Admin = admin.NewService(admin.Options{Store: postgres.NewAdminStore(pool), Limits: a.Limits, Logger: log, Now: o.Now})
	a.Metrics.RegisterActivity(activityMetrics(a.Admin), 15*time.Second)
	trusted, err := parsePrefixes("FAIRPLAY_TRUSTED_PROXIES", cfg.TrustedProxies)
	if err != nil {
		a.Close()
		return nil, err
	}
	traceParents, err := parsePrefixes("FAIRPLAY_TRACE_PARENTS", cfg.TraceParents)
	if err != nil {
		a.Close()
		return nil, err
	}
	a.Server = server.New(server.Deps{
		Handlers: rpc.Handlers{
			Auth:     rpc.NewAuthHandler(a.Accounts, log, cfg.SecureCookies),
			Game:     rpc.NewGameHandler(a.Accounts, a.Play, log),
			Fairness: rpc.NewFairnessHandler(a.Accounts, a.Play, log),
			Admin:    rpc.NewAdminHandler(a.Accounts, a.Admin, log),
			Wallet:   rpc.NewWalletHandler(a.Accounts, a.TopUps, a.Limits, log),
			Live:     rpc.NewLiveHandler(a.Live, log),
		},
		OnShutdown:     a.Live.Close,
		Postgres:       pool,
		PostgresCheck:  func(ctx context.Context) error { return postgres.CheckWritable(ctx, pool) },
		Redis:          a.Redis,
		Metrics:        a.Metrics,
		Logger:         log,
		TrustedProxies: trusted,
		TraceParents:   traceParents,
		SecureCookies:  cfg.SecureCookies,
		Tracing:        telemetry.TracingEnabled(),
		Readiness: server.ReadinessPolicy{
			Interval: cfg.ReadinessInterval, Failures: cfg.ReadinessFailures, Successes: cfg.ReadinessSuccesses,
		},
	})
	return a, nil
}

// activityMetrics adapts the admin activity figures to the Prometheus
// gauges of telemetry (read on scrape, cached 15 s).
func activityMetrics(svc *admin.Service) func(context.Context) (telemetry.Activity, error) {
	return func(ctx context.Context) (telemetry.Activity, error) {
		a, err := svc.ActivityForMetrics(ctx)
		if err != nil {
			return telemetry.Activity{}, err
		}
		out := telemetry.Activity{ActivePlayers: float64(a.ActivePlayers)}
		for _, g := range a.Games {
			rtp := math.NaN()
			if sw := g.SettledWagered.Units(); sw.Sign() > 0 {
				rtp, _ = new(big.Rat).SetFrac(g.PaidOut.Units(), sw).Float64()
			}
			theory, _ := strconv.ParseFloat(g.TheoreticalRTP+"e-2", 64) // percent to ratio, correctly rounded
			out.Games = append(out.Games, telemetry.GameActivity{Game: g.Game, Bets: float64(g.Bets),
				Wagered: g.Wagered.Float64(), PaidOut: g.PaidOut.Float64(), RTP: rtp, TheoreticalRTP: theory})
		}
		return out, nil
	}
}

// Handler is the server's root handler.
func (a *App) Handler() http.Handler { return a.Server.Handler() }

// Run starts background work (the readiness checks, key reloading, folding
// the bet statistics, pruning ended sessions, the live bets feed's
// publishing and subscription)
// until ctx ends.
func (a *App) Run(ctx context.Context) {
	go a.Server.Run(ctx)
	go a.Keys.Watch(ctx, 10*time.Second)
	go postgres.FoldBetStatsEvery(ctx, a.Postgres, time.Second, a.log)
	go postgres.PruneSessionsEvery(ctx, a.Postgres, time.Hour, a.Accounts.Liveness, a.now, a.log)
	go a.LiveFeed.Run(ctx)
}

// Close releases the connections.
func (a *App) Close() {
	if a.Redis != nil {
		_ = a.Redis.Close()
	}
	if a.Postgres != nil {
		a.Postgres.Close()
	}
}

// parsePrefixes parses a setting's CIDRs.
func parsePrefixes(name string, list []string) ([]netip.Prefix, error) {
	out := make([]netip.Prefix, 0, len(list))
	for _, p := range list {
		pfx, err := netip.ParsePrefix(p)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		out = append(out, pfx)
	}
	return out, nil
}
