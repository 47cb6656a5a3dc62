// Package server assembles the HTTP server: middleware (request ids, panics,
// tracing, metrics, access logs, client address), the Connect and /api
// routes, health and readiness probes (readiness from background Postgres
// checks with hysteresis), Prometheus metrics and the embedded web app, with
// a graceful drain and shutdown.
package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/fairplay/fairplay/internal/routes"
	"github.com/fairplay/fairplay/internal/rpc"
	"github.com/fairplay/fairplay/internal/telemetry"
)

// Deps are what the server serves and checks.
type Deps struct {
	Handlers rpc.Handlers
	Postgres *pgxpool.Pool
	// PostgresCheck is readiness's check of Postgres (Postgres.Ping when
	// nil); the app checks that the server reached takes writes, so a
	// replica stays out of the endpoints while its pool has no primary.
	PostgresCheck func(context.Context) error
	Redis         *redis.Client
	Metrics       *telemetry.Metrics
	Logger        *slog.Logger
	// TrustedProxies are the CIDRs whose X-Forwarded-For is believed.
	TrustedProxies []netip.Prefix
	// TraceParents are the CIDRs whose traceparent a request's trace
	// continues (a tracing proxy that starts its own span).
	TraceParents []netip.Prefix
	// SecureCookies marks the anti-forgery cookie Secure.
	SecureCookies bool
	// Readiness is how the background checks (Run) judge Postgres; zero
	// fields take DefaultReadinessPolicy's.
	Readiness ReadinessPolicy
	// OnShutdown runs when the graceful shutdown begins (after the drain
	// delay), before in-flight requests are waited for: it ends long-lived
	// streams (the live bets feed), which would otherwise hold the shutdown
	// for its whole timeout. Their clients reconnect to another replica.
	OnShutdown func()
	// Tracing is whether spans are exported (telemetry.TracingEnabled):
	// only then does every request get a span (otelhttp). Without it a
	// caller's traceparent still reaches the logs (propagateTrace), and a
	// request costs no span, attributes or sampler decision.
	Tracing bool
}

// Server is the HTTP server.
type Server struct {
	deps     Deps
	handler  http.Handler
	metrics  http.Handler
	draining atomic.Bool
	// postgres decides readiness; redis is only watched (logged once per
	// change and exported as fairplay_dependency_up): nothing fails closed
	// because of Redis, so neither does readiness.
	postgres, redis *dependency
}

// New builds the server's handler tree.
func New(d Deps) *Server {
	s := &Server{deps: d}
	check := d.PostgresCheck
	if check == nil {
		check = d.Postgres.Ping
	}
	s.postgres = newDependency("postgres", check, d.Readiness, d.Logger, d.Metrics.DependencyUp.WithLabelValues("postgres"),
		"not ready: postgres does not answer", "ready again: postgres answers")
	if d.Redis != nil {
		s.redis = newDependency("redis", func(ctx context.Context) error { return d.Redis.Ping(ctx).Err() }, d.Readiness, d.Logger,
			d.Metrics.DependencyUp.WithLabelValues("redis"),
			"redis does not answer: rate limits fail open (readiness is unaffected)", "redis answers again")
	}
	d.Metrics.RegisterReadiness(s.ready)
	mux := http.NewServeMux()
	instrument := func(pattern string, h http.Handler) http.Handler { return s.instrument(pattern, h) }
	rpc.Mount(mux, d.Handlers, d.Logger, rpc.CSRF(d.SecureCookies), instrument)
	mux.Handle("GET /healthz", instrument("GET /healthz", http.HandlerFunc(s.healthz)))
	mux.Handle("GET /readyz", instrument("GET /readyz", http.HandlerFunc(s.readyz)))
	// Metrics and the profiler live on the internal listener
	// (MetricsHandler); here they are a plain 404, not the web app.
	mux.Handle("/metrics", http.NotFoundHandler())
	mux.Handle("/metrics/", http.NotFoundHandler())
	mux.Handle("/debug/", http.NotFoundHandler())
	mux.Handle("/", instrument("GET /", spaHandler()))

	var h http.Handler = mux
	h = rpc.ClientInfo(d.TrustedProxies)(h)
	h = s.accessLog(h)
	// A caller's trace context is believed only from TraceParents: anyone
	// else could pick the sampling decision (hiding its requests from a
	// parent-based sampler, or having every one recorded with its
	// statements) and the trace its spans and log lines join. Theirs
	// becomes a link of a trace of our own. Not TrustedProxies: a proxy
	// believed for X-Forwarded-For passes a client's traceparent on as it
	// came unless it starts a span of its own.
	tracePeer := rpc.PeerIn(d.TraceParents)
	if d.Tracing {
		h = traced(h, tracePeer)
	} else {
		h = propagateTrace(tracePeer, h)
	}
	h = s.recoverer(h)
	h = requestID(h)
	h = securityHeaders(d.SecureCookies, h)
	h = s.closeWhileDraining(h)
	s.handler = h

	internal := http.NewServeMux()
	internal.Handle("GET /metrics", promhttp.HandlerFor(d.Metrics.Registry, promhttp.HandlerOpts{Registry: d.Metrics.Registry}))
	s.metrics = internal
	return s
}

// Handler returns the public root handler (for tests and custom listeners).
func (s *Server) Handler() http.Handler { return s.handler }

// MetricsHandler serves GET /metrics (Prometheus) and nothing else; it
// belongs on the internal listener (FAIRPLAY_METRICS_ADDR), never on the
// public port.
func (s *Server) MetricsHandler() http.Handler { return s.metrics }

// Run checks the dependencies in the background until ctx ends: Postgres
// decides readiness (with d.Readiness' hysteresis), Redis is only watched.
// Until Run runs, the server reports ready (New's caller has just reached
// Postgres).
func (s *Server) Run(ctx context.Context) {
	var wg sync.WaitGroup
	for _, d := range []*dependency{s.postgres, s.redis} {
		if d != nil {
			wg.Go(func() { d.watch(ctx) })
		}
	}
	wg.Wait()
}

// Drain is how Serve stops.
type Drain struct {
	// Delay is how long the server keeps serving, not ready, after ctx is
	// cancelled: long enough for load balancers and kube-proxy to stop
	// sending it new requests (FAIRPLAY_DRAIN_DELAY).
	Delay time.Duration
	// ShutdownTimeout bounds the wait for in-flight requests afterwards
	// (FAIRPLAY_SHUTDOWN_TIMEOUT).
	ShutdownTimeout time.Duration
}

// Serve serves on ln until ctx is cancelled, then drains: readiness turns
// false at once ("not ready: draining"), but the server keeps accepting and
// serving requests for d.Delay — answering each with Connection: close, so
// that clients open their next connection elsewhere — while the endpoint
// removal reaches every load balancer. Then it stops accepting, closes idle
// connections and gives in-flight requests up to d.ShutdownTimeout.
//
// Idle keep-alive connections are left open during the delay on purpose:
// closing them at once, while traffic still arrives, races clients that are
// sending on them; a request on one is answered (with Connection: close).
func (s *Server) Serve(ctx context.Context, ln net.Listener, d Drain) error {
	srv := &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(s.deps.Logger.Handler(), slog.LevelWarn),
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	if s.deps.OnShutdown != nil {
		srv.RegisterOnShutdown(s.deps.OnShutdown)
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("http server: %w", err)
	case <-ctx.Done():
	}
	s.draining.Store(true)
	if d.Delay > 0 {
		s.deps.Logger.Info("draining: not ready, still serving", "delay", d.Delay)
		t := time.NewTimer(d.Delay)
		select {
		case <-t.C:
		case err := <-errc:
			t.Stop()
			return fmt.Errorf("http server: %w", err)
		}
	}
	s.deps.Logger.Info("shutting down", "timeout", d.ShutdownTimeout)
	sctx, cancel := context.WithTimeout(context.Background(), d.ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("graceful shutdown: %w", err)
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// closeWhileDraining asks clients to close their connection after each
// response while the server drains, so their next request goes to another
// replica.
func (s *Server) closeWhileDraining(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.draining.Load() {
			w.Header().Set("Connection", "close")
		}
		next.ServeHTTP(w, r)
	})
}

// ready reports whether the server takes traffic: not draining, and
// Postgres answering by the background checks.
func (s *Server) ready() bool { return !s.draining.Load() && s.postgres.up.Load() }

func (s *Server) healthz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain")
	_, _ = w.Write([]byte("ok\n"))
}

// readyz answers from the background checks' state, so a probe costs no
// database round trip: 200 while Postgres answers and the server is not
// draining, else 503 "not ready: draining" or "not ready: postgres". Redis
// plays no part (rate limits fail open without it). It is public (the load
// balancer asks it), so it only names what is not ready; the cause is logged
// once per change and never sent.
func (s *Server) readyz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	switch {
	case s.draining.Load():
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte("not ready: draining\n"))
	case !s.postgres.up.Load():
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte("not ready: postgres\n"))
	default:
		_, _ = w.Write([]byte("ok\n"))
	}
}

// statusWriter records the status code written.
type statusWriter struct {
	http.ResponseWriter
	status int
	bytes  int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += n
	return n, err
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Flush lets streaming handlers flush through the wrapper. A flush sends
// the header (200 unless one was written).
func (w *statusWriter) Flush() { _ = w.FlushError() }

// FlushError is Flush with the error of a client that has gone, which
// http.ResponseController's Flush returns.
func (w *statusWriter) FlushError() error {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return http.NewResponseController(w.ResponseWriter).Flush()
}

// instrument records request count and latency labelled with the route pattern.
// The metric children are resolved once per label set (routeMetrics), not
// hashed from their label values on every request.
func (s *Server) instrument(pattern string, next http.Handler) http.Handler {
	m := s.deps.Metrics
	route := pattern
	if route == "GET /" {
		route = "spa"
	}
	// A Connect service prefix: label by procedure, which is a bounded set
	// once unknown paths (404) are folded together.
	byProcedure := route[0] == '/' && route != "/api/"
	var procedures map[string]struct{}
	if byProcedure {
		procedures = proceduresOf(route)
	}
	var children sync.Map // routeKey -> *routeMetrics
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		m.InFlight.Inc()
		sw, ok := w.(*statusWriter)
		if !ok {
			sw = &statusWriter{ResponseWriter: w}
		}
		done := false
		defer func() {
			m.InFlight.Dec()
			code := sw.status
			if code == 0 {
				code = http.StatusOK
				if !done {
					code = http.StatusInternalServerError // a panic the recoverer answers
				}
			}
			key := routeKey{route: route, method: methodLabel(r.Method), code: code}
			if byProcedure {
				// Only a procedure the service has names a series: any
				// other path under the prefix (a made-up one answered 400
				// by the GET check before connect-go's 404, or not valid
				// UTF-8) would grow the registry for good.
				key.route = "unmatched"
				if _, ok := procedures[r.URL.Path]; ok {
					key.route = r.URL.Path
				}
			}
			if span := trace.SpanFromContext(r.Context()); span.IsRecording() {
				_, path, found := strings.Cut(key.route, " ") // an /api route's pattern names its method
				if !found {
					path = key.route
				}
				name := key.method + " " + path
				span.SetName(name)
				if n, ok := r.Context().Value(spanNameKey{}).(*string); ok {
					*n = name
				}
			}
			rm, ok := children.Load(key)
			if !ok {
				rm, _ = children.LoadOrStore(key, &routeMetrics{
					requests: m.Requests.WithLabelValues(key.route, key.method, strconv.Itoa(code)),
					latency:  m.Latency.WithLabelValues(key.route, key.method),
				})
			}
			c := rm.(*routeMetrics)
			c.requests.Inc()
			c.latency.Observe(time.Since(start).Seconds())
		}()
		next.ServeHTTP(sw, r)
		done = true
	})
}

// proceduresOf lists the procedures of the Connect service served under
// prefix ("/fairplay.v1.GameService/"), as their paths.
func proceduresOf(prefix string) map[string]struct{} {
	name := protoreflect.FullName(strings.Trim(prefix, "/"))
	d, err := protoregistry.GlobalFiles.FindDescriptorByName(name)
	if err != nil {
		panic("server: no service " + string(name) + " for " + prefix)
	}
	sd, ok := d.(protoreflect.ServiceDescriptor)
	if !ok {
		panic("server: " + string(name) + " is not a service")
	}
	out := make(map[string]struct{}, sd.Methods().Len())
	for i := range sd.Methods().Len() {
		out[routes.ConnectPath(sd.Methods().Get(i))] = struct{}{}
	}
	return out
}

// methodLabel is a request's method as the metrics and span names carry it:
// one of HTTP's own methods, or "other". Patterns without a method (the web
// app, /api/, a Connect service) are handed every token a client writes as
// its method, and each would otherwise be a series of its own.
func methodLabel(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return m
	}
	return "other"
}

// routeKey is one label set of the request metrics. Its values are bounded
// like the metrics' own: a handler's pattern or a procedure of its service,
// an HTTP method or "other", the status codes the server writes.
type routeKey struct {
	route, method string
	code          int
}

type routeMetrics struct {
	requests prometheus.Counter
	latency  prometheus.Observer
}

// traced gives each request a server span. A caller's trace context is its
// parent only from a peer tracePeer accepts; anyone else's is a link of a
// new trace. The span is named by the route the mux chose (instrument
// writes it into the request's spanName), never by the path a client
// wrote: otelhttp names it when it starts and again, if the mux set the
// request's pattern, after the handler.
func traced(next http.Handler, tracePeer func(*http.Request) bool, opts ...otelhttp.Option) http.Handler {
	h := otelhttp.NewHandler(next, "http", append([]otelhttp.Option{
		otelhttp.WithPublicEndpointFn(func(r *http.Request) bool { return !tracePeer(r) }),
		otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string {
			if n, ok := r.Context().Value(spanNameKey{}).(*string); ok && *n != "" {
				return *n
			}
			return methodLabel(r.Method)
		}),
		otelhttp.WithFilter(func(r *http.Request) bool {
			return r.URL.Path != "/healthz" && r.URL.Path != "/readyz"
		}),
	}, opts...)...)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), spanNameKey{}, new(string))))
	})
}

// spanNameKey holds, in a traced request's context, the name instrument
// gives its span.
type spanNameKey struct{}

// propagateTrace puts a trusted proxy's W3C traceparent into the request's
// context when spans are not exported, so its trace id still reaches the
// logs (telemetry's log handler reads it) without a span per request.
func propagateTrace(fromProxy func(*http.Request) bool, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Traceparent") == "" || !fromProxy(r) {
			next.ServeHTTP(w, r)
			return
		}
		ctx := otel.GetTextMapPropagator().Extract(r.Context(), propagation.HeaderCarrier(r.Header))
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// accessLog logs every request at debug (errors at warn) without headers or
// bodies, so no password or token is ever written.
func (s *Server) accessLog(next http.Handler) http.Handler {
	log := s.deps.Logger
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw, ok := w.(*statusWriter)
		if !ok {
			sw = &statusWriter{ResponseWriter: w}
		}
		next.ServeHTTP(sw, r)
		lvl := slog.LevelDebug
		if sw.status >= 500 {
			lvl = slog.LevelWarn
		}
		if !log.Enabled(r.Context(), lvl) {
			return // no record to build (at the default level, every 2xx)
		}
		log.Log(r.Context(), lvl, "http request", "method", r.Method, "path", r.URL.Path, "status", sw.status,
			"bytes", sw.bytes, "duration_ms", float64(time.Since(start).Microseconds())/1000)
	})
}

// recoverer turns a panic into a 500 and a log line.
func (s *Server) recoverer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The same statusWriter serves accessLog and instrument below
		// (without tracing, nothing wraps it in between): one per request.
		sw := &statusWriter{ResponseWriter: w}
		w = sw
		defer func() {
			if v := recover(); v != nil {
				if err, ok := v.(error); ok && errors.Is(err, http.ErrAbortHandler) {
					panic(v)
				}
				s.deps.Logger.ErrorContext(r.Context(), "panic serving request", "panic", fmt.Sprint(v), "path", r.URL.Path)
				if sw.status != 0 {
					// An answer has begun: a second one would be read as
					// its end. The connection is cut instead.
					panic(http.ErrAbortHandler)
				}
				// As every /api error: JSON, never stored.
				h := w.Header()
				h.Set("Content-Type", "application/json")
				h.Set("Cache-Control", "no-store")
				h.Set("X-Content-Type-Options", "nosniff")
				w.WriteHeader(http.StatusInternalServerError)
				_, _ = io.WriteString(w, `{"message":"Something went wrong. Please try again."}`+"\n")
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// requestID gives every request an id (a valid incoming X-Request-Id is
// kept), echoes it in the response and puts it in the context for logs.
func requestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("X-Request-Id")
		if len(id) == 0 || len(id) > 64 {
			var b [8]byte
			_, _ = rand.Read(b[:])
			id = hex.EncodeToString(b[:])
		}
		w.Header().Set("X-Request-Id", id)
		next.ServeHTTP(w, r.WithContext(telemetry.WithRequestID(r.Context(), id)))
	})
}
