// Package otel is the OpenTelemetry of a worker app, opt-in: an app that
// sets it as its [worker.Options].Telemetry exports traces and metrics; an
// app that does not links none of the OpenTelemetry SDK.
//
//	import workerotel "github.com/funcmcp/funcmcp/worker/otel"
//
//	app := worker.New(&worker.Options{Telemetry: workerotel.New()})
//
// When the process's environment names an OTLP endpoint
// (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
// funchost passes its environment and local.settings.json Values on, the
// Functions host its app settings) and OTEL_SDK_DISABLED is not "true"
// (funchost sets it to "true" when host.json has no telemetryMode
// OpenTelemetry, so that host.json turns both processes on or off),
// the served app:
//
//   - continues the trace the invocation carries: the W3C traceparent
//     funchost sends on the POST, else (the Functions host sends none) the
//     MCP client's own traceparent among the request headers of the
//     invocation's transport properties;
//   - runs every handler inside a hook that opens a span around it
//     ("execute_tool {tool}", "{kind} {name}" for the other runs), whose
//     context is the handler's, so the spans a tool makes with the global
//     tracer provider (otel.Tracer) nest under it;
//   - stamps the worker's log lines with the trace context they are logged
//     in (trace_id, span_id, as funchost's lines): the app's logger
//     ([worker.Options].Logger) and slog's default logger, so that what a
//     tool logs with slog.InfoContext(ctx, …) is correlated with its span
//     (slog's built-in default becomes a text logger on stderr; an app's
//     own default is wrapped; the previous default is back after serving);
//   - sets the global tracer and meter providers and the W3C propagator, and
//     exports with the same OTEL_* settings as funchost (OTLP over
//     HTTP/protobuf), its resource naming this process (process.pid,
//     process.executable.name).
//
// Otherwise nothing of it runs: no hook, no wrapper, no allocation.
package otel

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	gotel "go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/funcmcp/funcmcp/internal/otelsetup"
	"github.com/funcmcp/funcmcp/worker"
)

// instrumentation names the worker's tracer.
const instrumentation = "github.com/funcmcp/funcmcp/worker"

// New returns the OpenTelemetry telemetry of a worker app, for
// [worker.Options].Telemetry.
func New() worker.Telemetry { return telemetry{} }

type telemetry struct{}

// wanted reports whether the environment asks for export.
func wanted() bool {
	if otelsetup.Disabled() {
		return false
	}
	return os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// Start starts the SDK when the environment asks for it.
func (telemetry) Start(ctx context.Context) (*worker.Instrumentation, error) {
	if !wanted() {
		return nil, nil
	}
	p, err := otelsetup.Start(ctx, filepath.Base(os.Args[0]))
	if err != nil {
		return nil, fmt.Errorf("starting telemetry: %w", err)
	}
	gotel.SetTracerProvider(p.Traces)
	gotel.SetMeterProvider(p.Metrics)
	prop := otelsetup.Propagator()
	gotel.SetTextMapPropagator(prop)
	in := (&spans{tracer: p.Traces.Tracer(instrumentation), prop: prop}).instrumentation()
	restoreLog := traceDefault()
	in.Stop = func() {
		defer restoreLog()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := p.Shutdown(ctx); err != nil {
			fmt.Fprintf(os.Stderr, "telemetry: flushing at exit: %v\n", err)
		}
	}
	return in, nil
}

// spans makes the worker's spans.
type spans struct {
	tracer trace.Tracer
	prop   propagation.TextMapPropagator
	starts sync.Map // startKey → started
	nStart atomic.Int32
}

// maxStarts bounds the span names and options kept for reuse; past it
// they are made for each run. Their keys are the app's own names (its
// tools, prompts, completion arguments and functions): a resource read,
// named by the URI the client sent, is never kept.
const maxStarts = 1024

// startKey is what the name and the fixed attributes of a run's span are
// made of.
type startKey struct {
	kind           worker.InvocationKind
	name, function string
}

// started is the name, start options and fixed attributes of a startKey's
// spans.
type started struct {
	name  string
	opts  []trace.SpanStartOption
	attrs []attribute.KeyValue
}

// startOf returns the name and start options of inv's span, made once
// for each tool, prompt, completion argument or client request: the span's
// name, kind and attributes other than the invocation id. A resource
// read's are made for each read: its name is the URI the client sent
// (cut to otelsetup.MaxValueBytes), which the app did not choose.
func (s *spans) startOf(inv *worker.Invocation) started {
	name := otelsetup.Bound(inv.Name, otelsetup.MaxValueBytes)
	k := startKey{kind: inv.Kind, name: name, function: inv.Function}
	if inv.Kind != worker.KindResource {
		if v, ok := s.starts.Load(k); ok {
			return v.(started)
		}
	}
	spanName := string(inv.Kind) + " " + name
	attrs := []attribute.KeyValue{semconv.FaaSInvokedName(inv.Function)}
	switch inv.Kind {
	case worker.KindTool, worker.KindTask:
		spanName = "execute_tool " + name
		attrs = append(attrs, semconv.GenAIOperationNameExecuteTool, semconv.GenAIToolName(name))
	case worker.KindPrompt:
		attrs = append(attrs, semconv.GenAIPromptName(name))
	case worker.KindResource:
		attrs = append(attrs, semconv.McpResourceURIKey.String(name))
	}
	kind := trace.SpanKindServer
	if inv.Kind == worker.KindClientRequest {
		kind = trace.SpanKindClient
	}
	st := started{name: spanName, opts: []trace.SpanStartOption{trace.WithSpanKind(kind)}, attrs: attrs}
	if inv.Kind != worker.KindResource && s.nStart.Load() < maxStarts {
		if _, loaded := s.starts.LoadOrStore(k, st); !loaded {
			s.nStart.Add(1)
		}
	}
	return st
}

func (s *spans) instrumentation() *worker.Instrumentation {
	return &worker.Instrumentation{Hook: s.hook, Handler: s.extract, Logger: withTrace}
}

// extract wraps the worker's handler: the request's context carries the
// trace context of its headers (funchost's invocation span).
func (s *spans) extract(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(s.prop.Extract(r.Context(), otelsetup.HeaderCarrier(r.Header))))
	})
}

// hook is the span around each handler run.
func (s *spans) hook(ctx context.Context, inv *worker.Invocation, next func(ctx context.Context) error) error {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		if tp, ok := inv.ClientHeader("traceparent"); ok {
			ts, _ := inv.ClientHeader("tracestate")
			ctx = s.prop.Extract(ctx, &otelsetup.TraceContext{Traceparent: tp, Tracestate: ts})
		}
	}
	st := s.startOf(inv)
	ctx, span := s.tracer.Start(ctx, st.name, st.opts...)
	// The attributes are copied into the span once, after its start (no
	// sampler of OTEL_TRACES_SAMPLER reads them): as start options they
	// would be copied into the start config first.
	if inv.InvocationID == "" {
		span.SetAttributes(st.attrs...)
	} else {
		otelsetup.SetAttributes(span, func(a []attribute.KeyValue) []attribute.KeyValue {
			return append(append(a, st.attrs...), semconv.FaaSInvocationID(otelsetup.Bound(inv.InvocationID, otelsetup.MaxIDBytes)))
		})
	}
	defer span.End()
	err := next(ctx)
	if err != nil && !errors.Is(err, worker.ErrInputRequired) {
		// Its text may repeat what the client sent: cut.
		otelsetup.RecordError(span, err)
		errorType := "handler_error"
		if inv.Kind == worker.KindTool || inv.Kind == worker.KindTask {
			errorType = "tool_error"
		}
		span.SetAttributes(semconv.ErrorTypeKey.String(errorType))
	}
	return err
}
