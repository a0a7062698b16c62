package telemetry

import (
	"context"
	"log/slog"

	"go.opentelemetry.io/otel/trace"
)

// Log attribute keys of the trace context, as the OpenTelemetry log data
// model names a record's trace and span.
const (
	LogTraceID = "trace_id"
	LogSpanID  = "span_id"
)

// Logger returns l whose records carry trace_id and span_id when the
// context they are logged with has a span (a request's, an invocation's);
// l itself when t is nil (telemetry off).
func (t *Telemetry) Logger(l *slog.Logger) *slog.Logger {
	if t == nil || l == nil {
		return l
	}
	if _, ok := l.Handler().(traceHandler); ok {
		return l
	}
	return slog.New(traceHandler{l.Handler()})
}

// traceHandler adds the trace context of a record's context to it.
type traceHandler struct{ slog.Handler }

func (h traceHandler) Handle(ctx context.Context, r slog.Record) error {
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		r.AddAttrs(slog.String(LogTraceID, sc.TraceID().String()), slog.String(LogSpanID, sc.SpanID().String()))
	}
	return h.Handler.Handle(ctx, r)
}

func (h traceHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return traceHandler{h.Handler.WithAttrs(attrs)}
}

func (h traceHandler) WithGroup(name string) slog.Handler {
	return traceHandler{h.Handler.WithGroup(name)}
}
