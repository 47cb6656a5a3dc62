package server

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// ReadinessPolicy is how the background checks turn dependency pings into
// readiness: a dependency is down after Failures failed pings in a row and
// up again after Successes answered pings in a row, so that one slow ping
// does not take a replica out of every Service's endpoints, and a flapping
// database does not put it back at its first answer.
type ReadinessPolicy struct {
	// Interval is the time between pings, and each ping's timeout.
	Interval time.Duration
	// Failures is how many failed pings in a row make a dependency down.
	Failures int
	// Successes is how many answered pings in a row make it up again.
	Successes int
}

// DefaultReadinessPolicy pings every 2 s, goes down after 3 failures (6 s)
// and comes back after 2 answers.
var DefaultReadinessPolicy = ReadinessPolicy{Interval: 2 * time.Second, Failures: 3, Successes: 2}

func (p ReadinessPolicy) withDefaults() ReadinessPolicy {
	if p.Interval <= 0 {
		p.Interval = DefaultReadinessPolicy.Interval
	}
	if p.Failures <= 0 {
		p.Failures = DefaultReadinessPolicy.Failures
	}
	if p.Successes <= 0 {
		p.Successes = DefaultReadinessPolicy.Successes
	}
	return p
}

// dependency is one dependency's state as the background checks see it. It
// starts up: the server is built only after Postgres answered (the schema
// check) and readiness must not wait a first interval.
type dependency struct {
	name   string
	ping   func(context.Context) error
	policy ReadinessPolicy
	log    *slog.Logger
	gauge  prometheus.Gauge
	// downMsg and upMsg are logged when the state changes, once each.
	downMsg, upMsg string

	up atomic.Bool
	// failures and successes count the pings in a row; only the checking
	// goroutine touches them.
	failures, successes int
}

func newDependency(name string, ping func(context.Context) error, p ReadinessPolicy, log *slog.Logger,
	gauge prometheus.Gauge, downMsg, upMsg string) *dependency {
	d := &dependency{name: name, ping: ping, policy: p.withDefaults(), log: log, gauge: gauge, downMsg: downMsg, upMsg: upMsg}
	d.up.Store(true)
	if gauge != nil {
		gauge.Set(1)
	}
	return d
}

// observe records one ping's result, switching the state (and logging the
// switch, once) when the policy says so.
func (d *dependency) observe(ctx context.Context, err error) {
	if err != nil {
		d.successes = 0
		d.failures++
		if d.up.Load() && d.failures >= d.policy.Failures {
			d.set(false)
			d.log.WarnContext(ctx, d.downMsg, "dependency", d.name, "failed_pings", d.failures, "err", err)
			return
		}
		d.log.DebugContext(ctx, "dependency ping failed", "dependency", d.name, "failed_pings", d.failures, "err", err)
		return
	}
	d.failures = 0
	d.successes++
	if !d.up.Load() && d.successes >= d.policy.Successes {
		d.set(true)
		d.log.InfoContext(ctx, d.upMsg, "dependency", d.name)
	}
}

func (d *dependency) set(up bool) {
	d.up.Store(up)
	if d.gauge != nil {
		v := 0.0
		if up {
			v = 1
		}
		d.gauge.Set(v)
	}
}

// watch pings every interval until ctx ends.
func (d *dependency) watch(ctx context.Context) {
	t := time.NewTicker(d.policy.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		pctx, cancel := context.WithTimeout(ctx, d.policy.Interval)
		err := d.ping(pctx)
		cancel()
		if ctx.Err() != nil {
			return
		}
		d.observe(ctx, err)
	}
}
