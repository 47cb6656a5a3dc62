package server

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/fairplay/fairplay/internal/telemetry"
)

// Without exported spans there is no otelhttp span per request, but a
// caller's traceparent still reaches the context (and so the logs).
func TestPropagateTraceKeepsTheCallersTraceID(t *testing.T) {
	prev := otel.GetTextMapPropagator()
	otel.SetTextMapPropagator(propagation.TraceContext{})
	t.Cleanup(func() { otel.SetTextMapPropagator(prev) })

	var got trace.SpanContext
	h := propagateTrace(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		got = trace.SpanContextFromContext(r.Context())
	}))

	req := httptest.NewRequest(http.MethodGet, "/api/me", nil)
	req.Header.Set("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	h.ServeHTTP(httptest.NewRecorder(), req)
	if got.TraceID().String() != "4bf92f3577b34da6a3ce929d0e0e4736" {
		t.Fatalf("trace id in the context = %q, want the caller's", got.TraceID())
	}

	got = trace.SpanContext{}
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/api/me", nil))
	if got.IsValid() {
		t.Fatalf("a request without traceparent got a span context: %v", got.TraceID())
	}
}

// The request metrics resolve their children once per label set: the counts
// must still land on the right route, method and status.
func TestInstrumentCountsPerLabelSet(t *testing.T) {
	m := telemetry.NewMetrics()
	s := &Server{deps: Deps{Metrics: m}}
	status := http.StatusOK
	h := s.instrument("/fairplay.v1.GameService/", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(status)
	}))
	serve := func(path string) {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, path, nil))
	}
	serve("/fairplay.v1.GameService/PlayDice")
	serve("/fairplay.v1.GameService/PlayDice")
	serve("/fairplay.v1.GameService/PlayKeno")
	status = http.StatusNotFound
	serve("/fairplay.v1.GameService/Nope1")
	serve("/fairplay.v1.GameService/Nope2")

	for _, c := range []struct {
		route, code string
		want        float64
	}{
		{"/fairplay.v1.GameService/PlayDice", "200", 2},
		{"/fairplay.v1.GameService/PlayKeno", "200", 1},
		{"unmatched", "404", 2},
		{"/fairplay.v1.GameService/Nope1", "404", 0},
	} {
		if got := testutil.ToFloat64(m.Requests.WithLabelValues(c.route, http.MethodPost, c.code)); got != c.want {
			t.Errorf("requests{route=%q, code=%s} = %v, want %v", c.route, c.code, got, c.want)
		}
	}
}
