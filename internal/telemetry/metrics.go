package telemetry

import (
	"context"
	"math"
	"sync"
	"time"

	"github.com/fairplay/fairplay/internal/money"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/redis/go-redis/v9"
)

// Metrics are the server's Prometheus collectors, on their own registry.
type Metrics struct {
	Registry *prometheus.Registry
	// Requests counts HTTP requests by route, method and status code.
	Requests *prometheus.CounterVec
	// Latency observes HTTP request durations in seconds by route and method.
	Latency *prometheus.HistogramVec
	// InFlight is the number of requests being served.
	InFlight prometheus.Gauge
	// RateLimitErrors counts rate-limit checks that failed open because Redis was down.
	RateLimitErrors prometheus.Counter
	// DependencyUp is 1 while a dependency (postgres, redis) answers the
	// server's background checks, 0 once it has stopped answering (with the
	// readiness hysteresis: a few failures in a row, a few successes back).
	DependencyUp *prometheus.GaugeVec
	// Bets, Wagered and PaidOut count settled bets and their money by game.
	Bets    *prometheus.CounterVec
	Wagered *prometheus.CounterVec
	PaidOut *prometheus.CounterVec

	games sync.Map // game -> *gameCounters: each game's three children, resolved once
}

// gameCounters are one game's children of Bets, Wagered and PaidOut.
type gameCounters struct{ bets, wagered, paidOut prometheus.Counter }

// BetSettled counts one settled bet (it implements play.Metrics). The
// dollar counters are floats because Prometheus samples are; the ledger, not
// these counters, is the exact record.
func (m *Metrics) BetSettled(game string, stake, payout money.Amount) {
	v, ok := m.games.Load(game)
	if !ok {
		// The games are a fixed set: the labels are hashed and looked up
		// once per game, not three times per bet.
		v, _ = m.games.LoadOrStore(game, &gameCounters{
			bets: m.Bets.WithLabelValues(game), wagered: m.Wagered.WithLabelValues(game),
			paidOut: m.PaidOut.WithLabelValues(game),
		})
	}
	c := v.(*gameCounters)
	c.bets.Inc()
	c.wagered.Add(stake.Float64())
	c.paidOut.Add(payout.Float64())
}

// NewMetrics registers the process, Go runtime and HTTP collectors.
func NewMetrics() *Metrics {
	reg := prometheus.NewRegistry()
	m := &Metrics{
		Registry: reg,
		Requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "fairplay_http_requests_total", Help: "HTTP requests by route, method and status code.",
		}, []string{"route", "method", "code"}),
		Latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "fairplay_http_request_duration_seconds", Help: "HTTP request latency by route and method.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
		}, []string{"route", "method"}),
		InFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "fairplay_http_requests_in_flight", Help: "HTTP requests being served.",
		}),
		RateLimitErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "fairplay_rate_limit_errors_total", Help: "Rate-limit checks that failed open because Redis was unreachable.",
		}),
		DependencyUp: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "fairplay_dependency_up", Help: "1 while a dependency answers the background checks, else 0.",
		}, []string{"dependency"}),
		Bets: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "fairplay_bets_total", Help: "Settled bets by game.",
		}, []string{"game"}),
		Wagered: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "fairplay_wagered_dollars_total", Help: "Play money staked on settled bets, by game.",
		}, []string{"game"}),
		PaidOut: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "fairplay_paid_out_dollars_total", Help: "Play money paid out on settled bets, by game.",
		}, []string{"game"}),
	}
	for _, g := range []string{"dice", "plinko", "keno", "mines", "pump", "blackjack"} {
		m.Bets.WithLabelValues(g)
		m.Wagered.WithLabelValues(g)
		m.PaidOut.WithLabelValues(g)
	}
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.Requests, m.Latency, m.InFlight, m.RateLimitErrors, m.DependencyUp, m.Bets, m.Wagered, m.PaidOut)
	return m
}

// RegisterReadiness adds fairplay_ready, read from ready when Prometheus
// scrapes: 1 while /readyz answers 200.
func (m *Metrics) RegisterReadiness(ready func() bool) {
	m.Registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "fairplay_ready", Help: "1 while the server reports ready (/readyz answers 200), else 0.",
	}, func() float64 {
		if ready() {
			return 1
		}
		return 0
	}))
}

// RegisterPools adds Postgres and Redis connection-pool statistics.
func (m *Metrics) RegisterPools(pg *pgxpool.Pool, rdb *redis.Client) {
	m.Registry.MustRegister(&poolCollector{pg: pg, rdb: rdb})
}

// BetBatchStats are the bet batcher's counters (see
// internal/postgres.PlayStore.BetBatches).
type BetBatchStats struct {
	Statements, Bets, Alone int64
	// Busy is the time the statements took, summed (PlayStore.BatchTime).
	Busy time.Duration
}

// RegisterBetBatches adds the bet batcher's counters, read from fn when
// Prometheus scrapes: statements sent, the bets they held, and the bets
// placed on their own afterwards (a busy player or a failed batch), and the
// seconds the statements took. Bets ÷ statements is the mean batch size;
// the seconds' rate is how many statements ran at once on average, and
// seconds ÷ statements their mean latency.
func (m *Metrics) RegisterBetBatches(fn func() BetBatchStats) {
	m.Registry.MustRegister(batchCollector{fn: fn, descs: betBatchDescs})
}

// RegisterActionBatches adds the game action batcher's counters (see
// internal/postgres.PlayStore.ActionBatches), as RegisterBetBatches does
// the bets': statements sent, the actions they held, and the actions saved
// alone afterwards (a busy player or a failed batch), and the seconds the
// statements took.
func (m *Metrics) RegisterActionBatches(fn func() BetBatchStats) {
	m.Registry.MustRegister(batchCollector{fn: fn, descs: actionBatchDescs})
}

var (
	betBatchDescs = [4]*prometheus.Desc{
		prometheus.NewDesc("fairplay_bet_batches_total", "Statements that placed batches of bets.", nil, nil),
		prometheus.NewDesc("fairplay_bet_batched_bets_total", "Bets sent in batches of bets.", nil, nil),
		prometheus.NewDesc("fairplay_bet_batch_alone_total", "Bets of batches placed on their own afterwards (a busy player or a failed batch).", nil, nil),
		prometheus.NewDesc("fairplay_bet_batch_seconds_total", "Seconds the statements of batches of bets took, a wait for a pooled connection included, summed as each ends (its rate: how many ran at once on average).", nil, nil),
	}
	actionBatchDescs = [4]*prometheus.Desc{
		prometheus.NewDesc("fairplay_action_batches_total", "Statements that saved batches of game actions.", nil, nil),
		prometheus.NewDesc("fairplay_action_batched_actions_total", "Game actions sent in batches of actions.", nil, nil),
		prometheus.NewDesc("fairplay_action_batch_alone_total", "Game actions of batches saved on their own afterwards (a busy player or a failed batch).", nil, nil),
		prometheus.NewDesc("fairplay_action_batch_seconds_total", "Seconds the statements of batches of game actions took, a wait for a pooled connection included, summed as each ends (its rate: how many ran at once on average).", nil, nil),
	}
)

// GameActionStats count the running games' actions by how they were saved
// (see internal/postgres.PlayStore.GameActions).
type GameActionStats struct {
	Cached, Locked int64
}

// RegisterGameActions adds fairplay_game_actions_total{path}, read from fn
// when Prometheus scrapes: actions saved in one round trip from the
// replica's copy of the game (path="cached") and on the two-round-trip path
// that locks the game first (path="locked": no copy, or a stale one).
func (m *Metrics) RegisterGameActions(fn func() GameActionStats) {
	m.Registry.MustRegister(gameActionCollector(fn))
}

var gameActions = prometheus.NewDesc("fairplay_game_actions_total",
	"Actions on running games by how they were saved: cached (one round trip) or locked (two).", []string{"path"}, nil)

type gameActionCollector func() GameActionStats

func (c gameActionCollector) Describe(ch chan<- *prometheus.Desc) { ch <- gameActions }

func (c gameActionCollector) Collect(ch chan<- prometheus.Metric) {
	s := c()
	ch <- prometheus.MustNewConstMetric(gameActions, prometheus.CounterValue, float64(s.Cached), "cached")
	ch <- prometheus.MustNewConstMetric(gameActions, prometheus.CounterValue, float64(s.Locked), "locked")
}

// batchCollector reports a batcher's four counters under descs:
// statements, what they held, what was done alone afterwards, and the
// seconds the statements took.
type batchCollector struct {
	fn    func() BetBatchStats
	descs [4]*prometheus.Desc
}

func (c batchCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.descs {
		ch <- d
	}
}

func (c batchCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.fn()
	for i, v := range [3]int64{s.Statements, s.Bets, s.Alone} {
		ch <- prometheus.MustNewConstMetric(c.descs[i], prometheus.CounterValue, float64(v))
	}
	ch <- prometheus.MustNewConstMetric(c.descs[3], prometheus.CounterValue, s.Busy.Seconds())
}

var (
	pgTotal    = prometheus.NewDesc("fairplay_pg_pool_connections", "Postgres pool connections by state.", []string{"state"}, nil)
	pgMax      = prometheus.NewDesc("fairplay_pg_pool_max_connections", "Postgres pool size limit.", nil, nil)
	pgAcquires = prometheus.NewDesc("fairplay_pg_pool_acquires_total", "Postgres connections acquired from the pool.", nil, nil)
	pgWaits    = prometheus.NewDesc("fairplay_pg_pool_empty_acquires_total", "Acquires that had to wait for a connection.", nil, nil)
	pgWaitSecs = prometheus.NewDesc("fairplay_pg_pool_acquire_wait_seconds_total", "Time spent waiting for connections.", nil, nil)
	redisConns = prometheus.NewDesc("fairplay_redis_pool_connections", "Redis pool connections by state.", []string{"state"}, nil)
	redisHits  = prometheus.NewDesc("fairplay_redis_pool_hits_total", "Redis pool hits and misses.", []string{"result"}, nil)
	redisTOs   = prometheus.NewDesc("fairplay_redis_pool_timeouts_total", "Redis pool wait timeouts.", nil, nil)
)

type poolCollector struct {
	pg  *pgxpool.Pool
	rdb *redis.Client
}

func (c *poolCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{pgTotal, pgMax, pgAcquires, pgWaits, pgWaitSecs, redisConns, redisHits, redisTOs} {
		ch <- d
	}
}

func (c *poolCollector) Collect(ch chan<- prometheus.Metric) {
	if c.pg != nil {
		s := c.pg.Stat()
		ch <- prometheus.MustNewConstMetric(pgTotal, prometheus.GaugeValue, float64(s.AcquiredConns()), "acquired")
		ch <- prometheus.MustNewConstMetric(pgTotal, prometheus.GaugeValue, float64(s.IdleConns()), "idle")
		ch <- prometheus.MustNewConstMetric(pgTotal, prometheus.GaugeValue, float64(s.ConstructingConns()), "constructing")
		ch <- prometheus.MustNewConstMetric(pgMax, prometheus.GaugeValue, float64(s.MaxConns()))
		ch <- prometheus.MustNewConstMetric(pgAcquires, prometheus.CounterValue, float64(s.AcquireCount()))
		ch <- prometheus.MustNewConstMetric(pgWaits, prometheus.CounterValue, float64(s.EmptyAcquireCount()))
		ch <- prometheus.MustNewConstMetric(pgWaitSecs, prometheus.CounterValue, s.AcquireDuration().Seconds())
	}
	if c.rdb != nil {
		s := c.rdb.PoolStats()
		ch <- prometheus.MustNewConstMetric(redisConns, prometheus.GaugeValue, float64(s.TotalConns-s.IdleConns), "used")
		ch <- prometheus.MustNewConstMetric(redisConns, prometheus.GaugeValue, float64(s.IdleConns), "idle")
		ch <- prometheus.MustNewConstMetric(redisHits, prometheus.CounterValue, float64(s.Hits), "hit")
		ch <- prometheus.MustNewConstMetric(redisHits, prometheus.CounterValue, float64(s.Misses), "miss")
		ch <- prometheus.MustNewConstMetric(redisTOs, prometheus.CounterValue, float64(s.Timeouts))
	}
}

// GameActivity is one game's recent play for the activity gauges: money in
// dollars, return to player as a ratio (0.99); RTP is NaN when no bet of the
// window has settled, and the series is then left out.
type GameActivity struct {
	Game           string
	Bets           float64
	Wagered        float64
	PaidOut        float64
	RTP            float64
	TheoreticalRTP float64
}

// Activity is a snapshot of recent play across all replicas (it is read from
// the database, so every replica reports the same figures: aggregate them
// with max, not sum).
type Activity struct {
	Games         []GameActivity
	ActivePlayers float64
}

// RegisterActivity adds the activity gauges, computed by fn when Prometheus
// scrapes and then reused for ttl, so frequent or parallel scrapes (several
// Prometheus servers, many replicas) cost at most one query per ttl and
// replica. A failed fn reports fairplay_activity_up 0 and no other series.
func (m *Metrics) RegisterActivity(fn func(context.Context) (Activity, error), ttl time.Duration) {
	m.Registry.MustRegister(&activityCollector{fn: fn, ttl: ttl})
}

var (
	actUp       = prometheus.NewDesc("fairplay_activity_up", "Whether the last read of the activity figures succeeded.", nil, nil)
	actBets     = prometheus.NewDesc("fairplay_activity_bets", "Bets placed in the last 24 hours, by game (running games included).", []string{"game"}, nil)
	actWagered  = prometheus.NewDesc("fairplay_activity_wagered_dollars", "Stakes of the bets placed in the last 24 hours, by game.", []string{"game"}, nil)
	actPaidOut  = prometheus.NewDesc("fairplay_activity_paid_out_dollars", "Payouts of the bets placed in the last 24 hours, by game.", []string{"game"}, nil)
	actRTP      = prometheus.NewDesc("fairplay_activity_rtp_ratio", "Realized return to player of the bets placed in the last 24 hours and settled (paid out / settled stakes), by game.", []string{"game"}, nil)
	actTheory   = prometheus.NewDesc("fairplay_theoretical_rtp_ratio", "Theoretical return to player, by game.", []string{"game"}, nil)
	actPlayers  = prometheus.NewDesc("fairplay_active_players", "Distinct players who placed a bet in the last 15 minutes.", nil, nil)
	activityAll = []*prometheus.Desc{actUp, actBets, actWagered, actPaidOut, actRTP, actTheory, actPlayers}
)

type activityCollector struct {
	fn  func(context.Context) (Activity, error)
	ttl time.Duration

	mu   sync.Mutex
	at   time.Time
	last Activity
	err  error
}

func (c *activityCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range activityAll {
		ch <- d
	}
}

func (c *activityCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.at.IsZero() || time.Since(c.at) >= c.ttl {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		c.last, c.err = c.fn(ctx)
		cancel()
		c.at = time.Now()
	}
	if c.err != nil {
		ch <- prometheus.MustNewConstMetric(actUp, prometheus.GaugeValue, 0)
		return
	}
	ch <- prometheus.MustNewConstMetric(actUp, prometheus.GaugeValue, 1)
	ch <- prometheus.MustNewConstMetric(actPlayers, prometheus.GaugeValue, c.last.ActivePlayers)
	for _, g := range c.last.Games {
		ch <- prometheus.MustNewConstMetric(actBets, prometheus.GaugeValue, g.Bets, g.Game)
		ch <- prometheus.MustNewConstMetric(actWagered, prometheus.GaugeValue, g.Wagered, g.Game)
		ch <- prometheus.MustNewConstMetric(actPaidOut, prometheus.GaugeValue, g.PaidOut, g.Game)
		ch <- prometheus.MustNewConstMetric(actTheory, prometheus.GaugeValue, g.TheoreticalRTP, g.Game)
		if !math.IsNaN(g.RTP) {
			ch <- prometheus.MustNewConstMetric(actRTP, prometheus.GaugeValue, g.RTP, g.Game)
		}
	}
}

// LiveStats are the live bets feed's figures (see internal/live and
// internal/cache.LiveFeed).
type LiveStats struct {
	// Watchers is how many streams this replica serves now.
	Watchers int
	// WatchersDropped counts streams ended because their reader fell behind.
	WatchersDropped int64
	// WatchersDisplaced counts streams ended to give their place in a full
	// replica to a client holding fewer.
	WatchersDisplaced int64
	// Published counts bets sent to Redis; Dropped counts bets the feed gave
	// up (its queue was full, or Redis failed).
	Published, Dropped int64
}

// RegisterLive adds the live feed's metrics, read from fn when Prometheus
// scrapes.
func (m *Metrics) RegisterLive(fn func() LiveStats) {
	m.Registry.MustRegister(liveCollector(fn))
}

var (
	liveWatchers        = prometheus.NewDesc("fairplay_live_watchers", "Live bets streams this replica serves now.", nil, nil)
	liveWatchersDropped = prometheus.NewDesc("fairplay_live_watchers_dropped_total", "Live bets streams ended because their reader fell behind.", nil, nil)
	liveDisplaced       = prometheus.NewDesc("fairplay_live_watchers_displaced_total", "Live bets streams ended to give their place in a full replica to a client holding fewer.", nil, nil)
	livePublished       = prometheus.NewDesc("fairplay_live_bets_published_total", "Settled bets published to the live feed (Redis).", nil, nil)
	liveDropped         = prometheus.NewDesc("fairplay_live_bets_dropped_total", "Settled bets the live feed gave up: its queue was full or Redis failed.", nil, nil)
)

type liveCollector func() LiveStats

func (c liveCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{liveWatchers, liveWatchersDropped, liveDisplaced, livePublished, liveDropped} {
		ch <- d
	}
}

func (c liveCollector) Collect(ch chan<- prometheus.Metric) {
	s := c()
	ch <- prometheus.MustNewConstMetric(liveWatchers, prometheus.GaugeValue, float64(s.Watchers))
	ch <- prometheus.MustNewConstMetric(liveWatchersDropped, prometheus.CounterValue, float64(s.WatchersDropped))
	ch <- prometheus.MustNewConstMetric(liveDisplaced, prometheus.CounterValue, float64(s.WatchersDisplaced))
	ch <- prometheus.MustNewConstMetric(livePublished, prometheus.CounterValue, float64(s.Published))
	ch <- prometheus.MustNewConstMetric(liveDropped, prometheus.CounterValue, float64(s.Dropped))
}
