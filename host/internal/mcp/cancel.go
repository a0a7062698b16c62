package mcp

import (
	"context"

	"github.com/funcmcp/funcmcp/host/internal/mcp/clientreq"
	"github.com/funcmcp/funcmcp/metadata"
)

// ErrCancelled is the cause of a tool call's context when the client sent
// notifications/cancelled for it.
var ErrCancelled = clientreq.ErrCancelled

// callScope names the client of a request for cancellation: a client can
// cancel only calls of its own scope. A message of a legacy SSE stream has
// the stream's (its client id, sealed in the client state of the message
// URL); a legacy request with an Mcp-Session-Id has its session's (the id
// sealed in the token). Both are random and known only to the client they
// were given to. Any other request (a 2026-07-28 request, stateless by
// design, or a legacy one without a session) has no scope: ""; its call is
// cancelled by closing its request, and no notifications/cancelled reaches
// it.
func callScope(req *request, s *session) string {
	if req.origin != nil {
		return "sse:" + req.origin.ClientID
	}
	if s != nil && s.ID != "" {
		return "session:" + s.ID
	}
	return ""
}

// cancellable returns the context of a request that its client can cancel
// with notifications/cancelled for its id (only when it has a scope), and
// the function that ends it.
func (h *handler) cancellable(req *request) (context.Context, func()) {
	parent := req.r.Context()
	if req.ctx != nil {
		parent = req.ctx
	}
	ctx, cancel := context.WithCancelCause(parent)
	if req.scope == "" {
		return ctx, func() { cancel(nil) }
	}
	remove := h.calls.Add(clientreq.CallKey(req.scope, req.id), cancel)
	return ctx, func() {
		remove()
		cancel(nil)
	}
}

// callCancellable runs a tools/call in a cancellable context.
func (h *handler) callCancellable(req *request, call *CallRequest) (*metadata.CallToolResult, error) {
	ctx, done := h.cancellable(req)
	defer done()
	return h.callTool(ctx, call)
}

// cancelled handles notifications/cancelled: the named call of the same
// scope, if it still runs, is cancelled. Unknown ids, and cancellations
// without a scope, are ignored, as the specification asks of unknown ids.
func (h *handler) cancelled(params []byte, scope string) {
	if scope == "" {
		return
	}
	if id := validID(member(params, "requestId")); id != nil {
		h.calls.Cancel(clientreq.CallKey(scope, id))
	}
}
