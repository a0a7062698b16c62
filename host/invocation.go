package host

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/funcmcp/funcmcp/host/internal/guard"
	"github.com/funcmcp/funcmcp/host/internal/ids"
)

// invocation is one admitted invocation of a function (a tool call, a
// resource read, a prompt, a completion): its id and start, for the
// Functions host's log lines.
type invocation struct {
	h        *Host
	function string
	id       string
	start    time.Time
	attrs    []slog.Attr // said of the invocation in every line (e.g. the tool)
}

// admit takes a call slot (or fails with the busy error) and makes ctx
// end when the host drains; done releases both. Every invocation, whatever
// its kind, goes through here.
func (h *Host) admit(ctx context.Context, function string, attrs ...slog.Attr) (context.Context, *invocation, func(), error) {
	release, err := h.calls.Admit()
	if err != nil {
		return nil, nil, nil, err
	}
	ctx, stop := h.calls.Drainable(ctx)
	iv := &invocation{h: h, function: function, id: ids.GUID(), start: time.Now(), attrs: attrs}
	return ctx, iv, func() { stop(); release() }, nil
}

// executed logs the outcome as the Functions host does:
// "Executed 'Functions.<name>' (<outcome>)".
func (iv *invocation) executed(ctx context.Context, outcome string, extra ...slog.Attr) {
	attrs := make([]slog.Attr, 0, len(iv.attrs)+len(extra)+3)
	attrs = append(attrs, slog.String("function", iv.function))
	attrs = append(attrs, iv.attrs...)
	attrs = append(attrs, slog.String("invocationId", iv.id))
	attrs = append(attrs, extra...)
	attrs = append(attrs, slog.Duration("duration", time.Since(iv.start).Round(time.Microsecond)))
	iv.h.log.LogAttrs(ctx, slog.LevelInfo, fmt.Sprintf("Executed 'Functions.%s' (%s)", iv.function, outcome), attrs...)
}

// cancelled logs an invocation whose context ended (the client went away
// or cancelled, or the host is stopping: not a failure of the function)
// and returns the error of a stopping host, nil otherwise.
func (iv *invocation) cancelled(ctx context.Context) error {
	cause := context.Cause(ctx)
	iv.executed(ctx, "Cancelled", slog.String("reason", cause.Error()))
	if errors.Is(cause, guard.ErrShuttingDown) {
		return guard.ShuttingDown()
	}
	return nil
}

// workerLogs writes the invocation's log lines from the worker.
func (iv *invocation) workerLogs(ctx context.Context, lines []string) {
	for _, line := range lines {
		iv.h.log.LogAttrs(ctx, slog.LevelInfo, line, slog.String("function", iv.function), slog.String("invocationId", iv.id))
	}
}
