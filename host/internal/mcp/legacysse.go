package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/funcmcp/funcmcp/host/internal/auth"
	"github.com/funcmcp/funcmcp/host/internal/dedup"
	"github.com/funcmcp/funcmcp/metadata"
)

// Defaults of [LegacySSEOptions].
const (
	DefaultKeepAlive   = 25 * time.Second
	DefaultMaxStreams  = 10000
	DefaultStreamInbox = 256
)

// ClientStatePurpose is the purpose a client-state token is sealed for.
const ClientStatePurpose = "mcp-sse-client-state"

// clientStateTTL bounds the life of a client-state token: a stream lasting
// longer needs a new connection.
const clientStateTTL = 24 * time.Hour

// The query parameters of the message endpoint.
const (
	queryClientState = "azmcpcs"
)

// StateSealer seals client-state tokens and opens them again. Instances
// sharing the key open each other's tokens.
type StateSealer interface {
	Seal(purpose string, payload []byte, ttl time.Duration) (string, error)
	Open(purpose, token string) ([]byte, error)
}

// Forwarder carries a client's message to the instance holding its stream.
type Forwarder interface {
	// Forward returns once the message is stored for instanceID. An
	// instance that does not exist gives an error wrapping ErrNoInstance.
	Forward(ctx context.Context, instanceID, clientID string, message []byte) error
}

// ErrNoInstance is what a Forwarder returns for an instance that is gone.
var ErrNoInstance = errors.New("no such host instance")

// LegacySSEOptions configures [NewLegacySSE]. InstanceID and Sealer are
// required.
type LegacySSEOptions struct {
	// InstanceID names this host instance in client-state tokens.
	InstanceID string
	// Sealer seals and opens client-state tokens.
	Sealer StateSealer
	// Forward carries messages for streams on other instances; nil means
	// there are none.
	Forward Forwarder
	// KeepAlive is the interval of the ": keep-alive" comments on a stream;
	// default 25s.
	KeepAlive time.Duration
	// MaxStreams bounds the open streams; default 10,000. Beyond, GET is 503.
	MaxStreams int
	// Inbox bounds the messages waiting for one stream; default 256. Beyond,
	// POST is 503.
	Inbox int
	// MaxBodyBytes limits a POSTed message; 0 means DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// Logger receives dropped messages; nil discards.
	Logger *slog.Logger
}

// LegacySSE is the HTTP+SSE transport of MCP 2024-11-05: a GET opens a
// stream whose first event names the message endpoint, POSTs there are
// answered 202 and their replies travel on the stream. Messages run through
// the Streamable HTTP handler, so both transports answer alike.
type LegacySSE struct {
	endpoint http.Handler
	o        LegacySSEOptions
	log      *slog.Logger

	mu      sync.Mutex
	streams map[string]*stream
	closed  bool
	stop    chan struct{}
}

// stream is one open SSE connection.
type stream struct {
	id      string
	headers http.Header // the GET's, for the tools' transport headers
	inbox   chan []byte
	ids     *dedup.Window // request ids already run

	mu    sync.Mutex
	token string // Mcp-Session-Id minted by initialize, "" before
}

func (s *stream) sessionToken() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.token
}

func (s *stream) setSessionToken(token string) {
	s.mu.Lock()
	s.token = token
	s.mu.Unlock()
}

// requestIDWindow is how many request ids a stream remembers.
const requestIDWindow = 4096

// NewLegacySSE returns the legacy transport running messages through
// endpoint, the handler of [NewHandler].
func NewLegacySSE(endpoint http.Handler, opts *LegacySSEOptions) (*LegacySSE, error) {
	var o LegacySSEOptions
	if opts != nil {
		o = *opts
	}
	if o.InstanceID == "" || strings.Contains(o.InstanceID, "|") {
		return nil, errors.New("creating the legacy SSE transport: an instance id without '|' is required")
	}
	if o.Sealer == nil {
		return nil, errors.New("creating the legacy SSE transport: a token sealer is required")
	}
	if o.KeepAlive <= 0 {
		o.KeepAlive = DefaultKeepAlive
	}
	if o.MaxStreams <= 0 {
		o.MaxStreams = DefaultMaxStreams
	}
	if o.Inbox <= 0 {
		o.Inbox = DefaultStreamInbox
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &LegacySSE{endpoint: endpoint, o: o, log: o.Logger, streams: map[string]*stream{}, stop: make(chan struct{})}, nil
}

// Streams returns the number of open streams.
func (l *LegacySSE) Streams() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.streams)
}

// Close ends every open stream and refuses new ones.
func (l *LegacySSE) Close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.closed {
		l.closed = true
		close(l.stop)
	}
}

func (l *LegacySSE) plainError(w http.ResponseWriter, status int, text string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, text)
}

// ServeStream serves GET …/sse: the stream of one client.
func (l *LegacySSE) ServeStream(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		w.Header()["Allow"] = []string{http.MethodGet}
		l.plainError(w, http.StatusMethodNotAllowed, "Method not allowed")
		return
	}
	id := newID()
	token, err := l.o.Sealer.Seal(ClientStatePurpose, []byte(id+"|"+l.o.InstanceID), clientStateTTL)
	if err != nil {
		l.log.Error("mcp sse: sealing the client state failed", "error", err)
		l.plainError(w, http.StatusInternalServerError, "Internal error")
		return
	}
	s := &stream{id: id, headers: r.Header.Clone(), inbox: make(chan []byte, l.o.Inbox), ids: dedup.NewWindow(requestIDWindow)}
	l.mu.Lock()
	switch {
	case l.closed:
		l.mu.Unlock()
		l.plainError(w, http.StatusServiceUnavailable, "Service Unavailable: the host is stopping")
		return
	case len(l.streams) >= l.o.MaxStreams:
		l.mu.Unlock()
		l.plainError(w, http.StatusServiceUnavailable, "Service Unavailable: too many open streams")
		return
	}
	l.streams[id] = s
	l.mu.Unlock()
	defer func() {
		l.mu.Lock()
		delete(l.streams, id)
		l.mu.Unlock()
	}()

	endpoint := "message?" + queryClientState + "=" + url.QueryEscape(token)
	// The key copied is the one the host checks (auth.RequestKey), so the
	// message URL carries the key that opened the stream.
	if key := auth.RequestKey(r); key != "" {
		endpoint += "&" + auth.QueryCode + "=" + url.QueryEscape(key)
	}
	hdr := w.Header()
	setFraming(hdr, true)
	hdr.Set("Connection", "keep-alive")
	w.WriteHeader(http.StatusOK)
	out := &sseWriter{w: w, rc: http.NewResponseController(w), window: l.o.KeepAlive + time.Minute}
	if err := out.event("endpoint", []byte(endpoint)); err != nil {
		return
	}

	ctx, cancel := context.WithCancel(r.Context())
	var wg sync.WaitGroup
	wg.Go(func() { out.keepAlive(ctx, l.o.KeepAlive, cancel) })
	defer func() {
		cancel() // before the wait: the keep-alive loop ends on it
		wg.Wait()
	}()
	for {
		select {
		case <-ctx.Done():
			return
		case <-l.stop:
			return
		case msg := <-s.inbox:
			reply := l.run(ctx, s, msg)
			if len(reply) == 0 {
				continue
			}
			if err := out.event(eventMessage, reply); err != nil {
				return
			}
		}
	}
}

// run answers one message through the endpoint and returns the reply to
// put on the stream ("" for none).
func (l *LegacySSE) run(ctx context.Context, s *stream, msg []byte) []byte {
	if id, _ := peek(msg); id != "" && !s.ids.Add(id) {
		// A request sent again (a retry after a failure that left the client
		// unsure): it ran already, and its reply is on the stream.
		l.log.Debug("mcp sse: dropping a repeated request", "client", s.id, "id", id)
		return nil
	}
	// The stream's messages share its scope, whether or not they
	// initialized a session: its calls are its own to cancel.
	ctx = withStreamScope(context.WithValue(ctx, transportKey{}, metadata.TransportSSE), s.id)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "/", bytes.NewReader(msg))
	if err != nil {
		l.log.Error("mcp sse: building the request failed", "error", err)
		return nil
	}
	req.Header = s.headers.Clone()
	req.Header[headerAccept] = jsonContentType
	req.Header["Content-Type"] = jsonContentType
	delete(req.Header, headerProtocolVersion)
	delete(req.Header, headerSessionID)
	if token := s.sessionToken(); token != "" {
		req.Header[headerSessionID] = []string{token}
	}
	req.ContentLength = int64(len(msg))
	rec := &recorder{header: http.Header{}}
	l.endpoint.ServeHTTP(rec, req)
	if vals := rec.header[headerSessionID]; len(vals) > 0 && vals[0] != "" {
		s.setSessionToken(vals[0])
	}
	body := bytes.TrimSpace(rec.body.Bytes())
	if len(body) == 0 || rec.status == http.StatusAccepted {
		return nil
	}
	if bytes.ContainsAny(body, "\r\n") {
		var b bytes.Buffer
		if err := json.Compact(&b, body); err != nil {
			l.log.Error("mcp sse: the reply is not JSON", "error", err)
			return nil
		}
		body = b.Bytes()
	}
	return body
}

// peek returns the id of a request ("" for a notification, a response or a
// batch), as compact JSON text, and the method of a request or
// notification ("" for a response or a batch).
func peek(msg []byte) (id, method string) {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if firstByte(msg) != '{' || json.Unmarshal(msg, &m) != nil || m.Method == "" {
		return "", ""
	}
	if len(m.ID) == 0 || string(m.ID) == "null" {
		return "", m.Method
	}
	return string(m.ID), m.Method
}

// transportKey marks the request context of a message that came over the
// legacy SSE transport.
type transportKey struct{}

// transportOf is the transport name a tool call reports.
func transportOf(ctx context.Context) string {
	if t, ok := ctx.Value(transportKey{}).(string); ok {
		return t
	}
	return metadata.TransportStreamableHTTP
}

// ServeMessage serves POST …/message?azmcpcs=<client state>: the message
// goes to the client's stream, here or on its instance, and is answered 202.
func (l *LegacySSE) ServeMessage(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header()["Allow"] = allowPost
		l.plainError(w, http.StatusMethodNotAllowed, "Method not allowed")
		return
	}
	state := r.URL.Query().Get(queryClientState)
	if state == "" {
		l.plainError(w, http.StatusBadRequest, "Missing service context. Please connect to the /sse endpoint to initiate your session.")
		return
	}
	clientID, instanceID, ok := l.openState(state)
	if !ok {
		l.plainError(w, http.StatusBadRequest, "Invalid client state. Please connect to the /sse endpoint to initiate your session.")
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, l.o.MaxBodyBytes))
	if err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			l.plainError(w, http.StatusRequestEntityTooLarge, "Request Entity Too Large: the body exceeds the limit")
			return
		}
		l.plainError(w, http.StatusBadRequest, "Bad Request: reading the body failed")
		return
	}
	body = bytes.TrimSpace(body)
	if len(body) == 0 || string(body) == "null" {
		l.plainError(w, http.StatusBadRequest, "No message in request body.")
		return
	}
	if !json.Valid(body) {
		l.plainError(w, http.StatusBadRequest, "Bad Request: the body is not JSON.")
		return
	}
	noSession := fmt.Sprintf("No active session for client '%s' and instance '%s'. Please connect to the /sse endpoint to initiate your session.", clientID, instanceID)
	switch l.enqueue(clientID, body) {
	case enqueued:
		l.accepted(w)
		return
	case inboxFull:
		l.plainError(w, http.StatusServiceUnavailable, "Service Unavailable: too many messages waiting for this stream")
		return
	}
	if instanceID == l.o.InstanceID || l.o.Forward == nil {
		l.plainError(w, http.StatusBadRequest, noSession)
		return
	}
	if err := l.o.Forward.Forward(r.Context(), instanceID, clientID, body); err != nil {
		if errors.Is(err, ErrNoInstance) {
			l.plainError(w, http.StatusBadRequest, noSession)
			return
		}
		l.log.Error("mcp sse: forwarding a message failed", "client", clientID, "instance", instanceID, "error", err)
		l.plainError(w, http.StatusServiceUnavailable, "Service Unavailable: the message could not be forwarded")
		return
	}
	l.accepted(w)
}

func (l *LegacySSE) accepted(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusAccepted)
	_, _ = io.WriteString(w, "Accepted")
}

// openState returns the client and instance of a client-state token.
func (l *LegacySSE) openState(token string) (clientID, instanceID string, ok bool) {
	plain, err := l.o.Sealer.Open(ClientStatePurpose, token)
	if err != nil {
		return "", "", false
	}
	clientID, instanceID, ok = strings.Cut(string(plain), "|")
	if !ok || clientID == "" || instanceID == "" || strings.Contains(instanceID, "|") {
		return "", "", false
	}
	return clientID, instanceID, true
}

var cancelledMethod = []byte(methodCancelled)

func isCancellation(msg []byte) bool {
	_, method := peek(msg)
	return method == methodCancelled
}

type enqueueResult int

const (
	noStream enqueueResult = iota
	enqueued
	inboxFull
)

// enqueue hands msg to the local stream of clientID.
func (l *LegacySSE) enqueue(clientID string, msg []byte) enqueueResult {
	l.mu.Lock()
	s := l.streams[clientID]
	l.mu.Unlock()
	if s == nil {
		return noStream
	}
	if bytes.Contains(msg, cancelledMethod) && isCancellation(msg) {
		// The stream runs one request at a time: queued behind the call it
		// names, a cancellation would arrive only once that call is over.
		// It is run at once instead, under the stream's session.
		l.run(context.Background(), s, msg)
		return enqueued
	}
	select {
	case s.inbox <- msg:
		return enqueued
	default:
		return inboxFull
	}
}

// Deliver hands a message that another instance forwarded to the local
// stream of clientID. It reports whether a stream took it; a message for a
// stream that is gone, or whose inbox is full, is logged and dropped.
func (l *LegacySSE) Deliver(clientID string, message []byte) bool {
	switch l.enqueue(clientID, message) {
	case enqueued:
		return true
	case inboxFull:
		l.log.Warn("mcp sse: dropping a forwarded message: the stream's inbox is full", "client", clientID)
	default:
		l.log.Warn("mcp sse: dropping a forwarded message: no such stream here", "client", clientID)
	}
	return false
}

// sseWriter writes events to one stream; the keep-alive goroutine and the
// stream's loop share it.
type sseWriter struct {
	mu sync.Mutex
	w  http.ResponseWriter
	rc *http.ResponseController
	// window is the write deadline set before each write: a stream lives
	// longer than any request deadline a server sets, but a client that
	// stops reading is dropped.
	window time.Duration
}

// write writes p and flushes it; the caller holds mu.
func (s *sseWriter) write(p []byte) error {
	_ = s.rc.SetWriteDeadline(time.Now().Add(s.window))
	if _, err := s.w.Write(p); err != nil {
		return err
	}
	return s.rc.Flush()
}

func (s *sseWriter) event(name string, data []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	buf := getBuffer()
	defer putBuffer(buf)
	appendEvent(buf, name, data)
	return s.write(buf.Bytes())
}

// keepAlive writes a comment every interval until ctx is done; a failed
// write (the client left) cancels the stream.
func (s *sseWriter) keepAlive(ctx context.Context, every time.Duration, cancel context.CancelFunc) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		s.mu.Lock()
		err := s.write(keepAliveComment)
		s.mu.Unlock()
		if err != nil {
			cancel()
			return
		}
	}
}

// recorder is the ResponseWriter of a message run through the endpoint.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
}

func (r *recorder) Write(p []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.body.Write(p)
}
