package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/funcmcp/funcmcp/host/internal/ids"
	"github.com/funcmcp/funcmcp/host/internal/mcp/clientreq"
	"github.com/funcmcp/funcmcp/host/internal/peer"
	"github.com/funcmcp/funcmcp/internal/jsonx"
	"github.com/funcmcp/funcmcp/metadata"
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

// requestCapabilities are the client capabilities a call may use.
var requestCapabilities = [...]string{"elicitation", "sampling", "roots"}

// hasCapability reports whether a capabilities object declares name (any
// value but null).
func hasCapability(caps []byte, name string) bool {
	v := member(caps, name)
	return v != nil && v[0] != 'n'
}

// inputRequest is one request of an input-required result.
type inputRequest struct {
	key, method string
	params      json.RawMessage
}

// RequestMode returns how this call's requests reach the client:
// metadata.InputModeStream, metadata.InputModeInputRequired, or "" when the
// client cannot be asked anything.
func (n *Notifier) RequestMode() string {
	if n == nil {
		return ""
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.mode
}

// ClientCapabilities returns the capabilities object the client declared
// (nil when the call cannot ask it anything).
func (n *Notifier) ClientCapabilities() json.RawMessage {
	if n.RequestMode() == "" {
		return nil
	}
	return n.caps
}

// InputResponses returns the answers the client brought back, as one JSON
// object keyed like the requests (input-required mode), nil when none.
func (n *Notifier) InputResponses() json.RawMessage {
	if n == nil || n.answers == nil {
		return nil
	}
	return n.answers.encoded
}

// Request asks the client: method is elicitation/create,
// sampling/createMessage or roots/list, params its params object, key the
// request's name within the call (the key of its input-required entry).
//
// In stream mode it sends the request and waits for the client's answer or
// the end of ctx; the reply holds the client's result or JSON-RPC error.
// In input-required mode it answers from the client's answers when they
// hold key, and otherwise records the request for the call's
// input-required result and replies InputRequired.
//
// A request for a capability the client did not declare is answered with
// a -32021 error reply, without asking.
func (n *Notifier) Request(ctx context.Context, key, method string, params json.RawMessage) (*metadata.RequestReply, error) {
	mode := n.RequestMode()
	if mode == "" {
		return nil, ErrNoClientRequests
	}
	capName := metadata.CapabilityOf(method)
	if capName == "" {
		return nil, fmt.Errorf("%w: %q is not a request a call may send", ErrBadClientRequest, jsonx.SafeText(method))
	}
	if !hasCapability(n.caps, capName) {
		return &metadata.RequestReply{Error: &metadata.RequestError{
			Code:    CodeMissingRequiredClientCapability,
			Message: fmt.Sprintf("The client did not declare the '%s' capability.", capName),
			Data:    json.RawMessage(`{"requiredCapabilities":{"` + capName + `":{}}}`),
		}}, nil
	}
	params = bytes.TrimSpace(params)
	if len(params) == 0 || string(params) == "null" {
		params = json.RawMessage("{}")
	}
	if params[0] != '{' || !json.Valid(params) {
		return nil, fmt.Errorf("%w: the params of %s must be a JSON object", ErrBadClientRequest, method)
	}
	if bytes.ContainsAny(params, "\r\n") {
		var b bytes.Buffer
		_ = json.Compact(&b, params) // valid: checked above
		params = b.Bytes()
	}
	switch {
	case mode == metadata.InputModeInputRequired:
		return n.inputRequired(key, method, params)
	case n.task.On():
		return n.task.Request(ctx, key, method, params)
	}
	return n.ask(ctx, method, params)
}

// inputRequired answers a request of a 2026-07-28 call from the client's
// answers, or keeps it for the input-required result.
func (n *Notifier) inputRequired(key, method string, params json.RawMessage) (*metadata.RequestReply, error) {
	if key == "" {
		return nil, fmt.Errorf("%w: a request needs a key", ErrBadClientRequest)
	}
	if a, ok := n.answers.get(key); ok {
		return &metadata.RequestReply{Result: a}, nil
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.ended {
		return nil, ErrCallEnded
	}
	r := inputRequest{key: key, method: method, params: bytes.Clone(params)}
	for i := range n.pending {
		if n.pending[i].key == key {
			n.pending[i] = r
			return &metadata.RequestReply{InputRequired: true}, nil
		}
	}
	n.pending = append(n.pending, r)
	return &metadata.RequestReply{InputRequired: true}, nil
}

// InputPending reports whether the call recorded requests for an
// input-required result.
func (n *Notifier) InputPending() bool {
	if n == nil {
		return false
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	return len(n.pending) > 0
}

// takePending returns the requests of the input-required result; call it
// after end.
func (n *Notifier) takePending() []inputRequest {
	if n == nil {
		return nil
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	p := n.pending
	n.pending = nil
	return p
}

// ask sends a request on the call's stream and waits for the answer.
func (n *Notifier) ask(ctx context.Context, method string, params json.RawMessage) (*metadata.RequestReply, error) {
	deadline, _ := ctx.Deadline()
	id := n.h.newRequestID(n.scope, deadline)
	key := clientreq.WaitKey(n.scope, id)
	answer := n.h.waits.Add(key)
	defer n.h.waits.Remove(key)

	n.mu.Lock()
	if n.ended {
		n.mu.Unlock()
		return nil, ErrCallEnded
	}
	n.buf.Reset()
	n.buf.WriteString(`{"jsonrpc":"2.0","id":`)
	appendString(&n.buf, id)
	n.buf.WriteString(`,"method":`)
	appendString(&n.buf, method)
	n.buf.WriteString(`,"params":`)
	n.buf.Write(params)
	n.buf.WriteByte('}')
	err := n.emit(n.buf.Bytes())
	n.mu.Unlock()
	if err != nil {
		return nil, err
	}
	select {
	case a := <-answer:
		if a.Err == nil {
			if len(a.Result) == 0 || a.Result[0] == 'n' {
				a.Result = json.RawMessage("{}")
			}
			return &metadata.RequestReply{Result: a.Result}, nil
		}
		var e metadata.RequestError
		if json.Unmarshal(a.Err, &e) != nil {
			e = metadata.RequestError{Code: CodeInternalError, Message: "The client answered with a malformed error."}
		}
		return &metadata.RequestReply{Error: &e}, nil
	case <-ctx.Done():
		n.cancelRequest(id, context.Cause(ctx))
		return nil, context.Cause(ctx)
	}
}

// cancelRequest tells the client that a request it was sent is no longer
// wanted (notifications/cancelled), while the call's stream is open.
func (n *Notifier) cancelRequest(id string, cause error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.ended {
		return
	}
	b := n.begin(methodCancelled)
	b.WriteString(`{"requestId":`)
	appendString(b, id)
	if cause != nil {
		b.WriteString(`,"reason":`)
		appendString(b, jsonx.SafeText(cause.Error()))
	}
	_ = n.send()
}

// requestIDSeparator ends the instance part of a request id.
const requestIDSeparator = clientreq.RequestIDSeparator

// newRequestID returns the id of a request to the client of scope: made by
// Options.RequestID, else this instance's id and 20 random characters.
func (h *handler) newRequestID(scope string, deadline time.Time) string {
	if h.requestID != nil {
		return h.requestID(scope, deadline)
	}
	return h.instanceID + requestIDSeparator + ids.Random(ids.LowerAlnum, 20)
}

// response takes a client's response to a request: it goes to the call
// waiting for it here, or to the instance named in its id. The client is
// answered 202 either way, as for any response: nothing is sent back.
func (h *handler) response(req *request, msg *message, body []byte) {
	id, ok := stringValue(msg.id)
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
	a := clientreq.Answer{Result: bytes.Clone(msg.result), Err: bytes.Clone(msg.errorBody)}
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
	if code, _ := decodeMessage(body, &msg); code != 0 || msg.method != "" || !(msg.hasResult || msg.hasError) {
		return false
	}
	id, ok := stringValue(msg.id)
	if !ok {
		return false
	}
	a := clientreq.Answer{Result: bytes.Clone(msg.result), Err: bytes.Clone(msg.errorBody)}
	return h.waits.Deliver(clientreq.WaitKey(scope, id), a)
}
