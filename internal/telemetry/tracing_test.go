package telemetry

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.opentelemetry.io/otel"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

func TestTracesExport(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		env  map[string]string
		on   bool
		err  string
	}{
		{name: "nothing set"},
		{name: "endpoint", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, on: true},
		{name: "traces endpoint", env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://collector:4318/v1/traces"}, on: true},
		{name: "otlp exporter, default endpoint", env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, on: true},
		{name: "none wins over an endpoint", env: map[string]string{
			"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}},
		{name: "sdk disabled", env: map[string]string{
			"OTEL_SDK_DISABLED": "TRUE", "OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}},
		{name: "sdk disabled=false", env: map[string]string{
			"OTEL_SDK_DISABLED": "false", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, on: true},
		{name: "http/protobuf", env: map[string]string{
			"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"}, on: true},
		{name: "traces protocol wins", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318",
			"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf"}, on: true},
		{name: "grpc refused", env: map[string]string{
			"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, err: "OTEL_EXPORTER_OTLP_PROTOCOL=grpc"},
		{name: "grpc unused when off", env: map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}},
		{name: "console refused", env: map[string]string{"OTEL_TRACES_EXPORTER": "console"}, err: "OTEL_TRACES_EXPORTER=console"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			on, err := tracesExport(func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok })
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want one naming %s", err, tc.err)
				}
				return
			}
			if err != nil || on != tc.on {
				t.Fatalf("on %v err %v, want on %v", on, err, tc.on)
			}
		})
	}
}

// TestSetupTracingExportsOverOTLPHTTP points OTEL_EXPORTER_OTLP_ENDPOINT at a
// fake collector and checks that a span arrives at /v1/traces as OTLP
// protobuf, with the service's name. It sets environment variables and the
// global tracer provider, so it is not parallel.
func TestSetupTracingExportsOverOTLPHTTP(t *testing.T) {
	got := make(chan *collectortrace.ExportTraceServiceRequest, 10)
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if r.Method != http.MethodPost || r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" || err != nil {
			t.Errorf("collector got %s %s (%s), %v", r.Method, r.URL.Path, r.Header.Get("Content-Type"), err)
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		var req collectortrace.ExportTraceServiceRequest
		if err := proto.Unmarshal(body, &req); err != nil {
			t.Errorf("collector: %v", err)
		}
		got <- &req
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(nil)
	}))
	defer collector.Close()
	for _, k := range []string{"OTEL_SDK_DISABLED", "OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
		"OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_HEADERS"} {
		t.Setenv(k, "")
	}
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.URL)
	if !TracingEnabled() {
		t.Fatal("TracingEnabled is false with OTEL_EXPORTER_OTLP_ENDPOINT set")
	}

	ctx := context.Background()
	shutdown, err := SetupTracing(ctx, "v-test")
	if err != nil {
		t.Fatal(err)
	}
	_, span := otel.Tracer("test").Start(ctx, "place bet")
	span.End()
	if err := shutdown(ctx); err != nil { // flushes the batch
		t.Fatal(err)
	}

	var names []string
	var service string
	for len(got) > 0 {
		for _, rs := range (<-got).GetResourceSpans() {
			for _, a := range rs.GetResource().GetAttributes() {
				if a.GetKey() == "service.name" {
					service = a.GetValue().GetStringValue()
				}
			}
			for _, ss := range rs.GetScopeSpans() {
				for _, s := range ss.GetSpans() {
					names = append(names, s.GetName())
				}
			}
		}
	}
	if len(names) != 1 || names[0] != "place bet" || service != "fairplay" {
		t.Fatalf("collector received spans %q of service %q, want [place bet] of fairplay", names, service)
	}
}

// TestSetupTracingRefusesGRPC: a collector configured for gRPC would never
// receive a span, so the server says so at start instead.
func TestSetupTracingRefusesGRPC(t *testing.T) {
	t.Setenv("OTEL_SDK_DISABLED", "")
	t.Setenv("OTEL_TRACES_EXPORTER", "")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "")
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4317")
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
	if _, err := SetupTracing(context.Background(), "v-test"); err == nil || !strings.Contains(err.Error(), "http/protobuf") {
		t.Fatalf("SetupTracing with grpc: %v", err)
	}
}
