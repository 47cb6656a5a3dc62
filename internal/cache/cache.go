// Package cache is Fairplay's Redis side: the client and the shared rate
// limiter. Redis holds nothing that money or sessions depend on; when it is
// down, rate limits fail open (logged) and everything else keeps working.
package cache

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/extra/redisotel/v9"
	"github.com/redis/go-redis/v9"

	"github.com/fairplay/fairplay/internal/settings"
)

func init() {
	// go-redis logs pool dial failures through its own logger; send them to
	// slog at debug level (outages are reported by /readyz and metrics).
	redis.SetLogger(slogLogger{})
}

type slogLogger struct{}

func (slogLogger) Printf(ctx context.Context, format string, v ...any) {
	slog.DebugContext(ctx, "redis: "+fmt.Sprintf(format, v...))
}

// Open connects to the Redis at url, traced with OpenTelemetry. It does not
// fail when Redis is unreachable: the server starts and reports not-ready.
func Open(url string) (*redis.Client, error) {
	opt, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("parse REDIS_URL: %w", err)
	}
	opt.DialTimeout = 2 * time.Second
	opt.ReadTimeout = time.Second
	opt.WriteTimeout = time.Second
	opt.MaxRetries = 1
	c := redis.NewClient(opt)
	if err := redisotel.InstrumentTracing(c); err != nil {
		return nil, fmt.Errorf("trace redis: %w", err)
	}
	return c, nil
}

// Limiter is a GCRA rate limiter (redis_rate) shared by every replica.
type Limiter struct {
	l      *redis_rate.Limiter
	prefix string
	// Errors, when set, counts checks that failed because Redis was unreachable.
	Errors prometheus.Counter
}

// NewLimiter returns a limiter storing its counters under prefix.
func NewLimiter(c *redis.Client, prefix string) *Limiter {
	return &Limiter{l: redis_rate.NewLimiter(c), prefix: prefix + "rate:"}
}

// Allow counts one event for key against r.
func (l *Limiter) Allow(ctx context.Context, key string, r settings.Rate) (bool, time.Duration, error) {
	limit := redis_rate.Limit{Rate: r.N, Burst: r.N, Period: r.Period}
	res, err := l.l.Allow(ctx, l.prefix+key, limit)
	if err != nil {
		if l.Errors != nil {
			l.Errors.Inc()
		}
		return false, 0, fmt.Errorf("rate limit: %w", err)
	}
	if res.Allowed > 0 {
		return true, 0, nil
	}
	retry := res.RetryAfter
	if retry < time.Second {
		retry = time.Second
	}
	return false, retry, nil
}
