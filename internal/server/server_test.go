package server

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/fairplay/fairplay/internal/rpc"
	"github.com/fairplay/fairplay/internal/telemetry"
)

// Without exported spans there is no otelhttp span per request, but a
// trusted proxy's traceparent still reaches the context (and so the logs);
// anyone else's does not.
func TestPropagateTraceKeepsTheProxysTraceID(t *testing.T) {
	prev := otel.GetTextMapPropagator()
	otel.SetTextMapPropagator(propagation.TraceContext{})
	t.Cleanup(func() { otel.SetTextMapPropagator(prev) })

	var got trace.SpanContext
	h := propagateTrace(rpc.PeerIn([]netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}),
		http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
			got = trace.SpanContextFromContext(r.Context())
		}))

	req := httptest.NewRequest(http.MethodGet, "/api/me", nil)
	req.RemoteAddr = "10.1.2.3:5000"
	req.Header.Set("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	h.ServeHTTP(httptest.NewRecorder(), req)
	if got.TraceID().String() != "4bf92f3577b34da6a3ce929d0e0e4736" {
		t.Fatalf("trace id in the context = %q, want the proxy's", got.TraceID())
	}

	got = trace.SpanContext{}
	req.RemoteAddr = "192.0.2.7:5000"
	h.ServeHTTP(httptest.NewRecorder(), req)
	if got.IsValid() {
		t.Fatalf("a client's own traceparent reached the context: %v", got.TraceID())
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
	serve("/fairplay.v1.GameService/GetBet") // a procedure answering not_found
	status = http.StatusBadRequest
	serve("/fairplay.v1.GameService/Nope3") // a made-up procedure the GET check refuses first
	serve("/fairplay.v1.GameService/\xff")

	for _, c := range []struct {
		route, code string
		want        float64
	}{
		{"/fairplay.v1.GameService/PlayDice", "200", 2},
		{"/fairplay.v1.GameService/PlayKeno", "200", 1},
		{"unmatched", "404", 2},
		{"/fairplay.v1.GameService/Nope1", "404", 0},
		{"/fairplay.v1.GameService/GetBet", "404", 1},
		{"unmatched", "400", 2},
		{"/fairplay.v1.GameService/Nope3", "400", 0},
	} {
		if got := testutil.ToFloat64(m.Requests.WithLabelValues(c.route, http.MethodPost, c.code)); got != c.want {
			t.Errorf("requests{route=%q, code=%s} = %v, want %v", c.route, c.code, got, c.want)
		}
	}
}

// A panic before any answer is answered 500 in JSON; one after an answer
// has begun cuts the connection rather than append a second answer to it.
func TestRecovererAnswersOnce(t *testing.T) {
	s := &Server{deps: Deps{Logger: slog.New(slog.DiscardHandler)}}
	wrote := false
	srv := httptest.NewServer(s.recoverer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if wrote {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"message":"first"}`)
		}
		panic("boom")
	})))
	defer srv.Close()

	res, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusInternalServerError || !strings.Contains(string(body), "Something went wrong") {
		t.Fatalf("a panic before the answer: %d %s", res.StatusCode, body)
	}

	wrote = true
	res, err = http.Get(srv.URL)
	if err != nil {
		return // cut before the client saw the status line: also one answer at most
	}
	body, err = io.ReadAll(res.Body)
	res.Body.Close()
	if err == nil || strings.Contains(string(body), "went wrong") {
		t.Fatalf("a panic after the answer began: %d %q (read error %v), want the connection cut", res.StatusCode, body, err)
	}
}

// With spans exported, a caller's traceparent is the server span's parent
// only from FAIRPLAY_TRACE_PARENTS: anyone else would pick the sampling
// decision (an unsampled parent hides its requests from a parent-based
// sampler) and the trace its spans join. Theirs becomes a link of a new
// trace. The span is named by the route the mux chose, never by the path or
// method the client wrote, also when otelhttp names it again after the
// handler (it does when the mux set the request's pattern, as here).
func TestTracedTrustsOnlyTheTraceParents(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(t.Context()) })
	s := &Server{deps: Deps{Metrics: telemetry.NewMetrics()}}
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	mux := http.NewServeMux()
	mux.Handle("/fairplay.v1.GameService/", s.instrument("/fairplay.v1.GameService/", ok))
	mux.Handle("GET /api/auth/user", s.instrument("GET /api/auth/user", ok))
	h := traced(mux, rpc.PeerIn([]netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}),
		otelhttp.WithTracerProvider(tp), otelhttp.WithPropagators(propagation.TraceContext{}))

	const callers = "4bf92f3577b34da6a3ce929d0e0e4736"
	for _, c := range []struct {
		method, path, peer, flags string
		parented                  bool
		name                      string
	}{
		// Unsampled: still recorded, as a trace of its own.
		{"XMADEUP", "/fairplay.v1.GameService/" + strings.Repeat("x", 100), "192.0.2.7:5000", "00", false,
			"other unmatched"},
		{"POST", "/fairplay.v1.GameService/PlayDice", "192.0.2.7:5000", "01", false,
			"POST /fairplay.v1.GameService/PlayDice"},
		{"HEAD", "/api/auth/user", "192.0.2.7:5000", "01", false, "HEAD /api/auth/user"},
		{"POST", "/fairplay.v1.GameService/PlayDice", "10.1.2.3:5000", "01", true,
			"POST /fairplay.v1.GameService/PlayDice"},
	} {
		rec.Reset()
		req := httptest.NewRequest(c.method, c.path, nil)
		req.RemoteAddr = c.peer
		req.Header.Set("traceparent", "00-"+callers+"-00f067aa0ba902b7-"+c.flags)
		h.ServeHTTP(httptest.NewRecorder(), req)
		spans := rec.Ended()
		if len(spans) != 1 {
			t.Fatalf("%s %s from %s: %d spans recorded, want 1", c.method, c.path, c.peer, len(spans))
		}
		sp := spans[0]
		if got := sp.SpanContext().TraceID().String() == callers; got != c.parented {
			t.Errorf("%s %s from %s: the span is in the caller's trace: %v, want %v", c.method, c.path, c.peer,
				got, c.parented)
		}
		if !c.parented && (len(sp.Links()) != 1 || sp.Links()[0].SpanContext.TraceID().String() != callers) {
			t.Errorf("%s %s from %s: links %v, want the caller's span", c.method, c.path, c.peer, sp.Links())
		}
		if sp.Name() != c.name {
			t.Errorf("%s %s from %s: span named %q, want %q", c.method, c.path, c.peer, sp.Name(), c.name)
		}
	}
}

// A panic is counted as the 500 the recoverer answers, not as a 200.
func TestInstrumentCountsAPanicAs500(t *testing.T) {
	m := telemetry.NewMetrics()
	s := &Server{deps: Deps{Metrics: m, Logger: slog.New(slog.DiscardHandler)}}
	h := s.recoverer(s.instrument("GET /api/auth/user", http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		panic("boom")
	})))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/auth/user", nil))
	if rec.Code != http.StatusInternalServerError {
		t.Fatalf("answered %d", rec.Code)
	}
	for code, want := range map[string]float64{"500": 1, "200": 0} {
		if got := testutil.ToFloat64(m.Requests.WithLabelValues("GET /api/auth/user", "GET", code)); got != want {
			t.Errorf("requests{code=%s} = %v, want %v", code, got, want)
		}
	}
}
