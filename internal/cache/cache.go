// Package cache is Fairplay's Redis side: the client and the shared rate
// limiter. Redis holds nothing that money or sessions depend on; when it is
// down, rate limits fail open (logged) and everything else keeps working.
package cache

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	neturl "net/url"
	"sync"
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
		return nil, fmt.Errorf("parse REDIS_URL: %w", redactURLError(err))
	}
	opt.DialTimeout = 2 * time.Second
	opt.ReadTimeout = time.Second
	opt.WriteTimeout = time.Second
	opt.MaxRetries = 1
	// go-redis dials five times 100 ms apart before giving up; with Redis
	// down that made every rate-limited request wait up to 0.85 s (the chaos
	// suite measured it). One retry is enough, and the limiter's breaker
	// stops asking a Redis that is down.
	opt.DialerRetries = 1
	c := redis.NewClient(opt)
	if err := redisotel.InstrumentTracing(c); err != nil {
		return nil, fmt.Errorf("trace redis: %w", err)
	}
	return c, nil
}

// errBadURL is REDIS_URL's parse error without its text.
var errBadURL = errors.New("not a valid URL (its text is left out: it may hold a password); " +
	"characters such as # ? / @ % { } in the password must be percent-encoded")

// redactURLError keeps REDIS_URL's password out of the logs: net/url's
// errors quote the URL, or the part after the host that a password with
// '#', '?' or '/' in it spills into, so they are replaced whole; go-redis's
// own errors name only the scheme, the path or an option.
func redactURLError(err error) error {
	var ue *neturl.Error
	if errors.As(err, &ue) {
		return errBadURL
	}
	return err
}

// Limiter is a GCRA rate limiter (redis_rate) shared by every replica.
//
// When Redis fails, the limiter stops asking it for breakerPause: checks in
// that time fail at once (callers fail open) instead of each waiting for a
// dial timeout, and the outage and the recovery are logged once each rather
// than once per request.
type Limiter struct {
	l      *redis_rate.Limiter
	prefix string
	// Errors, when set, counts checks that failed because Redis was unreachable.
	Errors prometheus.Counter
	// Logger receives the outage and recovery messages (slog.Default when nil).
	Logger *slog.Logger

	mu        sync.Mutex
	down      bool
	downUntil time.Time
}

// breakerPause is how long the limiter leaves a failed Redis alone.
const breakerPause = time.Second

// ErrUnavailable is returned while the limiter's breaker is open.
var ErrUnavailable = errors.New("rate limiter: redis unavailable, checks paused")

// NewLimiter returns a limiter storing its counters under prefix.
func NewLimiter(c *redis.Client, prefix string) *Limiter {
	return &Limiter{l: redis_rate.NewLimiter(c), prefix: prefix + "rate:"}
}

// Allow counts one event for key against r.
func (l *Limiter) Allow(ctx context.Context, key string, r settings.Rate) (bool, time.Duration, error) {
	return l.allowN(ctx, key, redis_rate.Limit{Rate: r.N, Burst: r.N, Period: r.Period}, 1)
}

// Check reports whether one more event for key would be allowed against r,
// without counting one. With Add it limits events that are only known to
// count once they are over (failed sign-ins): Check before, Add after.
func (l *Limiter) Check(ctx context.Context, key string, r settings.Rate) (bool, time.Duration, error) {
	// GCRA keeps one time per key (when the bucket is full again); a cost of
	// zero against a burst one smaller asks whether a cost of one would fit
	// the real burst, and changes nothing.
	return l.allowN(ctx, key, redis_rate.Limit{Rate: r.N, Burst: r.N - 1, Period: r.Period}, 0)
}

// Add counts one event for key against r. An event over the limit is not
// counted twice: the bucket is full either way.
func (l *Limiter) Add(ctx context.Context, key string, r settings.Rate) error {
	_, _, err := l.allowN(ctx, key, redis_rate.Limit{Rate: r.N, Burst: r.N, Period: r.Period}, 1)
	return err
}

// allowN runs one GCRA step of cost n behind the breaker.
func (l *Limiter) allowN(ctx context.Context, key string, limit redis_rate.Limit, n int) (bool, time.Duration, error) {
	if l.paused() {
		l.countError()
		return false, 0, ErrUnavailable
	}
	res, err := l.l.AllowN(ctx, l.prefix+key, limit, n)
	if err != nil {
		l.countError()
		if ctx.Err() == nil {
			l.trip(ctx, err)
		}
		return false, 0, fmt.Errorf("rate limit: %w", err)
	}
	l.recovered(ctx)
	// RetryAfter is -1 when the step fits (Allowed is n, so 0 for a check).
	if res.RetryAfter < 0 {
		return true, 0, nil
	}
	retry := res.RetryAfter
	if retry < time.Second {
		retry = time.Second
	}
	return false, retry, nil
}

func (l *Limiter) countError() {
	if l.Errors != nil {
		l.Errors.Inc()
	}
}

func (l *Limiter) logger() *slog.Logger {
	if l.Logger != nil {
		return l.Logger
	}
	return slog.Default()
}

// paused reports whether the breaker is open.
func (l *Limiter) paused() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.down && time.Now().Before(l.downUntil)
}

// trip opens the breaker for breakerPause.
func (l *Limiter) trip(ctx context.Context, err error) {
	l.mu.Lock()
	first := !l.down
	l.down, l.downUntil = true, time.Now().Add(breakerPause)
	l.mu.Unlock()
	if first {
		l.logger().WarnContext(ctx, "redis unavailable: rate limits are off (requests allowed) until it is back", "err", err)
	}
}

// recovered closes the breaker after a successful check.
func (l *Limiter) recovered(ctx context.Context) {
	l.mu.Lock()
	was := l.down
	l.down = false
	l.mu.Unlock()
	if was {
		l.logger().InfoContext(ctx, "redis is back: rate limits apply again")
	}
}
