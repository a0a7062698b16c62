package mcp

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/funcmcp/funcmcp/host/internal/mcp/clientreq"
	"github.com/funcmcp/funcmcp/host/internal/mcp/taskrun"
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

// *Notifier is the client's end of a call that the call channel serves.
var _ peer.Notifier = (*Notifier)(nil)

// Notifier is the client's end of one call (a tools/call or a prompts/get)
// while it runs: it sends the call's notifications and requests to the
// client, and collects the requests a 2026-07-28 call answers with.
//
// Notifications: notifications/progress when the request carried a
// progressToken, notifications/message at or above the log level the client
// chose. They travel on the request's SSE stream (the first one starts it:
// status 200, text/event-stream; the result follows as the last event), or
// on the client's legacy SSE stream.
//
// Requests (elicitation/create, sampling/createMessage, roots/list): see
// [Notifier.Request] and [Notifier.RequestMode].
//
// Its methods are safe for concurrent use; once the handler writes the
// result they return ErrCallEnded.
type Notifier struct {
	progressToken []byte // the request's _meta.progressToken, nil when none
	minLevel      int    // rank of the least severe level sent; -1: none

	h       *handler
	scope   string            // the client's scope (see callScope), for routing answers
	mode    string            // metadata.InputModeStream, InputModeInputRequired or ""
	caps    json.RawMessage   // the client's capabilities object, nil when unknown
	answers *inputState       // input-required: the client's answers so far
	stream  *clientreq.Stream // the call's resumable stream, nil when it has none
	task    *taskrun.Run      // the task the call is or may become, nil when none

	mu           sync.Mutex
	w            http.ResponseWriter
	rc           *http.ResponseController
	sse          *streamOrigin // the legacy SSE stream, when the call came over it
	started      bool
	ended        bool
	lastProgress float64
	sentProgress bool
	buf          bytes.Buffer
	pending      []inputRequest // input-required: the requests of the result, in order
	// traceparent goes in the _meta of each notifications/message (see
	// SetTraceparent); "" when none.
	traceparent string
}

// SetTraceparent makes each notifications/message of the call carry
// _meta.traceparent (the W3C trace context of the call, telemetry on), so
// that a client correlates the tool's log messages with the trace.
func (n *Notifier) SetTraceparent(tp string) {
	if n == nil {
		return
	}
	n.mu.Lock()
	n.traceparent = tp
	n.mu.Unlock()
}

// WantsProgress reports whether the client asked for progress.
func (n *Notifier) WantsProgress() bool { return n != nil && (n.progressToken != nil || n.task != nil) }

// LogLevel returns the least severe log level the client wants, and false
// when it wants no log messages.
func (n *Notifier) LogLevel() (string, bool) {
	if n == nil || n.minLevel < 0 {
		return "", false
	}
	return metadata.LogLevels[n.minLevel], true
}

// Progress sends notifications/progress{progressToken, progress, total,
// message}; total <= 0 and an empty message are left out.
func (n *Notifier) Progress(progress, total float64, message string) error {
	if !n.WantsProgress() {
		return ErrNotRequested
	}
	if n.task != nil {
		return n.task.Progress(progress, total, message)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.ended {
		return ErrCallEnded
	}
	if n.sentProgress && progress <= n.lastProgress {
		return ErrProgressNotIncreasing
	}
	b := n.begin(metadata.NotifyProgress)
	b.WriteString(`{"progressToken":`)
	b.Write(n.progressToken)
	b.WriteString(`,"progress":`)
	b.Write(strconv.AppendFloat(b.AvailableBuffer(), progress, 'g', -1, 64))
	if total > 0 {
		b.WriteString(`,"total":`)
		b.Write(strconv.AppendFloat(b.AvailableBuffer(), total, 'g', -1, 64))
	}
	if message != "" {
		b.WriteString(`,"message":`)
		appendString(b, message)
	}
	if err := n.send(); err != nil {
		return err
	}
	n.lastProgress, n.sentProgress = progress, true
	return nil
}

// Log sends notifications/message{level, logger, data} when level is at or
// above the client's level; data is any JSON value and an empty logger is
// left out.
func (n *Notifier) Log(level, logger string, data json.RawMessage) error {
	rank := metadata.LogLevelRank(level)
	if rank < 0 {
		return ErrBadLogLevel
	}
	if n == nil || n.minLevel < 0 || rank < n.minLevel {
		return ErrNotRequested
	}
	if !json.Valid(data) {
		return errors.New("the log data is not valid JSON")
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.ended {
		return ErrCallEnded
	}
	b := n.begin(metadata.NotifyMessage)
	b.WriteString(`{"level":`)
	appendString(b, level)
	if logger != "" {
		b.WriteString(`,"logger":`)
		appendString(b, logger)
	}
	b.WriteString(`,"data":`)
	if err := json.Compact(b, data); err != nil { // one line: SSE data cannot hold line breaks
		return err
	}
	if n.traceparent != "" {
		b.WriteString(`,"_meta":{"traceparent":`)
		appendString(b, n.traceparent)
		b.WriteByte('}')
	}
	return n.send()
}

// begin starts a notification in n.buf; the caller writes the params
// object and calls send. n.mu is held.
func (n *Notifier) begin(method string) *bytes.Buffer {
	n.buf.Reset()
	n.buf.WriteString(`{"jsonrpc":"2.0","method":"`)
	n.buf.WriteString(method)
	n.buf.WriteString(`","params":`)
	return &n.buf
}

// send closes the message in n.buf (its params and itself) and emits it.
// n.mu is held.
func (n *Notifier) send() error {
	n.buf.WriteString("}}") // params, message
	return n.emit(n.buf.Bytes())
}

// emit writes one JSON-RPC message (one line) to the client: on the legacy
// SSE stream of the call, or as an event of the request's own stream,
// starting it first if needed. n.mu is held.
func (n *Notifier) emit(msg []byte) error {
	if n.sse != nil {
		return n.sse.Send(msg)
	}
	if n.w == nil {
		return ErrNotRequested // the client accepts no stream
	}
	if !n.started {
		setFraming(n.w.Header(), true)
		n.w.WriteHeader(http.StatusOK)
		n.started = true
	}
	frame := getBuffer()
	defer putBuffer(frame)
	appendEvent(frame, eventMessage, msg)
	// A client that stops reading must not hold the tool: bound the write.
	deadline := n.rc.SetWriteDeadline(time.Now().Add(notifyWriteTimeout)) == nil
	_, err := n.w.Write(frame.Bytes())
	if err == nil {
		err = n.rc.Flush()
	}
	if deadline {
		_ = n.rc.SetWriteDeadline(time.Time{})
	}
	return err
}

// end marks the call ended and returns the writer for its result: w itself
// when no notification was sent, else a writer that appends to the started
// stream (headers and status are already sent).
func (n *Notifier) end(w http.ResponseWriter) http.ResponseWriter {
	if n == nil {
		return w
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.ended = true
	if !n.started {
		return w
	}
	return &streamTail{w: w, hdr: http.Header{}}
}

// streamTail writes the last event of a started SSE stream: header changes
// and WriteHeader are too late and are ignored.
type streamTail struct {
	w   http.ResponseWriter
	hdr http.Header
}

func (t *streamTail) Header() http.Header         { return t.hdr }
func (t *streamTail) WriteHeader(int)             {}
func (t *streamTail) Write(p []byte) (int, error) { return t.w.Write(p) }

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
		token = progressToken(msg.meta)
		if vals := req.r.Header[headerSessionID]; len(vals) > 0 && vals[0] != "" {
			level = h.levels.get(vals[0])
		}
		if s != nil && len(s.caps) > 0 {
			mode, caps = metadata.InputModeStream, s.caps
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
	n := &Notifier{h: h, scope: req.scope, progressToken: token, minLevel: level, mode: mode, caps: caps, answers: answers, sse: sse}
	if sse == nil && req.sse {
		n.w, n.rc = req.w, http.NewResponseController(req.w)
	}
	return n
}

// progressToken reads progressToken (a string or a number, kept as raw
// JSON) from a request's params._meta.
func progressToken(meta []byte) (token []byte) {
	if len(meta) == 0 || meta[0] != '{' {
		return nil
	}
	it := members(meta)
	for key, val, ok := it.next(); ok; key, val, ok = it.next() {
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
