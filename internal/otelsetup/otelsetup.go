// Package otelsetup starts the OpenTelemetry SDK from the standard OTEL_*
// environment variables, the same way in funchost and in the worker: OTLP
// over HTTP/protobuf for traces and metrics, a resource that names the
// process, W3C trace context and baggage.
package otelsetup

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
)

// ProtocolError is an OTEL_EXPORTER_OTLP_*PROTOCOL other than
// http/protobuf, the one protocol funcmcp exports with.
type ProtocolError struct{ Variable, Value string }

func (e *ProtocolError) Error() string {
	return fmt.Sprintf("%s=%q: funcmcp exports OTLP over http/protobuf only", e.Variable, e.Value)
}

// Disabled reports whether OTEL_SDK_DISABLED is "true".
func Disabled() bool { return strings.EqualFold(os.Getenv("OTEL_SDK_DISABLED"), "true") }

// Propagator is W3C trace context and baggage.
func Propagator() propagation.TextMapPropagator {
	return propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
}

// Providers are the SDK's tracer and meter providers.
type Providers struct {
	Traces  *sdktrace.TracerProvider
	Metrics *sdkmetric.MeterProvider
}

// Shutdown flushes what is buffered and stops the exporters.
func (p *Providers) Shutdown(ctx context.Context) error {
	return errors.Join(p.Traces.Shutdown(ctx), p.Metrics.Shutdown(ctx))
}

// Start makes the providers: OTLP/HTTP exporters configured by the SDK's
// own reading of OTEL_EXPORTER_OTLP_* (endpoint, headers, timeout,
// compression), the sampler of OTEL_TRACES_SAMPLER, a [Batcher] with the
// batch settings of OTEL_BSP_*, the export interval of OTEL_METRIC_EXPORT_INTERVAL;
// OTEL_TRACES_EXPORTER / OTEL_METRICS_EXPORTER "none" turn a signal's
// export off. service is the default service.name.
func Start(ctx context.Context, service string) (*Providers, error) {
	for _, v := range []string{"OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL"} {
		if p := os.Getenv(v); p != "" && p != "http/protobuf" {
			return nil, &ProtocolError{Variable: v, Value: p}
		}
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
		topts = append(topts, sdktrace.WithSpanProcessor(NewBatcher(exp, BatchOptionsFromEnv())))
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
	return &Providers{Traces: tp, Metrics: sdkmetric.NewMeterProvider(mopts...)}, nil
}

// exporterNone reports whether the variable turns that signal's export off.
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

// HeaderCarrier is propagation.HeaderCarrier that reads the W3C headers
// (traceparent, tracestate, baggage) under their canonical names directly:
// http.Header.Get canonicalises the propagator's lower-case names into a
// new string on every call.
type HeaderCarrier http.Header

// Get returns the first value of key.
func (c HeaderCarrier) Get(key string) string {
	var v []string
	switch key {
	case "traceparent":
		v = c["Traceparent"]
	case "tracestate":
		v = c["Tracestate"]
	case "baggage":
		v = c["Baggage"]
	default:
		return http.Header(c).Get(key)
	}
	if len(v) == 0 {
		return ""
	}
	return v[0]
}

// Set sets key to value.
func (c HeaderCarrier) Set(key, value string) { http.Header(c).Set(key, value) }

// Keys lists the header names.
func (c HeaderCarrier) Keys() []string { return propagation.HeaderCarrier(c).Keys() }

// TraceContext is W3C trace context held as values (an MCP request's
// params._meta, a traceparent kept with a task, the client's headers an
// invocation carries), read by the propagator as it reads headers.
type TraceContext struct{ Traceparent, Tracestate, Baggage string }

// Get returns the value of key ("traceparent", "tracestate", "baggage").
func (c *TraceContext) Get(key string) string {
	switch key {
	case "traceparent":
		return c.Traceparent
	case "tracestate":
		return c.Tracestate
	case "baggage":
		return c.Baggage
	}
	return ""
}

// Set does nothing: a TraceContext is read, not written.
func (*TraceContext) Set(string, string) {}

// Keys lists the keys that have a value.
func (c *TraceContext) Keys() []string {
	var keys []string
	for _, k := range [...]string{"traceparent", "tracestate", "baggage"} {
		if c.Get(k) != "" {
			keys = append(keys, k)
		}
	}
	return keys
}

// attrPool holds the slices SetAttributes gathers attributes in.
var attrPool = sync.Pool{New: func() any {
	a := make([]attribute.KeyValue, 0, 16)
	return &a
}}

// SetAttributes sets on span the attributes add appends to the slice it
// is given: they are gathered in a reused slice and copied into the span
// once.
func SetAttributes(span trace.Span, add func([]attribute.KeyValue) []attribute.KeyValue) {
	p := attrPool.Get().(*[]attribute.KeyValue)
	a := add((*p)[:0])
	span.SetAttributes(a...)
	clear(a)
	*p = a[:0]
	attrPool.Put(p)
}
