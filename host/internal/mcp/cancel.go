package mcp

import (
	"context"

	"github.com/funcmcp/funcmcp/host/internal/mcp/clientreq"
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

// callParent is the parent of the context of a request's call: the
// request's, or the one of a call that outlives its request.
func callParent(req *request) context.Context {
	if req.ctx != nil {
		return req.ctx
	}
	return req.r.Context()
}
