package worker

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/funcmcp/funcmcp/internal/otelsetup"
)

// The worker's OpenTelemetry. When the process's environment names an OTLP
// endpoint (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
// funchost passes its environment on, the Functions host its app
// settings) and OTEL_SDK_DISABLED is not "true", the served app:
//
//   - continues the trace the invocation carries: the W3C traceparent
//     funchost sends on the POST, else (the Functions host sends none) the
//     MCP client's own traceparent among the request headers of the
//     invocation's transport properties;
//   - runs every handler inside a hook that opens a span around it
//     ("execute_tool {tool}", "{kind} {name}" for the other runs), whose
//     context is the handler's, so the spans a tool makes with the global
//     tracer provider (otel.Tracer) nest under it;
//   - sets the global tracer and meter providers and the W3C propagator, and
//     exports with the same OTEL_* settings as funchost, its resource naming
//     this process (process.pid, process.executable.name).
//
// Otherwise nothing of it runs: no hook, no wrapper, no allocation.

// workerInstrumentation names the worker's tracer.
const workerInstrumentation = "github.com/funcmcp/funcmcp/worker"

type workerTelemetry struct {
	tracer trace.Tracer
	prop   propagation.TextMapPropagator
}

// telemetryWanted reports whether the environment asks for export.
func telemetryWanted() bool {
	if otelsetup.Disabled() {
		return false
	}
	return os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// startTelemetry turns telemetry on when the environment asks for it and
// returns the func that flushes it at exit.
func (a *App) startTelemetry(ctx context.Context) (func(), error) {
	if !telemetryWanted() {
		return func() {}, nil
	}
	p, err := otelsetup.Start(ctx, filepath.Base(os.Args[0]))
	if err != nil {
		return nil, fmt.Errorf("starting telemetry: %w", err)
	}
	otel.SetTracerProvider(p.Traces)
	otel.SetMeterProvider(p.Metrics)
	prop := otelsetup.Propagator()
	otel.SetTextMapPropagator(prop)
	a.tel = &workerTelemetry{tracer: p.Traces.Tracer(workerInstrumentation), prop: prop}
	a.hooks = append([]Hook{a.tel.hook}, a.hooks...)
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := p.Shutdown(ctx); err != nil {
			a.logger.Warn("telemetry: flushing at exit", "error", err)
		}
	}, nil
}

// extract wraps the worker's handler: the request's context carries the
// trace context of its headers (funchost's invocation span).
func (t *workerTelemetry) extract(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(t.prop.Extract(r.Context(), propagation.HeaderCarrier(r.Header))))
	})
}

// hook is the span around each handler run.
func (t *workerTelemetry) hook(ctx context.Context, inv *Invocation, next func(ctx context.Context) error) error {
	if !trace.SpanContextFromContext(ctx).IsValid() && inv.transport != nil {
		if tp, ok := inv.transport.Header("traceparent"); ok {
			carrier := propagation.MapCarrier{"traceparent": tp}
			if ts, ok := inv.transport.Header("tracestate"); ok {
				carrier["tracestate"] = ts
			}
			ctx = t.prop.Extract(ctx, carrier)
		}
	}
	name := string(inv.Kind) + " " + inv.Name
	attrs := []attribute.KeyValue{semconv.FaaSInvokedName(inv.Function)}
	if inv.InvocationID != "" {
		attrs = append(attrs, semconv.FaaSInvocationID(inv.InvocationID))
	}
	switch inv.Kind {
	case KindTool, KindTask:
		name = "execute_tool " + inv.Name
		attrs = append(attrs, semconv.GenAIOperationNameExecuteTool, semconv.GenAIToolName(inv.Name))
	case KindPrompt:
		attrs = append(attrs, semconv.GenAIPromptName(inv.Name))
	case KindResource:
		attrs = append(attrs, semconv.McpResourceURIKey.String(inv.Name))
	}
	kind := trace.SpanKindServer
	if inv.Kind == KindClientRequest {
		kind = trace.SpanKindClient
	}
	ctx, span := t.tracer.Start(ctx, name, trace.WithSpanKind(kind), trace.WithAttributes(attrs...))
	defer span.End()
	err := next(ctx)
	if err != nil && !errors.Is(err, ErrInputRequired) {
		span.RecordError(err)
		errorType := "handler_error"
		if inv.Kind == KindTool || inv.Kind == KindTask {
			errorType = "tool_error"
		}
		span.SetAttributes(semconv.ErrorTypeKey.String(errorType))
		span.SetStatus(codes.Error, err.Error())
	}
	return err
}
