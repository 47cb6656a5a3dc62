package security_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/fairplay/fairplay/internal/settings"
	"github.com/fairplay/fairplay/test/apitest"
)

func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(body)
}

// TestMetricsAreNotPublic: the public port answers /metrics (and the
// profiler's paths) with a plain 404 and no metric in it; the metrics are
// on the internal listener, which serves nothing else.
func TestMetricsAreNotPublic(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	env.Client().Do("GET", "/api/auth/user", nil)
	for _, path := range []string{"/metrics", "/metrics/", "/debug/pprof/", "/debug/pprof/cmdline", "/debug/pprof/heap"} {
		status, body := httpGet(t, env.URL+path)
		if status != http.StatusNotFound {
			t.Errorf("public %s: %d", path, status)
		}
		for _, leak := range []string{"fairplay_", "go_goroutines", "promhttp", "pprof", "<html"} {
			if strings.Contains(body, leak) {
				t.Errorf("public %s shows %q: %.200s", path, leak, body)
			}
		}
	}

	status, body := httpGet(t, env.MetricsURL+"/metrics")
	if status != 200 || !strings.Contains(body, `fairplay_http_requests_total{code="401",method="GET",route="GET /api/auth/user"} 1`) {
		t.Fatalf("internal /metrics: %d %.300s", status, body)
	}
	for _, path := range []string{"/", "/api/csrf", "/healthz", "/debug/pprof/", "/index.html"} {
		if status, body := httpGet(t, env.MetricsURL+path); status != http.StatusNotFound {
			t.Errorf("internal listener serves %s: %d %.100s", path, status, body)
		}
	}
}

// TestReadyzNamesNoErrors: /readyz says what is not ready but not its error
// (addresses, driver messages), which only the log gets. Redis plays no part
// in readiness (rate limits fail open without it), so it is not named.
func TestReadyzNamesNoErrors(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t, apitest.WithConfig(func(c *settings.Config) { c.RedisURL = "redis://127.0.0.1:1/0" }))
	env.App.Postgres.Close()
	body := env.WaitReadyz(t, http.StatusServiceUnavailable)
	if body != "not ready: postgres\n" {
		t.Errorf("readyz body %q, want %q", body, "not ready: postgres\n")
	}
	for _, leak := range []string{"127.0.0.1", ":1", "dial", "refused", "closed", "pool", "tcp", "connect", "redis"} {
		if strings.Contains(body, leak) {
			t.Errorf("readyz body %q shows %q", body, leak)
		}
	}
}
