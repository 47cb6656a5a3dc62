package telemetry

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"
)

// TracingEnabled reports whether the standard OTEL_* variables ask for traces
// to be exported: an OTLP endpoint is set, or OTEL_TRACES_EXPORTER is "otlp".
// It is false when the variables are contradictory; SetupTracing then
// reports why.
func TracingEnabled() bool {
	on, err := tracesExport(os.LookupEnv)
	return on && err == nil
}

// tracesExport reads the standard variables the server honours:
// OTEL_SDK_DISABLED=true turns tracing off; OTEL_TRACES_EXPORTER may be
// "none" or "otlp" (the only exporter built in; the SDK's other names,
// "console" and "zipkin", are refused rather than silently ignored);
// without it, an OTEL_EXPORTER_OTLP_[TRACES_]ENDPOINT turns export on. The
// exporter speaks OTLP over HTTP (port 4318), so a protocol other than
// http/protobuf is refused too. otlptracehttp itself reads the rest
// (endpoint, headers, timeout, compression, certificates).
func tracesExport(lookup func(string) (string, bool)) (bool, error) {
	get := func(name string) string {
		v, _ := lookup(name)
		return strings.TrimSpace(v)
	}
	if strings.EqualFold(get("OTEL_SDK_DISABLED"), "true") {
		return false, nil
	}
	on := get("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
	switch v := get("OTEL_TRACES_EXPORTER"); v {
	case "":
	case "none":
		return false, nil
	case "otlp":
		on = true
	default:
		return false, fmt.Errorf("OTEL_TRACES_EXPORTER=%s: want otlp or none (the server exports traces over OTLP/HTTP only)", v)
	}
	if !on {
		return false, nil
	}
	for _, name := range []string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
		if v := get(name); v != "" {
			if v != "http/protobuf" {
				return false, fmt.Errorf("%s=%s: want http/protobuf (the server exports traces over OTLP/HTTP only)", name, v)
			}
			break // the traces-specific setting wins
		}
	}
	return true, nil
}

// SetupTracing installs the global tracer provider and W3C propagators. When
// TracingEnabled is false spans are still created (so trace ids reach logs
// from incoming traceparent headers) but not recorded, and nothing is
// exported. The returned function flushes and stops the exporter.
func SetupTracing(ctx context.Context, version string) (func(context.Context) error, error) {
	on, err := tracesExport(os.LookupEnv)
	if err != nil {
		return nil, fmt.Errorf("otel: %w", err)
	}
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(
		semconv.ServiceName("fairplay"), semconv.ServiceVersion(version)))
	if err != nil && !errors.Is(err, resource.ErrPartialResource) {
		return nil, fmt.Errorf("otel resource: %w", err)
	}
	opts := []sdktrace.TracerProviderOption{sdktrace.WithResource(res)}
	if on {
		// Only the trace exporter over HTTP: contrib's autoexport linked the
		// gRPC, stdout and Prometheus exporters of every signal as well.
		exp, err := otlptracehttp.New(ctx)
		if err != nil {
			return nil, fmt.Errorf("otel exporter: %w", err)
		}
		opts = append(opts, sdktrace.WithBatcher(exp))
	} else {
		// Nothing to export to: spans still carry ids (a new trace's, or the
		// caller's from traceparent) into the logs, but record nothing —
		// recording every span for nobody cost about a tenth of a bet's CPU.
		opts = append(opts, sdktrace.WithSampler(sdktrace.NeverSample()))
	}
	tp := sdktrace.NewTracerProvider(opts...)
	otel.SetTracerProvider(tp)
	return tp.Shutdown, nil
}
