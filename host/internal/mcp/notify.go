package mcp

import (
	"bytes"
	"encoding/json"

	"github.com/funcmcp/funcmcp/host/internal/mcp/clientreq"
	"github.com/funcmcp/funcmcp/host/internal/mcp/sessions"
	"github.com/funcmcp/funcmcp/host/internal/mcp/wire"
	"github.com/funcmcp/funcmcp/host/internal/peer"
	"github.com/funcmcp/funcmcp/metadata"
)

// Notification limits.
const (
	// DefaultMaxLogSessions bounds how many sessions' logging/setLevel
	// choices are remembered (see sessions.Levels).
	DefaultMaxLogSessions = sessions.DefaultMaxLogSessions
	// notifyWriteTimeout bounds writing one notification to a client that
	// does not read its stream.
	notifyWriteTimeout = wire.NotifyWriteTimeout
)

// Errors of [Notifier] methods, declared in package peer, where the call
// channel reads them too.
var (
	ErrNotRequested          = peer.ErrNotRequested
	ErrCallEnded             = peer.ErrCallEnded
	ErrProgressNotIncreasing = peer.ErrProgressNotIncreasing
	ErrBadLogLevel           = peer.ErrBadLogLevel
)

// Notifier is the client's end of one call while it runs (see
// clientreq.Notifier, which holds it).
type Notifier = clientreq.Notifier

// streamTail writes the last event of a started stream (see
// clientreq.StreamTail).
type streamTail = clientreq.StreamTail

// requestCapabilities are the client capabilities a call may use.
var requestCapabilities = clientreq.RequestCapabilities

// *Notifier is the client's end of a call that the call channel serves.
var _ peer.Notifier = (*Notifier)(nil)

// notifier returns the Notifier of a call (tools/call, prompts/get), or
// nil when the client can receive nothing during it.
//
// A modern request (meta not nil) carries its progress token, log level and
// capabilities in its _meta; notifications need the request's own SSE
// stream, and requests to the client always end the call with an
// input-required result (in holds the answers it brought back).
//
// A legacy request carries its progress token; its session's
// logging/setLevel choice applies, and the capabilities the session's
// initialize declared. Notifications and requests travel on the request's
// SSE stream, or on the client's legacy SSE stream when the call came over
// it; a client that accepts neither gets none.
func (h *handler) notifier(req *request, msg *message, meta *RequestMeta, s *session, in *inputState) *Notifier {
	var (
		token   []byte
		level   = -1
		mode    string
		caps    json.RawMessage
		answers *inputState
	)
	if meta != nil {
		token, level = meta.ProgressToken, metadata.LogLevelRank(meta.LogLevel)
		// The client's capabilities are known: a request for one it lacks
		// is refused with -32021, so the function learns which.
		mode, caps, answers = metadata.InputModeInputRequired, meta.ClientCapabilities, in
	} else {
		token = progressToken(msg.Meta)
		if vals := req.r.Header[headerSessionID]; len(vals) > 0 && vals[0] != "" {
			level = h.levels.Get(vals[0])
		}
		if s != nil && len(s.Caps) > 0 {
			mode, caps = metadata.InputModeStream, s.Caps
		}
	}
	sse := req.origin
	if sse == nil && !req.sse {
		// Nothing reaches this client before the result: no notification,
		// and requests only the input-required way.
		token, level = nil, -1
		if mode == metadata.InputModeStream {
			mode = ""
		}
	}
	if token == nil && level < 0 && mode == "" {
		return nil
	}
	o := clientreq.NotifierOptions{Scope: req.scope, ProgressToken: token, MinLevel: level, Mode: mode, Caps: caps, Answers: answers}
	if sse != nil {
		o.SSE = sse
	} else if req.sse {
		o.W = req.w
	}
	return clientreq.NewNotifier(h.notifiers, o)
}

// progressToken reads progressToken (a string or a number, kept as raw
// JSON) from a request's params._meta.
func progressToken(meta []byte) (token []byte) {
	if len(meta) == 0 || meta[0] != '{' {
		return nil
	}
	it := members(meta)
	for key, val, ok := it.Next(); ok; key, val, ok = it.Next() {
		if keyIs(key, "progressToken") {
			token = nil
			if validID(val) != nil { // a string or a number, like a request id
				token = bytes.Clone(val)
			}
		}
	}
	return token
}
