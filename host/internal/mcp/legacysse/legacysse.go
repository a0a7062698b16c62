package legacysse

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/funcmcp/funcmcp/host/internal/auth"
	"github.com/funcmcp/funcmcp/host/internal/caller"
	"github.com/funcmcp/funcmcp/host/internal/dedup"
	"github.com/funcmcp/funcmcp/host/internal/ids"
	"github.com/funcmcp/funcmcp/host/internal/mcp/wire"
	"github.com/funcmcp/funcmcp/host/internal/notify"
)

// Defaults of [Options].
const (
	DefaultKeepAlive   = 25 * time.Second
	DefaultMaxStreams  = 10000
	DefaultStreamInbox = 256
	// DefaultStreamInboxBytes bounds the bytes waiting for one stream: four
	// messages of the largest size.
	DefaultStreamInboxBytes = 4 * wire.DefaultMaxBodyBytes
	// DefaultInboxBytes bounds the bytes waiting for all the streams of a
	// host.
	DefaultInboxBytes = 128 << 20
)

// ClientStatePurpose is the purpose a client-state token is sealed for.
const ClientStatePurpose = "mcp-sse-client-state"

// clientStateTTL bounds the life of a client-state token: a stream lasting
// longer needs a new connection.
const clientStateTTL = 24 * time.Hour

// QueryClientState is the query parameter of the message endpoint that
// carries the client-state token.
const QueryClientState = "azmcpcs"

// jsonContentType is the Content-Type of the requests a stream's messages
// become; net/http never writes into it.
var jsonContentType = []string{"application/json"}

// Endpoint is what the transport needs of the MCP endpoint its messages
// run through (the Streamable HTTP handler of package mcp).
type Endpoint interface {
	// Route decodes a message for the transport to route it.
	Route(msg []byte) Route
	// Serve answers one message of a stream as a POST of the endpoint,
	// with the stream's origin.
	Serve(w http.ResponseWriter, r *http.Request, origin *Origin)
	// Listen opens the listener of the stream who opens, which wake wakes:
	// it hears the list changes and the resources the stream subscribes
	// to. It is nil when notifications are off; an error means the host
	// is stopping.
	Listen(who *caller.Caller, wake func()) (*notify.Listener, error)
	// Change renders a change a stream's listener heard as the
	// notification to write on it; nil for none.
	Change(c notify.Change) []byte
}

// StateSealer seals client-state tokens and opens them again. Instances
// sharing the key open each other's tokens.
type StateSealer interface {
	Seal(purpose string, payload []byte, ttl time.Duration) (string, error)
	Open(purpose, token string) ([]byte, error)
}

// Forwarder carries a client's message to the instance holding its stream.
type Forwarder interface {
	// Forward returns once the stream's instance took the message (into
	// the stream's inbox, or held for it in order). An instance or stream
	// that does not exist gives an error wrapping ErrNoInstance; a stream
	// that takes no more for now, one wrapping ErrStreamFull.
	Forward(ctx context.Context, instanceID, clientID string, message []byte) error
}

// ErrNoInstance is what a Forwarder returns for an instance that is gone.
var ErrNoInstance = errors.New("no such host instance")

// ErrStreamFull is what a Forwarder returns when the stream's instance
// refused the message: the stream takes no more for now.
var ErrStreamFull = errors.New("the stream takes no more messages for now")

// Options configures [New]. InstanceID and Sealer are
// required.
type Options struct {
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
	// InboxBytes bounds the bytes of the messages waiting for one stream;
	// default DefaultStreamInboxBytes (16 MiB). Beyond, POST is 503.
	InboxBytes int64
	// HostInboxBytes bounds the bytes waiting for all the streams together;
	// default DefaultInboxBytes (128 MiB). Beyond, POST is 503.
	HostInboxBytes int64
	// MaxBodyBytes limits a POSTed message; 0 means wire.DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// Logger receives dropped messages; nil discards.
	Logger *slog.Logger
}

// Transport is the HTTP+SSE transport of MCP 2024-11-05: a GET opens a
// stream whose first event names the message endpoint, POSTs there are
// answered 202 and their replies travel on the stream. Messages run through
// the Streamable HTTP endpoint ([Endpoint]), so both transports answer
// alike.
type Transport struct {
	endpoint Endpoint
	o        Options
	log      *slog.Logger

	mu      sync.Mutex
	streams map[string]*stream
	closed  bool
	stop    chan struct{}
	queued  atomic.Int64 // bytes waiting in every stream's inbox
}

// stream is one open SSE connection. An idle stream holds little: its
// inbox and its window of request ids are made on first use.
type stream struct {
	id      string
	headers http.Header // the GET's, for the tools' transport headers
	remote  string      // the GET's RemoteAddr: its messages' client address
	// caller is the GET's record: the caller of the messages that come
	// without their POST's (forwarded by another instance).
	caller *caller.Caller
	ctx    context.Context // ends with the stream
	wake   chan struct{}   // a message is waiting (capacity 1)
	out    *wire.SSEWriter // the stream: replies, and the calls' notifications and requests

	mu     sync.Mutex
	token  string    // Mcp-Session-Id minted by initialize, "" before
	inbox  []waiting // messages waiting, oldest first
	queued int64     // their bytes
	closed bool      // the stream ended: nothing more is queued
	ids    *dedup.Window

	listener *notify.Listener // nil when notifications are off
}

// signal wakes the stream's loop.
func (s *stream) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// waiting is a message in a stream's inbox: its bytes, its route (decoded
// once, when it came) and the W3C traceparent of the POST that sent it (""
// when none), which its request carries instead of the stream's GET's, so
// that its SERVER span continues the POST's trace (or the backplane hop's).
type waiting struct {
	msg   []byte
	route Route
	trace string
	// caller is the record of the POST that sent it; nil for a message
	// another instance forwarded, which is its stream's.
	caller *caller.Caller
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

// firstRun records a request id (hashed: ids may be long) and reports
// whether the stream has not run it yet.
func (s *stream) firstRun(id string) bool {
	sum := sha256.Sum256([]byte(id))
	s.mu.Lock()
	if s.ids == nil {
		s.ids = dedup.NewWindow(requestIDWindow)
	}
	s.mu.Unlock()
	return s.ids.Add(string(sum[:16]))
}

// requestIDWindow is how many request ids a stream remembers.
const requestIDWindow = 4096

// New returns the legacy transport running messages through endpoint.
// Each message reaches the endpoint with its stream's [Origin]: the
// stream's scope and the writer of the stream.
func New(endpoint Endpoint, opts *Options) (*Transport, error) {
	var o Options
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
	if o.InboxBytes <= 0 {
		o.InboxBytes = DefaultStreamInboxBytes
	}
	if o.HostInboxBytes <= 0 {
		o.HostInboxBytes = DefaultInboxBytes
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = wire.DefaultMaxBodyBytes
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if endpoint == nil {
		return nil, errors.New("creating the legacy SSE transport: an endpoint is required")
	}
	return &Transport{endpoint: endpoint, o: o, log: o.Logger, streams: map[string]*stream{}, stop: make(chan struct{})}, nil
}

// Streams returns the number of open streams.
func (l *Transport) Streams() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.streams)
}

// Close ends every open stream and refuses new ones.
func (l *Transport) Close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.closed {
		l.closed = true
		close(l.stop)
	}
}

func (l *Transport) plainError(w http.ResponseWriter, status int, text string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, text)
}

// ServeStream serves GET …/sse: the stream of one client.
func (l *Transport) ServeStream(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		w.Header()["Allow"] = []string{http.MethodGet}
		l.plainError(w, http.StatusMethodNotAllowed, "Method not allowed")
		return
	}
	id := ids.Random(ids.LowerAlnum, 16)
	state := id + "|" + l.o.InstanceID
	who := caller.Of(r)
	if who.Principal() != "" {
		// Behind the access token check the stream belongs to its
		// principal: messages from anyone else are refused.
		state += "|" + string(who.Owner())
	}
	token, err := l.o.Sealer.Seal(ClientStatePurpose, []byte(state), clientStateTTL)
	if err != nil {
		l.log.Error("mcp sse: sealing the client state failed", "error", err)
		l.plainError(w, http.StatusInternalServerError, "Internal error")
		return
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	out := wire.NewSSEWriter(w, l.o.KeepAlive+time.Minute)
	// The GET's headers live as long as the stream: they are kept, not
	// copied, and only read.
	s := &stream{id: id, headers: r.Header, remote: r.RemoteAddr, caller: who, ctx: ctx, wake: make(chan struct{}, 1), out: out}
	// The stream hears the list changes and the resources it subscribes
	// to. Streams are bounded (MaxStreams, the connection limit): its
	// listener does not count against the listener limits, but the URIs
	// it follows count against its owner's and its address's bytes.
	var heard <-chan struct{}
	lst, err := l.endpoint.Listen(who, s.signal)
	if err != nil {
		l.plainError(w, http.StatusServiceUnavailable, "Service Unavailable: the host is stopping")
		return
	}
	if lst != nil {
		defer lst.End(nil)
		s.listener, heard = lst, lst.Done()
	}
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
		// Its bytes first: a stream no longer counted holds none (a message
		// that finds it closed meanwhile is told there is no stream).
		l.drop(s)
		l.mu.Lock()
		delete(l.streams, id)
		l.mu.Unlock()
	}()

	endpoint := "message?" + QueryClientState + "=" + url.QueryEscape(token)
	// The key copied is the one the host checks (auth.RequestKey), so the
	// message URL carries the key that opened the stream.
	if key := auth.RequestKey(r); key != "" {
		endpoint += "&" + auth.QueryCode + "=" + url.QueryEscape(key)
	}
	hdr := w.Header()
	wire.SetFraming(hdr, true)
	hdr.Set("Connection", "keep-alive")
	w.WriteHeader(http.StatusOK)
	if err := out.Event("endpoint", []byte(endpoint)); err != nil {
		return
	}
	// Keep-alives come from a timer, not a goroutine of the stream's own:
	// an idle stream costs no goroutine but the connection's.
	stopKeepAlive := out.KeepAlive(l.o.KeepAlive, cancel)
	defer stopKeepAlive()
	for {
		select {
		case <-ctx.Done():
			return
		case <-l.stop:
			return
		case <-heard:
			return // it fell behind: the client connects again
		case <-s.wake:
		}
		if s.listener != nil {
			for c, ok := s.listener.Next(); ok; c, ok = s.listener.Next() {
				if msg := l.endpoint.Change(c); msg != nil {
					if err := out.Event(wire.EventMessage, msg); err != nil {
						return
					}
				}
			}
		}
		for {
			m := l.take(s)
			if m.msg == nil {
				break
			}
			reply := l.run(ctx, s, m)
			if len(reply) == 0 {
				continue
			}
			if err := out.Event(wire.EventMessage, reply); err != nil {
				return
			}
		}
	}
}

// take removes the oldest waiting message of s; its msg is nil when none
// waits.
func (l *Transport) take(s *stream) waiting {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.inbox) == 0 {
		s.inbox = nil // an idle stream keeps no queue
		return waiting{}
	}
	msg := s.inbox[0]
	s.inbox[0] = waiting{}
	s.inbox = s.inbox[1:]
	n := int64(len(msg.msg))
	s.queued -= n
	l.queued.Add(-n)
	return msg
}

// drop forgets the messages of a stream that ended.
func (l *Transport) drop(s *stream) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	l.queued.Add(-s.queued)
	s.inbox, s.queued = nil, 0
}

// QueuedBytes returns the bytes of the messages waiting for this host's
// streams.
func (l *Transport) QueuedBytes() int64 { return l.queued.Load() }

// run answers one message through the endpoint and returns the reply to
// put on the stream ("" for none). Its trace, when not "", is the
// traceparent its request carries instead of the stream's.
func (l *Transport) run(ctx context.Context, s *stream, m waiting) []byte {
	msg, trace := m.msg, m.trace
	if id := m.route.ID; id != "" && !s.firstRun(id) {
		// A request sent again (a retry after a failure that left the client
		// unsure): it ran already, and its reply is on the stream.
		l.log.Debug("mcp sse: dropping a repeated request", "client", s.id, "id", id)
		return nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "/", bytes.NewReader(msg))
	if err != nil {
		l.log.Error("mcp sse: building the request failed", "error", err)
		return nil
	}
	req.Header = s.headers.Clone()
	req.RemoteAddr = s.remote
	// The POST that sent it names its caller (its principal, its
	// identity, its key, its address); a message forwarded by another
	// instance is its stream's. The worker sees the identity headers of
	// that caller's token, not the GET's.
	who := m.caller
	if who == nil {
		who = s.caller
	} else if hdr := who.IdentityHeaders(); hdr != nil || s.caller.IdentityHeaders() != nil {
		for k := range s.caller.IdentityHeaders() {
			delete(req.Header, k)
		}
		for k, v := range hdr {
			req.Header[k] = v
		}
	}
	req.Header["Accept"] = jsonContentType
	req.Header["Content-Type"] = jsonContentType
	delete(req.Header, "Mcp-Protocol-Version")
	delete(req.Header, "Mcp-Session-Id")
	if token := s.sessionToken(); token != "" {
		req.Header["Mcp-Session-Id"] = []string{token}
	}
	if trace != "" {
		req.Header["Traceparent"] = []string{trace}
		delete(req.Header, "Tracestate")
	}
	req.ContentLength = int64(len(msg))
	rec := wire.NewRecorder()
	l.endpoint.Serve(rec, req, &Origin{ClientID: s.id, Out: s.out, Listener: s.listener, Caller: who})
	if vals := rec.Header()["Mcp-Session-Id"]; len(vals) > 0 && vals[0] != "" {
		s.setSessionToken(vals[0])
	}
	body := bytes.TrimSpace(rec.Body.Bytes())
	if len(body) == 0 || rec.Status == http.StatusAccepted {
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

// Route is what the transport needs of a message to route it, read by
// the endpoint's decoder ([Endpoint.Route]) so that the transport and the
// endpoint never see two messages in the same bytes.
type Route struct {
	// JSON is false for a body that is not JSON at all: it is refused
	// before it is queued.
	JSON bool
	// ID is the id of a request as sent, when the endpoint answers it with
	// that id; "" for anything else (a notification, a response, a message
	// refused without an id).
	ID string
	// Cancel marks a well-formed notifications/cancelled notification.
	Cancel bool
	// Response marks a response (to a request a call sent the client).
	Response bool
}

// Origin is what the transport gives the endpoint with each message of a
// stream, in the open: the endpoint reads no context key.
//
//   - The stream's messages share its cancellation scope, "sse:<client
//     id>", whether or not they initialized a session: its calls are its
//     own to cancel (see callScope).
//   - A call's notifications and requests go out on the stream while it
//     runs, before its reply (send).
//   - A call reports the transport as metadata.TransportSSE, with no
//     session id.
type Origin struct {
	// ClientID names the stream (its scope is "sse:" + ClientID).
	ClientID string
	// Out writes on the stream.
	Out *wire.SSEWriter
	// Listener hears the stream's list changes and the resources it
	// subscribed to; nil when notifications are off.
	Listener *notify.Listener
	// Caller is who sent the message: the record of its POST (a message
	// another instance forwarded: the stream's GET's).
	Caller *caller.Caller
}

// Send writes one JSON-RPC message on the stream.
func (o *Origin) Send(msg []byte) error { return o.Out.Event(wire.EventMessage, msg) }

// ServeMessage serves POST …/message?azmcpcs=<client state>: the message
// goes to the client's stream, here or on its instance, and is answered 202.
func (l *Transport) ServeMessage(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header()["Allow"] = []string{http.MethodPost}
		l.plainError(w, http.StatusMethodNotAllowed, "Method not allowed")
		return
	}
	state := r.URL.Query().Get(QueryClientState)
	if state == "" {
		l.plainError(w, http.StatusBadRequest, "Missing service context. Please connect to the /sse endpoint to initiate your session.")
		return
	}
	clientID, instanceID, streamOwner, ok := l.OpenState(state)
	if !ok {
		l.plainError(w, http.StatusBadRequest, "Invalid client state. Please connect to the /sse endpoint to initiate your session.")
		return
	}
	who := caller.Of(r)
	if streamOwner != "" && (who.Principal() == "" || string(who.Owner()) != streamOwner) {
		// Another caller's stream: answered as a state that does not
		// open, so that nothing tells the caller it exists.
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
	// The one decoding of the message here: it refuses what is not JSON,
	// and its route travels with the message through the inbox.
	rt := l.endpoint.Route(body)
	if !rt.JSON {
		l.plainError(w, http.StatusBadRequest, "Bad Request: the body is not JSON.")
		return
	}
	if cap(body) > len(body)+len(body)/8 {
		body = bytes.Clone(body) // what waits in an inbox is what is counted
	}
	noSession := fmt.Sprintf("No active session for client '%s' and instance '%s'. Please connect to the /sse endpoint to initiate your session.", clientID, instanceID)
	switch l.enqueue(clientID, waiting{msg: body, route: rt, trace: r.Header.Get("Traceparent"), caller: who}) {
	case enqueued:
		l.accepted(w)
		return
	case inboxFull:
		l.plainError(w, http.StatusServiceUnavailable, "Service Unavailable: too many messages waiting for this stream")
		return
	case inboxBytesFull:
		l.plainError(w, http.StatusServiceUnavailable, "Service Unavailable: too many bytes waiting for this stream")
		return
	case hostBytesFull:
		l.plainError(w, http.StatusServiceUnavailable, "Service Unavailable: too many bytes waiting for the streams of this host")
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
		if errors.Is(err, ErrStreamFull) {
			l.plainError(w, http.StatusServiceUnavailable, "Service Unavailable: too many messages waiting for this stream")
			return
		}
		l.log.Error("mcp sse: forwarding a message failed", "client", clientID, "instance", instanceID, "error", err)
		l.plainError(w, http.StatusServiceUnavailable, "Service Unavailable: the message could not be forwarded")
		return
	}
	l.accepted(w)
}

func (l *Transport) accepted(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusAccepted)
	_, _ = io.WriteString(w, "Accepted")
}

// OpenState returns the client and instance of a client-state token, and
// the owner of its stream when a principal opened it ("" otherwise).
func (l *Transport) OpenState(token string) (clientID, instanceID, streamOwner string, ok bool) {
	plain, err := l.o.Sealer.Open(ClientStatePurpose, token)
	if err != nil {
		return "", "", "", false
	}
	clientID, rest, ok := strings.Cut(string(plain), "|")
	instanceID, streamOwner, _ = strings.Cut(rest, "|")
	if !ok || clientID == "" || instanceID == "" || strings.Contains(streamOwner, "|") {
		return "", "", "", false
	}
	return clientID, instanceID, streamOwner, true
}

type enqueueResult int

const (
	noStream enqueueResult = iota
	enqueued
	inboxFull
	inboxBytesFull
	hostBytesFull
)

// enqueue hands m to the local stream of clientID; its trace is the
// traceparent its request is to carry ("" for the stream's).
func (l *Transport) enqueue(clientID string, m waiting) enqueueResult {
	l.mu.Lock()
	s := l.streams[clientID]
	l.mu.Unlock()
	if s == nil {
		return noStream
	}
	if m.route.Cancel || m.route.Response {
		// The stream runs one request at a time: queued behind the call it
		// names, a cancellation (or the answer the call waits for) would
		// arrive only once that call is over. It is run at once instead, in
		// the stream's scope and context, so it can only reach a call of
		// this stream.
		l.run(s.ctx, s, m)
		return enqueued
	}
	n := int64(len(m.msg))
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closed:
		return noStream
	case len(s.inbox) >= l.o.Inbox:
		return inboxFull
	case s.queued+n > l.o.InboxBytes:
		return inboxBytesFull
	}
	if l.queued.Add(n) > l.o.HostInboxBytes {
		l.queued.Add(-n)
		return hostBytesFull
	}
	s.inbox = append(s.inbox, m)
	s.queued += n
	select {
	case s.wake <- struct{}{}:
	default:
	}
	return enqueued
}

// Delivery is what became of a message handed to [Transport.Deliver]. It
// is the stream's side of the backplane's outcome of a forwarded message,
// one to one (the host maps them where it delivers, host.legacy.deliver):
// Delivered is backplane.Taken, DeliveryFull backplane.Full and
// DeliveryGone backplane.Gone. This package does not import the backplane.
type Delivery int

// Deliveries.
const (
	// Delivered: the stream took the message; its reply will come on the
	// stream.
	Delivered Delivery = iota + 1
	// DeliveryFull: the stream's inbox (or the host's) has no room now; the
	// message may be offered again later.
	DeliveryFull
	// DeliveryGone: no such stream here (it ended, or it never was on this
	// instance); the message can never be delivered.
	DeliveryGone
)

func (d Delivery) String() string {
	switch d {
	case Delivered:
		return "delivered"
	case DeliveryFull:
		return "full"
	case DeliveryGone:
		return "gone"
	}
	return fmt.Sprintf("Delivery(%d)", int(d))
}

// Deliver hands a message that another instance forwarded to the local
// stream of clientID and reports what became of it; the caller keeps a
// message the stream did not take.
func (l *Transport) Deliver(clientID string, message []byte) Delivery {
	return l.DeliverTraced(clientID, message, "")
}

// DeliverTraced is Deliver of a message whose request is to carry the W3C
// traceparent trace (the backplane hop's, telemetry on) instead of the
// stream's.
func (l *Transport) DeliverTraced(clientID string, message []byte, trace string) Delivery {
	switch l.enqueue(clientID, waiting{msg: message, route: l.endpoint.Route(message), trace: trace}) {
	case enqueued:
		return Delivered
	case inboxFull, inboxBytesFull, hostBytesFull:
		return DeliveryFull
	}
	return DeliveryGone
}
