package mcp

import (
	"log/slog"
	"time"
)

// requestLog is the first link of the middleware chain: at debug level it
// writes one line per exchange with its method, revision, name (tool,
// prompt or resource URI), duration and outcome. When the logger is not
// enabled at debug level it only calls next, so that the request path
// costs nothing more otherwise.
func (h *handler) requestLog(next MethodHandler) MethodHandler {
	return func(x *Exchange) {
		ctx := x.r.Context()
		if !h.log.Enabled(ctx, slog.LevelDebug) {
			next(x)
			return
		}
		start := time.Now()
		next(x)
		// The request's context now: a link (telemetry) may have given it
		// a span, whose ids the line then carries.
		what := x.Method()
		if x.stream != "" {
			what = "GET " + string(x.stream) + " stream"
		}
		h.log.LogAttrs(x.r.Context(), slog.LevelDebug, "mcp "+what,
			slog.String("method", x.Method()), slog.String("revision", x.ProtocolVersion()), slog.String("name", x.Name()),
			slog.Duration("duration", time.Since(start).Round(time.Microsecond)), slog.String("outcome", x.Outcome()))
	}
}
