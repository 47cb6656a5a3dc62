package cache_test

import (
	"context"
	"testing"
	"time"

	"github.com/fairplay/fairplay/internal/cache"
	"github.com/fairplay/fairplay/internal/cache/redistest"
	"github.com/fairplay/fairplay/internal/settings"
)

// Check asks without counting and Add counts: together they limit events
// known to count only afterwards (failed sign-ins).
func TestLimiterCheckAndAdd(t *testing.T) {
	t.Parallel()
	rdb, prefix := redistest.New(t)
	l := cache.NewLimiter(rdb, prefix)
	ctx := context.Background()
	for _, n := range []int{1, 3} {
		r := settings.Rate{N: n, Period: time.Hour}
		key := "failures:" + string(rune('0'+n))
		for range 10 {
			if ok, _, err := l.Check(ctx, key, r); err != nil || !ok {
				t.Fatalf("%v: check before any event: %v %v", r, ok, err)
			}
		}
		for i := range n {
			if ok, _, err := l.Check(ctx, key, r); err != nil || !ok {
				t.Fatalf("%v: check before event %d: %v %v", r, i+1, ok, err)
			}
			if err := l.Add(ctx, key, r); err != nil {
				t.Fatal(err)
			}
		}
		ok, retry, err := l.Check(ctx, key, r)
		if err != nil || ok || retry < time.Second {
			t.Fatalf("%v: check after %d events: allowed %v, retry %v, %v", r, n, ok, retry, err)
		}
		// Adding past the limit keeps it shut without pushing it further out
		// than one more period.
		if err := l.Add(ctx, key, r); err != nil {
			t.Fatal(err)
		}
		if ok, retry, _ := l.Check(ctx, key, r); ok || retry > r.Period/time.Duration(n)+time.Second {
			t.Fatalf("%v: after an extra add: allowed %v, retry %v", r, ok, retry)
		}
		// Allow shares the counter.
		if ok, _, err := l.Allow(ctx, key, r); err != nil || ok {
			t.Fatalf("%v: allow after the limit: %v %v", r, ok, err)
		}
	}
}
