package telemetry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/semconv/v1.41.0/mcpconv"
	"go.opentelemetry.io/otel/trace"
)

// ModeOpenTelemetry is the host.json telemetryMode that turns telemetry on.
const ModeOpenTelemetry = "OpenTelemetry"

// InstrumentationName names the tracer and the meter.
const InstrumentationName = "github.com/funcmcp/funcmcp/host"

// DurationBuckets are the bucket bounds, in seconds, the MCP conventions
// give mcp.server.operation.duration.
var DurationBuckets = []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300}

// Telemetry is the host's tracer, meter and propagator. A nil *Telemetry
// is telemetry off: its methods return no link, no Trace, and Shutdown
// does nothing.
type Telemetry struct {
	tp       *sdktrace.TracerProvider
	mp       *sdkmetric.MeterProvider
	tracer   trace.Tracer
	prop     propagation.TextMapPropagator
	duration mcpconv.ServerOperationDuration
}

// ProtocolError is an OTEL_EXPORTER_OTLP_*PROTOCOL other than
// http/protobuf, the one protocol funchost exports with.
type ProtocolError struct{ Variable, Value string }

func (e *ProtocolError) Error() string {
	return fmt.Sprintf("%s=%q: funchost exports OTLP over http/protobuf only", e.Variable, e.Value)
}

// New starts telemetry when mode is [ModeOpenTelemetry] (any case) and
// OTEL_SDK_DISABLED is not "true"; otherwise it returns nil, telemetry off.
// service is the default service.name (OTEL_SERVICE_NAME and
// OTEL_RESOURCE_ATTRIBUTES win). Endpoints, headers, timeouts, the sampler
// and the export intervals are the SDK's reading of the OTEL_* variables.
func New(ctx context.Context, mode, service string, log *slog.Logger) (*Telemetry, error) {
	if !strings.EqualFold(mode, ModeOpenTelemetry) || strings.EqualFold(os.Getenv("OTEL_SDK_DISABLED"), "true") {
		return nil, nil
	}
	for _, v := range []string{"OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL"} {
		if p := os.Getenv(v); p != "" && p != "http/protobuf" {
			return nil, &ProtocolError{Variable: v, Value: p}
		}
	}
	if log != nil {
		otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
			log.Warn("telemetry: exporting", slog.String("error", err.Error()))
		}))
	}
	res, err := Resource(ctx, service)
	if err != nil {
		return nil, err
	}
	topts := []sdktrace.TracerProviderOption{sdktrace.WithResource(res)}
	if !exporterNone("OTEL_TRACES_EXPORTER") {
		exp, err := otlptracehttp.New(ctx)
		if err != nil {
			return nil, fmt.Errorf("starting the trace exporter: %w", err)
		}
		topts = append(topts, sdktrace.WithBatcher(exp))
	}
	tp := sdktrace.NewTracerProvider(topts...)
	mopts := []sdkmetric.Option{sdkmetric.WithResource(res)}
	if !exporterNone("OTEL_METRICS_EXPORTER") {
		exp, err := otlpmetrichttp.New(ctx)
		if err != nil {
			_ = tp.Shutdown(ctx)
			return nil, fmt.Errorf("starting the metric exporter: %w", err)
		}
		mopts = append(mopts, sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp)))
	}
	t, err := newTelemetry(tp, sdkmetric.NewMeterProvider(mopts...))
	if err != nil {
		_ = t.Shutdown(ctx)
		return nil, err
	}
	return t, nil
}

// newTelemetry makes the tracer, the instruments and the propagator of
// the providers; t is usable for Shutdown even with an error.
func newTelemetry(tp *sdktrace.TracerProvider, mp *sdkmetric.MeterProvider) (t *Telemetry, err error) {
	t = &Telemetry{tp: tp, mp: mp, tracer: tp.Tracer(InstrumentationName),
		prop: propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})}
	if t.duration, err = mcpconv.NewServerOperationDuration(mp.Meter(InstrumentationName),
		metric.WithExplicitBucketBoundaries(DurationBuckets...)); err != nil {
		return t, fmt.Errorf("making mcp.server.operation.duration: %w", err)
	}
	return t, nil
}

// exporterNone reports whether the variable (OTEL_TRACES_EXPORTER,
// OTEL_METRICS_EXPORTER) turns that signal's export off.
func exporterNone(v string) bool { return strings.EqualFold(os.Getenv(v), "none") }

// Resource is the process's resource: service.name (service unless
// OTEL_SERVICE_NAME or OTEL_RESOURCE_ATTRIBUTES say otherwise), the
// process (process.pid, process.executable.name), so that a trace shows
// which process each span ran in, and the SDK's name and version.
func Resource(ctx context.Context, service string) (*resource.Resource, error) {
	res, err := resource.New(ctx,
		resource.WithAttributes(semconv.ServiceName(service)),
		resource.WithFromEnv(),
		resource.WithProcessPID(),
		resource.WithProcessExecutableName(),
		resource.WithTelemetrySDK(),
	)
	if err != nil && !errors.Is(err, resource.ErrPartialResource) {
		return nil, fmt.Errorf("reading the telemetry resource: %w", err)
	}
	return res, nil
}

// Shutdown flushes what is buffered and stops the exporters.
func (t *Telemetry) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	return errors.Join(t.tp.Shutdown(ctx), t.mp.Shutdown(ctx))
}
