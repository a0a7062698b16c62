package otel

import (
	"fmt"
	"io"
	"log"
	"log/slog"
	"os"

	"github.com/funcmcp/funcmcp/internal/otelsetup"
)

// withTrace wraps h so that its records carry the trace context, once.
func withTrace(h slog.Handler) slog.Handler { return otelsetup.TraceHandler(h) }

// logOutput is where the default logger writes when the app kept slog's
// own (the worker's stderr, which funchost copies to its console).
var logOutput io.Writer = os.Stderr

// isSlogBuiltin reports whether h is slog's built-in default handler,
// which writes through the log package: wrapped, it would deadlock with
// the log package writing into the new default.
func isSlogBuiltin(h slog.Handler) bool { return fmt.Sprintf("%T", h) == "*slog.defaultHandler" }

// traceDefault makes slog's default logger stamp each record logged with
// a context (slog.InfoContext(ctx, …)) with its trace context, so that the
// lines a tool logs with it are correlated as funchost's are; it returns
// the func that puts the previous default back. The built-in default
// (which writes through the log package) is replaced by a text handler on
// the worker's stderr; an app's own default is wrapped.
func traceDefault() (restore func()) {
	prev, out, flags := slog.Default(), log.Writer(), log.Flags()
	h := prev.Handler()
	if isSlogBuiltin(h) {
		h = slog.NewTextHandler(logOutput, nil)
	}
	slog.SetDefault(slog.New(withTrace(h)))
	return func() {
		slog.SetDefault(prev)
		log.SetOutput(out) // SetDefault sent the log package's output to the new default
		log.SetFlags(flags)
	}
}
