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
// failure is counted) and readiness reports the outage.
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
	res, err := http.Get(env.URL + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 503 {
		t.Fatalf("readyz with Redis down: %d", res.StatusCode)
	}
	m, err := http.Get(env.MetricsURL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer m.Body.Close()
	if body := readAll(m); !strings.Contains(body, "fairplay_rate_limit_errors_total 4") {
		t.Fatalf("rate-limit errors not counted")
	}
}
