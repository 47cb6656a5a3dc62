package cache_test

import (
	"context"
	"strings"
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

// A REDIS_URL that does not parse is refused without its text: net/url's
// error quotes it, password and all (a '#' or '{' in an unencoded password
// is enough), and the server prints the error to its log.
func TestOpenKeepsThePasswordOutOfItsError(t *testing.T) {
	t.Parallel()
	for _, url := range []string{"redis://:p#w0rdsecret@h:1", "redis://user:s{e}cretpw@redis:6379/0", "redis://:pw%zzsecret@h:6379"} {
		_, err := cache.Open(url)
		if err == nil {
			t.Fatalf("Open(%q): no error", url)
		}
		for _, part := range []string{"secret", "p#w", "cretpw", "pw%zz"} {
			if strings.Contains(err.Error(), part) {
				t.Errorf("Open(%q): %v: names %q", url, err, part)
			}
		}
		if !strings.HasPrefix(err.Error(), "parse REDIS_URL: ") {
			t.Errorf("Open(%q): %v", url, err)
		}
	}
	// go-redis's own refusals still say what is wrong.
	if _, err := cache.Open("http://localhost:6379"); err == nil || !strings.Contains(err.Error(), "scheme") {
		t.Errorf("a wrong scheme: %v", err)
	}
}
