package telemetry

import (
	"context"
	"errors"
	"fmt"
	"os"

	"go.opentelemetry.io/contrib/exporters/autoexport"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"
)

// TracingEnabled reports whether the standard OTEL_* variables ask for traces
// to be exported: an OTLP endpoint is set, or OTEL_TRACES_EXPORTER names an
// exporter other than "none".
func TracingEnabled() bool {
	if v := os.Getenv("OTEL_SDK_DISABLED"); v == "true" {
		return false
	}
	if v := os.Getenv("OTEL_TRACES_EXPORTER"); v != "" {
		return v != "none"
	}
	return os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// SetupTracing installs the global tracer provider and W3C propagators. When
// TracingEnabled is false spans are still created (so trace ids reach logs
// from incoming traceparent headers) but not recorded, and nothing is
// exported. The returned
// function flushes and stops the exporter.
func SetupTracing(ctx context.Context, version string) (func(context.Context) error, error) {
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(
		semconv.ServiceName("fairplay"), semconv.ServiceVersion(version)))
	if err != nil && !errors.Is(err, resource.ErrPartialResource) {
		return nil, fmt.Errorf("otel resource: %w", err)
	}
	opts := []sdktrace.TracerProviderOption{sdktrace.WithResource(res)}
	if TracingEnabled() {
		exp, err := autoexport.NewSpanExporter(ctx)
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
