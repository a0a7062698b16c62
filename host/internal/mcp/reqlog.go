package mcp

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"time"
)

// requestLog records one JSON-RPC request for the debug log: method,
// revision, name (tool, prompt or resource URI), duration and outcome. It
// exists only while the logger is enabled at debug level, so that the
// request path costs nothing more otherwise.
type requestLog struct {
	http.ResponseWriter
	start   time.Time
	method  string
	name    string
	version string
	status  int
	outcome string // set by the handler: "error <code>", "isError"
}

func (l *requestLog) WriteHeader(status int) {
	if l.status == 0 {
		l.status = status
	}
	l.ResponseWriter.WriteHeader(status)
}

// Unwrap lets http.ResponseController reach the connection (flushes, deadlines).
func (l *requestLog) Unwrap() http.ResponseWriter { return l.ResponseWriter }

// startRequestLog wraps w when debug logging is on; nil otherwise.
func (h *handler) startRequestLog(ctx context.Context, w http.ResponseWriter, method string, params []byte) *requestLog {
	if !h.log.Enabled(ctx, slog.LevelDebug) {
		return nil
	}
	name := paramString(params, "name")
	if name == "" {
		name = paramString(params, "uri")
	}
	return &requestLog{ResponseWriter: w, start: time.Now(), method: method, name: name}
}

// setVersion and setOutcome note what the dispatch learnt; both accept a
// nil log.
func (l *requestLog) setVersion(v string) {
	if l != nil {
		l.version = v
	}
}

func (l *requestLog) setOutcome(o string) {
	if l != nil && l.outcome == "" {
		l.outcome = o
	}
}

// logRequest writes the request's debug line.
func (h *handler) logRequest(ctx context.Context, l *requestLog) {
	outcome := l.outcome
	switch {
	case outcome != "":
	case l.status >= 400:
		outcome = "refused " + strconv.Itoa(l.status)
	case l.status == http.StatusAccepted:
		outcome = "accepted"
	default:
		outcome = "ok"
	}
	h.log.LogAttrs(ctx, slog.LevelDebug, fmt.Sprintf("mcp %s", l.method),
		slog.String("method", l.method), slog.String("revision", l.version), slog.String("name", l.name),
		slog.Duration("duration", time.Since(l.start).Round(time.Microsecond)), slog.String("outcome", outcome))
}
