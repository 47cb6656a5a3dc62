package api_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fairplay/fairplay/internal/settings"
	"github.com/fairplay/fairplay/test/apitest"
)

// With Redis unreachable, rate limits fail open (sign-in keeps working, the
// failure is counted), the outage shows in fairplay_dependency_up, and the
// server stays ready: nothing fails closed because of Redis, so a Redis blip
// must not take every replica out of the load balancer.
func TestRedisDownFailsOpen(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t, apitest.WithConfig(func(c *settings.Config) {
		c.RedisURL = "redis://127.0.0.1:1/0"
		c.LoginPerIP = settings.Rate{N: 1, Period: time.Minute}
		c.RegisterPerIP = settings.Rate{N: 1, Period: time.Minute}
	}))
	c := env.Client()
	c.Register("ivan")
	c.Register("judy")
	c.Login("ivan", "secret123")
	c.Login("ivan", "secret123")
	metrics := func() string {
		t.Helper()
		m, err := http.Get(env.MetricsURL + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer m.Body.Close()
		return readAll(m)
	}
	if body := metrics(); !strings.Contains(body, "fairplay_rate_limit_errors_total 4") {
		t.Fatalf("rate-limit errors not counted")
	}
	// The background checks have found Redis down...
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(metrics(), `fairplay_dependency_up{dependency="redis"} 0`) {
		if time.Now().After(deadline) {
			t.Fatal(`fairplay_dependency_up{dependency="redis"} did not turn 0`)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// ...and readiness does not care.
	if body := env.WaitReadyz(t, http.StatusOK); body != "ok\n" {
		t.Fatalf("readyz with Redis down: %q", body)
	}
	if body := metrics(); !strings.Contains(body, "fairplay_ready 1") || !strings.Contains(body, `fairplay_dependency_up{dependency="postgres"} 1`) {
		t.Fatalf("metrics with only Redis down: want fairplay_ready 1 and postgres up")
	}
}
