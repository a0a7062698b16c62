package host

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/funcmcp/funcmcp/host/internal/guard"
	"github.com/funcmcp/funcmcp/host/internal/ids"
	"github.com/funcmcp/funcmcp/host/internal/mcp"
	"github.com/funcmcp/funcmcp/host/internal/owner"
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
// end when the host drains; done releases both. Task work (task: it may
// outlive its request) also takes a running-task slot of its owner (the
// call request's, as the endpoint worked it out), within the global bound
// of task work, which keeps slots for synchronous calls. Every invocation,
// whatever its kind, goes through here.
func (h *Host) admit(ctx context.Context, function string, task bool, o owner.ID, attrs ...slog.Attr) (context.Context, *invocation, func(), error) {
	var release func()
	var err error
	if task {
		release, err = h.calls.AdmitTask(o)
	} else {
		release, err = h.calls.Admit()
	}
	if err != nil {
		if r, ok := errors.AsType[*guard.Refusal](err); ok {
			h.tel.Refused(ctx, r.Reason)
		}
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
	iv.h.logCall(ctx, slog.LevelInfo, "Executed 'Functions."+iv.function+"' ("+outcome+")", attrs...)
}

// logCall logs a line of an invocation as Logger.LogAttrs does, without
// the caller's program counter: slog walks the stack for it on every
// record (runtime.Callers, a fifth of the cost of a line), and a handler
// that prints sources would print this file's line, which says nothing of
// the call. These lines are written for every call.
func (h *Host) logCall(ctx context.Context, level slog.Level, msg string, attrs ...slog.Attr) {
	handler := h.log.Handler()
	if !handler.Enabled(ctx, level) {
		return
	}
	r := slog.NewRecord(time.Now(), level, msg, 0)
	r.AddAttrs(attrs...)
	_ = handler.Handle(ctx, r)
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

// traceLogs makes the log messages the worker sends the client during
// the call carry the call's trace context (telemetry on).
func (h *Host) traceLogs(ctx context.Context, n *mcp.Notifier) {
	if h.tel == nil || n == nil {
		return
	}
	if tp := h.tel.Traceparent(ctx); tp != "" {
		n.SetTraceparent(tp)
	}
}

// workerLogs writes the invocation's log lines from the worker.
func (iv *invocation) workerLogs(ctx context.Context, lines []string) {
	for _, line := range lines {
		iv.h.logCall(ctx, slog.LevelInfo, line, slog.String("function", iv.function), slog.String("invocationId", iv.id))
	}
}
