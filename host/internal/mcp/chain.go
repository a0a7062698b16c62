package mcp

import (
	"context"
	"net/http"
	"strconv"

	"github.com/funcmcp/funcmcp/host/internal/caller"
	"github.com/funcmcp/funcmcp/host/internal/mcp/wire"
	"github.com/funcmcp/funcmcp/host/internal/owner"
	"github.com/funcmcp/funcmcp/metadata"
)

// The middleware chain. Every JSON-RPC request and notification the
// endpoint decodes — posted alone, in a batch, over the legacy SSE
// transport, at a legacy revision or at 2026-07-28, a call that becomes a
// task, the retry of an input-required call — is one [Exchange] passed
// through the chain: the request log around the links of
// [Options.Middleware] around the dispatcher, which reads the revision and
// the session, checks the headers and runs the handler of the method's
// entry (found in the method table when the message was decoded). A link sees the exchange before the dispatcher (the
// method, the name, the HTTP request) and after it (the revision, the
// status, the outcome), and may answer it itself ([Exchange.Fail])
// instead of calling the next link.
//
// What else passes, so that a link sees every message and stream: a
// refusal decided before the chain (a body that is not a JSON-RPC message,
// an id that cannot be echoed, params that cannot be read, a
// subscriptions/listen request over its size, a batch refused whole, a
// method other than POST, an Accept without JSON, a body over its bound)
// is an exchange whose answer is already decided ([Exchange.Refused]
// reports it): the links run around it and the dispatcher writes it. A GET
// stream (clientreq.Store.ServeResume, listen.Server.ServeSession) is an
// exchange too ([Exchange.Stream] names it): the dispatcher serves the
// stream. A link may refuse any of them with an HTTP status and headers
// ([Exchange.Refuse]: 401/403 with WWW-Authenticate, 413, 429 with
// Retry-After, 503) or with a JSON-RPC error ([Exchange.Fail]).
//
// What does not pass: a client's response to a request of ours, which is
// routed by its id to the call that waits for it (see clientreq.go), and
// the legacy SSE transport's own GET stream (LegacySSE.ServeStream; the
// messages it carries pass).

// MethodHandler serves one exchange.
type MethodHandler func(x *Exchange)

// Middleware wraps the handler of every exchange: it returns the handler
// that runs before and after next (or instead of it).
type Middleware func(next MethodHandler) MethodHandler

// request is the name the dispatcher and the method handlers use.
type request = Exchange

// Exchange is one JSON-RPC request or notification on its way through the
// middleware chain to its method's handler, and its answer. Middleware
// reads it through its methods; it must not keep it past its call.
type Exchange struct {
	h   *handler
	w   http.ResponseWriter
	r   *http.Request
	sse bool
	id  []byte
	// scope names the client for cancellation (see callScope); "" when
	// no notifications/cancelled can reach its calls.
	scope string
	// ctx, when set, is the parent of the call's context instead of the
	// request's (a call that outlives its request).
	ctx context.Context

	msg     message      // the decoded message (its slices alias the body)
	method  *methodInfo  // the method's entry; nil when the table has none
	version string       // the revision, once the dispatcher read it
	session *session     // the legacy session token, nil when none
	meta    *RequestMeta // the envelope of a modern request, nil for a legacy one
	// origin is the legacy SSE stream the message came on, nil for a
	// Streamable HTTP request.
	origin *streamOrigin
	// batch marks an element of a JSON-RPC batch.
	batch bool
	// early is the answer decided before the chain, nil when the
	// dispatcher decides.
	early *earlyAnswer
	// stream names the GET stream the exchange serves, "" for a message.
	stream StreamKind
	// lastID is the Last-Event-ID of a StreamResume.
	lastID string
	// target is what Target found, once targetRead.
	target     Target
	targetRead bool
	// owner is what Owner found, "" until then.
	owner owner.ID
	// who is what Caller found, nil until then.
	who *caller.Caller

	out     statusWriter // w writes through it: the status it wrote
	outcome string       // set by the handlers: "error <code>", "isError", "task", …
	// linked is the traceparent of the run of the task a tasks/get read
	// (see LinkedTrace).
	linked string
}

// StreamKind names the GET stream an exchange serves.
type StreamKind string

// The GET streams of the endpoint.
const (
	// StreamResume is a GET with Last-Event-ID: the rest of a call's
	// stream (clientreq.Store.ServeResume).
	StreamResume StreamKind = "resume"
	// StreamSession is a legacy session's GET: its notifications
	// (listen.Server.ServeSession).
	StreamSession StreamKind = "session"
)

// earlyAnswer is a refusal decided before the chain: an HTTP status and a
// JSON-RPC error (202 and no body for a notification's).
type earlyAnswer struct {
	status int
	id     []byte
	code   int
	text   string
	data   any
	// held, when set, is the answer itself, written aside.
	held *wire.Recorder
}

// Stream names the GET stream the exchange serves; "" for a message.
func (x *Exchange) Stream() StreamKind { return x.stream }

// Refused reports whether the exchange's answer was decided before the
// chain: a refusal (a body that is not a JSON-RPC message, an id that
// cannot be echoed, a batch refused whole, …) that the dispatcher writes.
func (x *Exchange) Refused() bool { return x.early != nil }

// Method is the message's method.
func (x *Exchange) Method() string { return x.msg.Method }

// Name is what the request names: params.name (a tool, a prompt), else
// params.uri (a resource); "" when neither.
func (x *Exchange) Name() string {
	if name := paramString(x.msg.Params, "name"); name != "" {
		return name
	}
	return paramString(x.msg.Params, "uri")
}

// ProtocolVersion is the revision of the request, once the dispatcher has
// read it (after next returns); "" before, or when the request was refused
// before its revision was known.
func (x *Exchange) ProtocolVersion() string { return x.version }

// Request is the HTTP request the message came in (for a message of a
// legacy SSE stream, the one the stream built from its GET's headers, with
// the traceparent of the POST that sent the message, or of the backplane
// hop that brought it, when there is one).
func (x *Exchange) Request() *http.Request { return x.r }

// Notification reports whether the message is a notification (no id: it
// gets no answer).
func (x *Exchange) Notification() bool { return x.msg.ID == nil }

// InBatch reports whether the message is an element of a JSON-RPC batch.
func (x *Exchange) InBatch() bool { return x.batch }

// Transport is metadata.TransportSSE for a message of a legacy SSE
// stream, metadata.TransportStreamableHTTP otherwise.
func (x *Exchange) Transport() string {
	if x.origin != nil {
		return metadata.TransportSSE
	}
	return metadata.TransportStreamableHTTP
}

// Status is the HTTP status the answer was written with (200 for a
// JSON-RPC error), 0 while nothing was written.
func (x *Exchange) Status() int { return x.out.status }

// Outcome says how the exchange ended: "ok", "accepted" (a notification),
// "refused <status>" (an HTTP error), "error <code>" (a JSON-RPC error),
// "isError" (a tool's error result), "task", "input_required" or
// "streamed" (a call whose resumable stream outlives the request: its
// reader left or the stream was closed before the result).
func (x *Exchange) Outcome() string {
	switch {
	case x.outcome != "":
		return x.outcome
	case x.out.status >= 400:
		return "refused " + strconv.Itoa(x.out.status)
	case x.out.status == http.StatusAccepted:
		return "accepted"
	}
	return "ok"
}

// Fail answers the exchange with a JSON-RPC error instead of running its
// handler: a link that refuses the request (authorization) calls it and
// does not call next. A notification gets 202, as every notification does.
func (x *Exchange) Fail(code int, message string) {
	if x.msg.ID == nil {
		x.w.WriteHeader(http.StatusAccepted)
		return
	}
	x.h.rpcError(x, code, message, nil)
}

// Refuse answers the exchange with an HTTP status (401, 403, 413, 429,
// 503, …), the headers of hdr (WWW-Authenticate, Retry-After, …) and a
// JSON-RPC error body, instead of running its handler: a link that refuses
// calls it and does not call next. The body is plain JSON whatever the
// client accepts, as every transport-level refusal of the endpoint. In a
// batch the element gets the error in its place (the batch's status is
// the batch's) and a notification of a batch gets nothing.
func (x *Exchange) Refuse(status int, hdr http.Header, code int, message string, data any) {
	if x.batch && x.msg.ID == nil && x.stream == "" {
		return
	}
	out := x.w.Header()
	for k, v := range hdr {
		out[k] = v
	}
	x.h.refuse(x.w, status, validID(x.id), code, message, data)
}

// FailWith is Fail with the code, message and data of pe.
func (x *Exchange) FailWith(pe *ProtocolError) {
	if x.msg.ID == nil {
		x.w.WriteHeader(http.StatusAccepted)
		return
	}
	x.h.rpcError(x, pe.Code, pe.Message, pe.Data)
}

// setOutcome notes how the exchange ended; the first note stays.
func (x *Exchange) setOutcome(o string) {
	if x.outcome == "" {
		x.outcome = o
	}
}

// statusWriter is the ResponseWriter of an exchange: it notes the status.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (s *statusWriter) WriteHeader(status int) {
	if s.status == 0 {
		s.status = status
	}
	s.ResponseWriter.WriteHeader(status)
}

func (s *statusWriter) Write(p []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(p)
}

// Unwrap lets http.ResponseController reach the connection (flushes,
// deadlines).
func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// buildChain composes the links around the dispatcher: the request log
// outermost, then the links of mw in order.
func (h *handler) buildChain(mw []Middleware) MethodHandler {
	next := MethodHandler(h.dispatch)
	for i := len(mw) - 1; i >= 0; i-- {
		next = mw[i](next)
	}
	return h.requestLog(next)
}
