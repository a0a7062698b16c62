package telemetry

import (
	"log/slog"

	"github.com/funcmcp/funcmcp/internal/otelsetup"
)

// Log attribute keys of the trace context, as the OpenTelemetry log data
// model names a record's trace and span.
const (
	LogTraceID = otelsetup.LogTraceID
	LogSpanID  = otelsetup.LogSpanID
)

// Logger returns l whose records carry trace_id and span_id when the
// context they are logged with has a span (a request's, an invocation's);
// l itself when t is nil (telemetry off).
func (t *Telemetry) Logger(l *slog.Logger) *slog.Logger {
	if t == nil || l == nil {
		return l
	}
	if h := otelsetup.TraceHandler(l.Handler()); h != l.Handler() {
		return slog.New(h)
	}
	return l
}
