package clientreq

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/funcmcp/funcmcp/host/internal/jsonrpc"
	"github.com/funcmcp/funcmcp/host/internal/mcp/taskrun"
	"github.com/funcmcp/funcmcp/host/internal/mcp/wire"
	"github.com/funcmcp/funcmcp/host/internal/peer"
	"github.com/funcmcp/funcmcp/host/internal/tasks"
	"github.com/funcmcp/funcmcp/internal/jsonx"
	"github.com/funcmcp/funcmcp/metadata"
)

// Channel is what every [Notifier] of one endpoint shares with the
// endpoint: the requests waiting for their answer and what only the
// endpoint knows.
type Channel struct {
	// Waits holds the requests to clients waiting for their answer here.
	Waits *Waits
	// NewRequestID returns the id of a request to the client of scope
	// that waits until deadline.
	NewRequestID func(scope string, deadline time.Time) string
	// HasCapability reports whether a capabilities object declares name.
	HasCapability func(caps []byte, name string) bool
}

// Sender writes one JSON-RPC message on the stream a call came on (a
// legacy SSE stream).
type Sender interface {
	Send(msg []byte) error
}

// NotifierOptions are what a [Notifier] is made of: the call's request
// and the client's choices.
type NotifierOptions struct {
	// Scope is the client's scope, for routing answers.
	Scope string
	// ProgressToken is the request's _meta.progressToken, nil when none.
	ProgressToken []byte
	// MinLevel is the rank of the least severe log level sent; -1: none.
	MinLevel int
	// Mode is metadata.InputModeStream, InputModeInputRequired or "".
	Mode string
	// Caps is the client's capabilities object, nil when unknown.
	Caps json.RawMessage
	// Answers are the client's answers so far (input-required).
	Answers *Input
	// SSE is the legacy SSE stream the call came on, nil when none.
	SSE Sender
	// W is the response the call's notifications start as a stream; nil
	// when the client accepts none (or SSE carries them).
	W http.ResponseWriter
	// Task is the task the call is or may become, nil when none.
	Task *taskrun.Run
}

// NewNotifier returns the Notifier of a call, sharing ch.
func NewNotifier(ch *Channel, o NotifierOptions) *Notifier {
	n := &Notifier{ch: ch, scope: o.Scope, progressToken: o.ProgressToken, minLevel: o.MinLevel, mode: o.Mode, caps: o.Caps,
		answers: o.Answers, sse: o.SSE, task: o.Task}
	if o.W != nil {
		n.w, n.rc = o.W, http.NewResponseController(o.W)
	}
	return n
}

// SetStream gives the call its resumable stream; set before it runs.
func (n *Notifier) SetStream(rs *Stream) { n.stream = rs }

// Answers returns the client's answers the call brought (input-required),
// nil when none.
func (n *Notifier) Answers() *Input {
	if n == nil {
		return nil
	}
	return n.answers
}

// appendString writes s as a JSON string.
func appendString(b *bytes.Buffer, s string) {
	b.Write(metadata.AppendJSONString(b.AvailableBuffer(), s))
}

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
// result they return peer.ErrCallEnded.
type Notifier struct {
	progressToken []byte // the request's _meta.progressToken, nil when none
	minLevel      int    // rank of the least severe level sent; -1: none

	ch      *Channel
	scope   string          // the client's scope (see callScope), for routing answers
	mode    string          // metadata.InputModeStream, InputModeInputRequired or ""
	caps    json.RawMessage // the client's capabilities object, nil when unknown
	answers *Input          // input-required: the client's answers so far
	stream  *Stream         // the call's resumable stream, nil when it has none
	task    *taskrun.Run    // the task the call is or may become, nil when none

	mu           sync.Mutex
	w            http.ResponseWriter
	rc           *http.ResponseController
	sse          Sender // the legacy SSE stream, when the call came over it
	started      bool
	ended        bool
	lastProgress float64
	sentProgress bool
	buf          bytes.Buffer
	pending      []InputRequest // input-required: the requests of the result, in order
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
		return peer.ErrNotRequested
	}
	if n.task != nil {
		return n.task.Progress(progress, total, message)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.ended {
		return peer.ErrCallEnded
	}
	if n.sentProgress && progress <= n.lastProgress {
		return peer.ErrProgressNotIncreasing
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
		return peer.ErrBadLogLevel
	}
	if n == nil || n.minLevel < 0 || rank < n.minLevel {
		return peer.ErrNotRequested
	}
	if !json.Valid(data) {
		return errors.New("the log data is not valid JSON")
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.ended {
		return peer.ErrCallEnded
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
		return peer.ErrNotRequested // the client accepts no stream
	}
	if !n.started {
		wire.SetFraming(n.w.Header(), true)
		n.w.WriteHeader(http.StatusOK)
		n.started = true
	}
	frame := wire.GetBuffer()
	defer wire.PutBuffer(frame)
	wire.AppendEvent(frame, wire.EventMessage, msg)
	// A client that stops reading must not hold the tool: bound the write.
	deadline := n.rc.SetWriteDeadline(time.Now().Add(wire.NotifyWriteTimeout)) == nil
	_, err := n.w.Write(frame.Bytes())
	if err == nil {
		err = n.rc.Flush()
	}
	if deadline {
		_ = n.rc.SetWriteDeadline(time.Time{})
	}
	return err
}

// End marks the call ended and returns the writer for its result: w itself
// when no notification was sent, else a writer that appends to the started
// stream (headers and status are already sent).
func (n *Notifier) End(w http.ResponseWriter) http.ResponseWriter {
	if n == nil {
		return w
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.ended = true
	if !n.started {
		return w
	}
	return &StreamTail{w: w, hdr: http.Header{}}
}

// StreamTail writes the last event of a started SSE stream: header changes
// and WriteHeader are too late and are ignored.
type StreamTail struct {
	w   http.ResponseWriter
	hdr http.Header
}

// Header returns a header nothing sends: the stream's went out.
func (t *StreamTail) Header() http.Header { return t.hdr }

// WriteHeader does nothing: the stream's status went out.
func (t *StreamTail) WriteHeader(int) {}

// Write writes p on the stream.
func (t *StreamTail) Write(p []byte) (int, error) { return t.w.Write(p) }

// Input is what a call knows of the client's answers.
type Input struct {
	// Answers are the answers by key; Encoded is them as one object, nil
	// when none.
	Answers map[string]json.RawMessage
	Encoded json.RawMessage
}

func (in *Input) get(key string) (json.RawMessage, bool) {
	if in == nil {
		return nil, false
	}
	a, ok := in.Answers[key]
	return a, ok
}

// RequestCapabilities are the client capabilities a call may use.
var RequestCapabilities = [...]string{"elicitation", "sampling", "roots"}

// InputRequest is one request of an input-required result.
type InputRequest struct {
	Key, Method string
	Params      json.RawMessage
}

// RequestMode returns how this call's requests reach the client:
// metadata.InputModeStream, metadata.InputModeInputRequired, or "" when the
// client cannot be asked anything.
func (n *Notifier) RequestMode() string {
	if n == nil {
		return ""
	}
	if n.task.On() {
		return metadata.InputModeStream // a task's requests wait for tasks/update
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
	return n.answers.Encoded
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
		return nil, peer.ErrNoClientRequests
	}
	capName := metadata.CapabilityOf(method)
	if capName == "" {
		return nil, fmt.Errorf("%w: %q is not a request a call may send", peer.ErrBadClientRequest, jsonx.SafeText(method))
	}
	if !n.ch.HasCapability(n.caps, capName) {
		return &metadata.RequestReply{Error: &metadata.RequestError{
			Code:    metadata.CodeMissingRequiredClientCapability,
			Message: fmt.Sprintf("The client did not declare the '%s' capability.", capName),
			Data:    json.RawMessage(`{"requiredCapabilities":{"` + capName + `":{}}}`),
		}}, nil
	}
	params = bytes.TrimSpace(params)
	if len(params) == 0 || string(params) == "null" {
		params = json.RawMessage("{}")
	}
	if params[0] != '{' || !json.Valid(params) {
		return nil, fmt.Errorf("%w: the params of %s must be a JSON object", peer.ErrBadClientRequest, method)
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
		return nil, fmt.Errorf("%w: a request needs a key", peer.ErrBadClientRequest)
	}
	if a, ok := n.answers.get(key); ok {
		return &metadata.RequestReply{Result: a}, nil
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.ended {
		return nil, peer.ErrCallEnded
	}
	r := InputRequest{Key: key, Method: method, Params: bytes.Clone(params)}
	for i := range n.pending {
		if n.pending[i].Key == key {
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

// TakePending returns the requests of the input-required result; call it
// after end.
func (n *Notifier) TakePending() []InputRequest {
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
	id := n.ch.NewRequestID(n.scope, deadline)
	key := WaitKey(n.scope, id)
	answer := n.ch.Waits.Add(key)
	defer n.ch.Waits.Remove(key)

	n.mu.Lock()
	if n.ended {
		n.mu.Unlock()
		return nil, peer.ErrCallEnded
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
			e = metadata.RequestError{Code: jsonrpc.CodeInternalError, Message: "The client answered with a malformed error."}
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
	b := n.begin(metadata.NotifyCancelled)
	b.WriteString(`{"requestId":`)
	appendString(b, id)
	if cause != nil {
		b.WriteString(`,"reason":`)
		appendString(b, jsonx.SafeText(cause.Error()))
	}
	_ = n.send()
}

// TaskState is metadata.TaskStateRunning when the call runs as a task,
// TaskStateOffered when it may become one ([Notifier.StartTask]), "" when
// it cannot.
func (n *Notifier) TaskState() string {
	switch {
	case n == nil || n.task == nil:
		return ""
	case n.task.On():
		return metadata.TaskStateRunning
	}
	return metadata.TaskStateOffered
}

// InTask reports whether the call runs as a task: a failure of the
// function is then the task's error, not an isError result.
func (n *Notifier) InTask() bool { return n != nil && n.task.On() }

// ErrNoTask: the call cannot become a task.
var ErrNoTask = errors.New("this call cannot run as a task")

// StartTask makes the call a task now, for a tool declared Deferred: the
// client gets the task handle and requests to the client wait for
// tasks/update from now on. Starting a task that runs is no error.
func (n *Notifier) StartTask(ctx context.Context) (*metadata.StartTaskReply, error) {
	if n == nil || n.task == nil {
		return nil, ErrNoTask
	}
	t, err := n.MakeTask(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNoTask, err)
	}
	return &metadata.StartTaskReply{TaskID: t.ID, InputMode: metadata.InputModeStream}, nil
}

// Admitted makes the record of the call's task, for a task that waits for
// its call to be admitted; otherwise it does nothing (taskrun.Run.Admit,
// which a host driving mcp.CallRequest.Task reaches through
// taskrun.Work.Admitted). A store that refuses the task makes the call
// fail with a *ProtocolError saying which limit.
func (n *Notifier) Admitted(ctx context.Context) error {
	if n == nil {
		return nil
	}
	if err := n.task.Admit(ctx); err != nil {
		return err
	}
	return nil
}

// MakeTask makes the call a task now (see [Notifier.StartTask]); its error
// is the task store's. From then on the call's requests to the client
// wait for tasks/update (see [Notifier.RequestMode]).
func (n *Notifier) MakeTask(ctx context.Context) (*tasks.Task, error) {
	return n.task.Start(ctx)
}

// CloseStream ends the client's current response stream while the call
// goes on (SSE polling): the client resumes it with GET and Last-Event-ID.
// It fails with ErrNotResumable unless the call has a resumable stream.
func (n *Notifier) CloseStream() error {
	if n == nil || n.stream == nil {
		return ErrNotResumable
	}
	n.stream.CloseStream()
	return nil
}

// Resumable reports whether the call's stream can be closed and resumed.
func (n *Notifier) Resumable() bool { return n != nil && n.stream != nil }

// MarkLastEvent marks the next Write to w as the call's result when w
// writes a resumable stream (itself, or as the tail of a started stream).
func MarkLastEvent(w http.ResponseWriter) {
	if t, ok := w.(*StreamTail); ok {
		w = t.w
	}
	if rw, ok := w.(*Writer); ok {
		rw.LastEvent()
	}
}
