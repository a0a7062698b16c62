package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"sync"

	"github.com/funcmcp/funcmcp/metadata"
)

// methodCancelled is the notification by which a client gives up a request.
const methodCancelled = "notifications/cancelled"

// ErrCancelled is the cause of a tool call's context when the client sent
// notifications/cancelled for it.
var ErrCancelled = errors.New("the client cancelled the call (notifications/cancelled)")

// inflight maps the calls running now to their cancel functions, by session
// and request id. The zero value is ready to use.
type inflight struct {
	mu sync.Mutex
	m  map[string]context.CancelCauseFunc
}

// callKey names a call: a client can cancel only its own requests (the same
// Mcp-Session-Id, or none for both).
func callKey(session string, id json.RawMessage) string {
	var b bytes.Buffer
	b.WriteString(session)
	b.WriteByte(0)
	if json.Compact(&b, id) != nil {
		b.Write(bytes.TrimSpace(id))
	}
	return b.String()
}

func (f *inflight) add(key string, cancel context.CancelCauseFunc) (remove func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.m == nil {
		f.m = make(map[string]context.CancelCauseFunc)
	}
	if _, dup := f.m[key]; dup {
		return func() {} // a second call with the same id is not cancellable
	}
	f.m[key] = cancel
	return func() {
		f.mu.Lock()
		delete(f.m, key)
		f.mu.Unlock()
	}
}

func (f *inflight) cancel(key string) bool {
	f.mu.Lock()
	cancel, ok := f.m[key]
	f.mu.Unlock()
	if ok {
		cancel(ErrCancelled)
	}
	return ok
}

// sessionOf returns the Mcp-Session-Id header of req, "" when none.
func sessionOf(req *request) string {
	if vals := req.r.Header[headerSessionID]; len(vals) > 0 {
		return vals[0]
	}
	return ""
}

// callCancellable runs a tools/call whose context ends when the client
// sends notifications/cancelled for its id.
func (h *handler) callCancellable(req *request, call *CallRequest) (*metadata.CallToolResult, error) {
	ctx, cancel := context.WithCancelCause(req.r.Context())
	defer cancel(nil)
	defer h.calls.add(callKey(sessionOf(req), req.id), cancel)()
	return h.callTool(ctx, call)
}

// cancelled handles notifications/cancelled: the named call of the same
// session, if it still runs, is cancelled. Unknown ids are ignored, as the
// specification asks.
func (h *handler) cancelled(req *request, params json.RawMessage) {
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if json.Unmarshal(params, &p) != nil || validID(p.RequestID) == nil {
		return
	}
	h.calls.cancel(callKey(sessionOf(req), p.RequestID))
}
