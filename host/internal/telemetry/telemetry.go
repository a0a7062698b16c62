package telemetry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/semconv/v1.41.0/mcpconv"
	"go.opentelemetry.io/otel/trace"

	"github.com/funcmcp/funcmcp/internal/otelsetup"
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
	// durationSets are the attribute sets of duration, made once each.
	durationSets durationSets
	// spanNames are the names of the SERVER spans, made once each.
	spanNames spanNames
	// startOptions are the start options of the child spans, made once each.
	startOptions startOptions
	meter        metric.Meter
	in           instruments
}

// ProtocolError is an OTEL_EXPORTER_OTLP_*PROTOCOL other than
// http/protobuf.
type ProtocolError = otelsetup.ProtocolError

// New starts telemetry when mode is [ModeOpenTelemetry] (any case) and
// OTEL_SDK_DISABLED is not "true"; otherwise it returns nil, telemetry off.
// service is the default service.name (OTEL_SERVICE_NAME and
// OTEL_RESOURCE_ATTRIBUTES win). Endpoints, headers, timeouts, the sampler
// and the export intervals are the SDK's reading of the OTEL_* variables.
func New(ctx context.Context, mode, service string, log *slog.Logger) (*Telemetry, error) {
	if !strings.EqualFold(mode, ModeOpenTelemetry) || otelsetup.Disabled() {
		return nil, nil
	}
	p, err := otelsetup.Start(ctx, service)
	if err != nil {
		return nil, err
	}
	if log != nil {
		otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
			log.Warn("telemetry: exporting", slog.String("error", err.Error()))
		}))
	}
	t, err := newTelemetry(p.Traces, p.Metrics)
	if err != nil {
		_ = t.Shutdown(ctx)
		return nil, err
	}
	return t, nil
}

// NewWithProviders returns telemetry that records to tp and mp, which its
// Shutdown stops: what tests of the composition use to read the spans and
// the metrics in memory.
func NewWithProviders(tp *sdktrace.TracerProvider, mp *sdkmetric.MeterProvider) (*Telemetry, error) {
	t, err := newTelemetry(tp, mp)
	if err != nil {
		_ = t.Shutdown(context.Background())
		return nil, err
	}
	return t, nil
}

// newTelemetry makes the tracer, the instruments and the propagator of
// the providers; t is usable for Shutdown even with an error.
func newTelemetry(tp *sdktrace.TracerProvider, mp *sdkmetric.MeterProvider) (t *Telemetry, err error) {
	t = &Telemetry{tp: tp, mp: mp, tracer: tp.Tracer(InstrumentationName), prop: otelsetup.Propagator()}
	if t.duration, err = mcpconv.NewServerOperationDuration(mp.Meter(InstrumentationName),
		metric.WithExplicitBucketBoundaries(DurationBuckets...)); err != nil {
		return t, fmt.Errorf("making mcp.server.operation.duration: %w", err)
	}
	if err = t.makeInstruments(mp.Meter(InstrumentationName)); err != nil {
		return t, err
	}
	return t, nil
}

// Shutdown flushes what is buffered and stops the exporters.
func (t *Telemetry) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	return errors.Join(t.tp.Shutdown(ctx), t.mp.Shutdown(ctx))
}
