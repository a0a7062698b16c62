package mcp

import (
	"bytes"
	"net/http"
	"strings"

	"github.com/funcmcp/funcmcp/host/internal/mcp/clientreq"
	"github.com/funcmcp/funcmcp/host/internal/peer"
	"github.com/funcmcp/funcmcp/internal/jsonx"
)

// Requests to the client while a call runs: elicitation/create,
// sampling/createMessage and roots/list.
//
// On the legacy revisions (before 2026-07-28) a request travels like a
// notification, on the call's stream, with an id this handler chooses:
// "<instance>~<random>". The client answers with a JSON-RPC response in a
// POST of its own, which may land on any instance: the instance named in
// the id is where the call waits. The answer is matched by the client's
// scope (see callScope) and the id, so a client can only answer its own
// requests.
//
// On 2026-07-28 (SEP-2322) nothing is sent while the call runs: the call
// ends with an input-required result carrying the requests and a sealed
// request state; the client calls again with the answers (see input.go).

// Errors of [Notifier.Request], declared in package peer, where the call
// channel reads them too.
var (
	ErrNoClientRequests = peer.ErrNoClientRequests
	ErrBadClientRequest = peer.ErrBadClientRequest
)

// hasCapability reports whether a capabilities object declares name (any
// value but null).
func hasCapability(caps []byte, name string) bool {
	v := member(caps, name)
	return v != nil && v[0] != 'n'
}

// requestIDSeparator ends the instance part of a request id.
const requestIDSeparator = clientreq.RequestIDSeparator

// response takes a client's response to a request: it goes to the call
// waiting for it here, or to the instance named in its id. The client is
// answered 202 either way, as for any response: nothing is sent back.
func (h *handler) response(req *request, msg *message, body []byte) {
	id, ok := stringValue(msg.ID)
	instance, _, named := strings.Cut(id, requestIDSeparator)
	if !ok || !named {
		req.w.WriteHeader(http.StatusAccepted) // not a request of ours
		return
	}
	s, ok := h.session(req)
	if !ok {
		return // refused
	}
	scope := callScope(req, s)
	a := clientreq.Answer{Result: bytes.Clone(msg.Result), Err: bytes.Clone(msg.ErrorBody)}
	switch {
	case h.waits.Deliver(clientreq.WaitKey(scope, id), a):
	case instance != h.instanceID && h.forwardResponse != nil:
		if err := h.forwardResponse(req.r.Context(), instance, scope, bytes.Clone(body)); err != nil {
			h.log.Warn("mcp: forwarding a client's response to the instance waiting for it failed",
				"instance", jsonx.SafeText(instance), "error", err)
		}
	default:
		h.log.Debug("mcp: dropping a response nothing waits for", "id", jsonx.SafeText(id))
	}
	req.w.WriteHeader(http.StatusAccepted)
}

// DeliverResponse hands a client's JSON-RPC response, forwarded by another
// instance (see [Options.ForwardResponse]), to the call of scope waiting
// for it on this endpoint. It reports whether one was waiting.
func (e *Handler) DeliverResponse(scope string, body []byte) bool {
	h := e.h
	var msg message
	if code, _ := decodeMessage(body, &msg); code != 0 || msg.Method != "" || !(msg.HasResult || msg.HasError) {
		return false
	}
	id, ok := stringValue(msg.ID)
	if !ok {
		return false
	}
	a := clientreq.Answer{Result: bytes.Clone(msg.Result), Err: bytes.Clone(msg.ErrorBody)}
	return h.waits.Deliver(clientreq.WaitKey(scope, id), a)
}
