package mcp

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"sync"

	"github.com/funcmcp/funcmcp/host/internal/mcp/clientreq"
	"github.com/funcmcp/funcmcp/host/internal/mcp/wire"
	"github.com/funcmcp/funcmcp/host/internal/peer"
	"github.com/funcmcp/funcmcp/internal/jsonx"
	"github.com/funcmcp/funcmcp/metadata"
)

// Notification limits.
const (
	// DefaultMaxLogSessions bounds how many sessions' logging/setLevel
	// choices are remembered; the oldest choice is forgotten first.
	DefaultMaxLogSessions = 10000
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
			level = h.levels.get(vals[0])
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

// setLevel serves logging/setLevel (legacy revisions): the session's later
// calls send log messages at this level and above. Modern revisions carry
// the level in each request's _meta instead and do not have the method.
func (h *handler) setLevel(req *request, params []byte) {
	// Names are matched exactly, as every member of a message is.
	if len(params) > 0 && params[0] != '{' && params[0] != 'n' {
		h.rpcError(req, CodeInvalidParams, "Invalid params: params must be an object with a string 'level'.", nil)
		return
	}
	raw := member(params, "level")
	if raw == nil || raw[0] == 'n' {
		h.rpcError(req, CodeInvalidParams, "Invalid params: missing required parameter 'level'.", nil)
		return
	}
	level, ok := stringValue(raw)
	if !ok {
		h.rpcError(req, CodeInvalidParams, "Invalid params: params must be an object with a string 'level'.", nil)
		return
	}
	rank := metadata.LogLevelRank(level)
	if rank < 0 {
		h.rpcError(req, CodeInvalidParams, "Invalid params: unknown log level '"+jsonx.SafeText(level)+"'.", nil)
		return
	}
	if vals := req.r.Header[headerSessionID]; len(vals) > 0 && vals[0] != "" {
		h.levels.set(vals[0], rank)
	}
	h.result(req, []byte("{}"))
}

// levelStore remembers the logging/setLevel choice of up to max sessions,
// keyed by a hash of the session token; when full, the oldest choice is
// forgotten. It is the one piece of per-session state the endpoint keeps,
// local to this process.
type levelStore struct {
	mu    sync.Mutex
	max   int
	rank  map[[sha256.Size]byte]int
	order [][sha256.Size]byte // insertion order, a ring of max entries
	next  int
}

func newLevelStore(max int) *levelStore {
	if max <= 0 {
		max = DefaultMaxLogSessions
	}
	return &levelStore{max: max, rank: make(map[[sha256.Size]byte]int)}
}

func (s *levelStore) set(session string, rank int) {
	key := sha256.Sum256([]byte(session))
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.rank[key]; !ok {
		if len(s.order) < s.max {
			s.order = append(s.order, key)
		} else {
			delete(s.rank, s.order[s.next])
			s.order[s.next] = key
			s.next = (s.next + 1) % s.max
		}
	}
	s.rank[key] = rank
}

// get returns the session's level rank, -1 when it never set one.
func (s *levelStore) get(session string) int {
	key := sha256.Sum256([]byte(session))
	s.mu.Lock()
	defer s.mu.Unlock()
	if r, ok := s.rank[key]; ok {
		return r
	}
	return -1
}
