package security_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/fairplay/fairplay/test/apitest"
)

// requestSeries counts the request metrics' series (the counter's and the
// latency histogram's) on the internal listener.
func requestSeries(t *testing.T, env *apitest.Env) int {
	t.Helper()
	status, body := httpGet(t, env.MetricsURL+"/metrics")
	if status != http.StatusOK {
		t.Fatalf("/metrics: %d", status)
	}
	n := 0
	for line := range strings.SplitSeq(body, "\n") {
		if strings.HasPrefix(line, "fairplay_http_requests_total{") ||
			strings.HasPrefix(line, "fairplay_http_request_duration_seconds_count{") {
			n++
		}
	}
	return n
}

// TestRequestMetricsStayBounded: nothing a client writes in a request's
// path or method names a metric series. Found by a review playing a hostile
// client: a GET under a Connect service's prefix with a message query is
// answered 400 by the GET check before connect-go could answer 404, and was
// labelled with its path; and the web app, /api/ and the Connect services
// are handed every method token a client writes (Go's parser takes any), each
// labelled as it came. Every made-up path or method added a counter and a
// 12-bucket histogram for good, holding the whole request line (up to
// 64 KiB of header): about 1,200 such requests passed the server's 80 MiB
// soft memory limit, with no sign-in and no rate limit in the way, and every
// scrape carried them. A path that is not UTF-8 made the label panic after
// the 400 was written, logged at error level and answered twice.
func TestRequestMetricsStayBounded(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	do := func(method, path string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(method, env.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(body)
	}
	// Each kind once first, so the series a legitimate label set makes
	// (unmatched, other) exist before counting.
	round := func(i int) {
		do("GET", fmt.Sprintf("/fairplay.v1.GameService/Made%dUp?encoding=json&message=%%7B%%7D", i))
		do("GET", fmt.Sprintf("/fairplay.v1.AuthService/%s?base64=1&message=!", strings.Repeat("x", 200+i)))
		do(fmt.Sprintf("X%04d", i), "/")
		do(fmt.Sprintf("Y%04d", i), "/api/auth/user")
		do(fmt.Sprintf("Z%04d", i), "/fairplay.v1.AuthService/GetUser")
	}
	round(0)
	before := requestSeries(t, env)
	for i := 1; i <= 30; i++ {
		round(i)
	}
	if grown := requestSeries(t, env) - before; grown > 0 {
		t.Errorf("150 requests with made-up paths and methods added %d request series", grown)
	}

	status, body := do("GET", "/fairplay.v1.GameService/%FF?base64=1&message=!")
	if status != http.StatusBadRequest {
		t.Errorf("a path that is not UTF-8: %d %s", status, body)
	}
	var v any
	if err := json.NewDecoder(strings.NewReader(body)).Decode(&v); err != nil || strings.Contains(body, "went wrong") {
		t.Errorf("a path that is not UTF-8 is answered %q", body)
	}
	if dec := json.NewDecoder(strings.NewReader(body)); dec.Decode(&v) == nil && dec.More() {
		t.Errorf("a path that is not UTF-8 is answered twice: %q", body)
	}

	// Real procedures are still told apart.
	if s, b := do("GET", "/api/auth/user"); s != http.StatusUnauthorized {
		t.Fatalf("GET /api/auth/user: %d %s", s, b)
	}
	_, metrics := httpGet(t, env.MetricsURL+"/metrics")
	for _, want := range []string{
		`fairplay_http_requests_total{code="401",method="GET",route="GET /api/auth/user"} 1`,
		`route="unmatched"`, `method="other"`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}
