package invoke

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"

	"github.com/funcmcp/funcmcp/host/internal/auth"
	"github.com/funcmcp/funcmcp/host/internal/ids"
	"github.com/funcmcp/funcmcp/internal/bufpool"
	"github.com/funcmcp/funcmcp/internal/jsonx"
	"github.com/funcmcp/funcmcp/metadata"
)

// maxResponseBytes bounds a worker's invocation response.
const maxResponseBytes = 64 << 20

// Function is what an invocation calls: the function (POST /{Name}), the
// name of its trigger binding (the invocation's Data key) and the tool it
// serves.
type Function struct {
	Name    string
	DataKey string
	Tool    string // the tool, resource URI or prompt name (for messages)
	// Method, when set, is sent in metadata.HeaderMethod: a request that is
	// not an invocation (completion/complete).
	Method string
	// Encoded says the caller takes a direct reply's Result as it is
	// encoded (a resource, a prompt, a completion: [Reply.Encoded]) rather
	// than as a tool result.
	Encoded bool
}

// Options configures [NewClient].
type Options struct {
	// HostVersion is sent in X-Azure-Functions-HostVersion and User-Agent
	// Azure-Functions-Host/<version>.
	HostVersion string
	// Timeout bounds one call, reply included; 0 means none.
	Timeout time.Duration
	// RestartWait bounds how long a call that finds no worker (it is being
	// started or restarted) waits for one, within Timeout; 0 means no wait.
	RestartWait time.Duration
	// MaxCalls is the number of calls that may run at once: as many idle
	// connections to the worker are kept.
	MaxCalls int
	// Unhealthy, when set and it returns a reason, makes calls fail at once
	// (waiting calls too, once [Client.Wake] is called).
	Unhealthy func() string
	// Trace, when set, wraps every invocation in a span and sends its
	// trace context to the worker (telemetry on); nil costs nothing.
	Trace Trace
	// Local, when set, is the worker's custom-handler HTTP handler in this
	// process: every call is served by it directly, whatever base URL the
	// worker has (see local.go).
	Local http.Handler
}

// Client sends invocations to the worker, never twice (a tool call is not
// idempotent): to an http:// worker over its own kept-alive HTTP/1.1
// connections (see hop), to any other URL through an azcore pipeline with no
// retries. Both send the same headers. It is safe for concurrent use.
type Client struct {
	pl      runtime.Pipeline
	hop     *hop   // calls to an http:// worker
	version string // of the host, for the hop's headers
	// base is the ready worker's base URL: nil while no worker is expected
	// (calls fail at once), "" while one starts or restarts (calls wait).
	base    atomic.Pointer[string]
	timeout time.Duration // of one call; 0 means none
	client  *http.Client
	// restartWait bounds how long a call that could not reach the worker
	// waits for a restarted one before it fails; 0 means no wait.
	restartWait time.Duration
	// unhealthy, when it returns a reason, makes calls fail at once.
	unhealthy func() string
	trace     Trace
	local     http.Handler // the in-process worker, nil: none

	mu      sync.Mutex
	changed chan struct{} // closed (and replaced) when base or health changes
}

type invocationIDKey struct{}

// hostHeadersPolicy adds the custom-handler protocol headers to every call.
type hostHeadersPolicy struct {
	version   string
	userAgent string
}

func (p *hostHeadersPolicy) Do(req *policy.Request) (*http.Response, error) {
	h := req.Raw().Header
	id, _ := req.Raw().Context().Value(invocationIDKey{}).(string)
	if id == "" {
		id = ids.GUID()
	}
	h.Set(metadata.HeaderInvocationID, id)
	h.Set(metadata.HeaderHostVersion, p.version)
	h["Accept"] = []string{acceptReply}
	h.Set("User-Agent", p.userAgent)
	return req.Next()
}

// NewClient makes the worker client. It keeps up to o.MaxCalls connections
// to the worker alive between calls, one per call that may run at once, so
// that no call under full load pays for a new connection. It calls no
// worker until [Client.SetWorker] names one.
func NewClient(o *Options) *Client {
	hostVersion, maxCalls := o.HostVersion, o.MaxCalls
	transport := &http.Transport{
		Proxy:               nil, // the worker is local: never go through a proxy
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        maxCalls,
		MaxIdleConnsPerHost: maxCalls,
		IdleConnTimeout:     90 * time.Second,
	}
	client := &http.Client{
		Transport: transport,
		// A worker's redirect is a failed call: following it would re-post
		// the client's arguments and headers elsewhere and return a foreign
		// reply as the tool's result.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	pl := runtime.NewPipeline("funchost", hostVersion, runtime.PipelineOptions{
		PerCall: []policy.Policy{&hostHeadersPolicy{version: hostVersion, userAgent: "Azure-Functions-Host/" + hostVersion}, offerHeadersPolicy{}},
	}, &policy.ClientOptions{
		Retry:     policy.RetryOptions{MaxRetries: -1}, // one try: tools are not idempotent
		Telemetry: policy.TelemetryOptions{Disabled: true},
		Transport: client,
	})
	return &Client{pl: pl, hop: &hop{dialer: net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}, maxIdle: maxCalls},
		version: hostVersion, timeout: o.Timeout, client: client, restartWait: o.RestartWait, unhealthy: o.Unhealthy,
		trace: o.Trace, local: o.Local, changed: make(chan struct{})}
}

// SetWorker sends the calls from now on to the worker at the base URL url,
// which is ready: calls waiting for a worker go to it at once.
func (inv *Client) SetWorker(url string) {
	url = strings.TrimRight(url, "/")
	inv.base.Store(&url)
	inv.Wake()
}

// ExpectWorker says a worker is being started: until [Client.SetWorker]
// names it, calls wait for it (within the restart wait and the call
// timeout) instead of failing because there is none.
func (inv *Client) ExpectWorker() {
	empty := ""
	if inv.base.CompareAndSwap(nil, &empty) {
		inv.Wake()
	}
}

// Wake makes waiting calls look again at the worker and its health: the
// host calls it when the worker became unhealthy, so that they fail at once.
func (inv *Client) Wake() {
	inv.mu.Lock()
	close(inv.changed)
	inv.changed = make(chan struct{})
	inv.mu.Unlock()
}

// changes returns the channel closed at the next change of the worker.
func (inv *Client) changes() <-chan struct{} {
	inv.mu.Lock()
	defer inv.mu.Unlock()
	return inv.changed
}

// Restarting reports whether no worker is ready while one is expected (it
// starts or restarts): calls made now wait for it.
func (inv *Client) Restarting() bool {
	b := inv.base.Load()
	return b != nil && *b == ""
}

// Close closes the idle connections to the worker. The client stays
// usable: a later call opens a new one.
func (inv *Client) Close() {
	inv.client.CloseIdleConnections()
	inv.hop.closeIdle()
}

// WorkerDown forgets a worker that exited: calls wait for the next one rather
// than reuse connections to the dead one.
func (inv *Client) WorkerDown(url string) {
	url = strings.TrimRight(url, "/")
	if cur := inv.base.Load(); cur != nil && *cur == url {
		empty := ""
		if inv.base.CompareAndSwap(cur, &empty) {
			inv.Wake()
		}
	}
	inv.Close()
}

// Error is why an invocation failed; the reason goes to the host log,
// the client sees only that the call failed. Reach it with errors.As.
type Error struct {
	Status int // the HTTP status, 0 when there was none
	Err    error
	// Body is the start of a non-2xx answer (at most maxErrorBody bytes):
	// a funcmcp worker explains a failed resource, prompt or completion
	// request there (metadata.FailureReply).
	Body []byte
}

// maxErrorBody bounds the part of a non-2xx answer kept in an Error.
const maxErrorBody = 64 << 10

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Invoke POSTs body to /{function} and decodes the reply once. A call that
// finds no ready worker (it starts or restarts) waits for one, and a call
// that never reached the worker (its connection was refused: the worker
// died and is being restarted) is sent again to the new one; both within
// restartWait and the call timeout.
//
// offer, when not nil, is the invocation's call channel ([Hub.Open]): its
// headers go with the POST.
func (inv *Client) Invoke(ctx context.Context, f *Function, id string, body []byte, offer *Offer) (*Reply, error) {
	return inv.Send(ctx, f, id, &Request{body: body}, offer)
}

// Request is what [Client.Send] sends: an invocation's body, or a tool
// call the worker's handler in this process runs as it is
// ([Client.ToolRequest]).
type Request struct {
	body  []byte
	local *metadata.LocalToolCall
	tools metadata.LocalToolCaller
	// pooled says body is a buffer of bodies, given back once sent over
	// the hop, which writes it before it reads the answer; not when held:
	// sent through the pipeline (net/http may still write it after its
	// answer came) or to a handler in process (which may keep the request).
	pooled, held bool
}

// bodies are the buffers of the tool calls' bodies ([Client.ToolRequest]).
var bodies = bufpool.Pool{Max: 64 << 10}

// release gives back the request's body, once no try may send it again.
func (r *Request) release() {
	if r.pooled && !r.held {
		bodies.Put(r.body)
	}
	r.body, r.pooled = nil, false
}

// Send is [Client.Invoke] of req; req may not be sent again.
func (inv *Client) Send(ctx context.Context, f *Function, id string, req *Request, offer *Offer) (*Reply, error) {
	defer req.release()
	ctx = withOffer(context.WithValue(ctx, invocationIDKey{}, id), offer)
	if inv.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, inv.timeout, errCallTimeout)
		defer cancel()
	}
	var (
		waitUntil time.Time
		old       string // a worker that refused the call
		refused   error  // how it refused
	)
	for {
		base, err := inv.worker(ctx, old, &waitUntil)
		if err != nil {
			if refused != nil {
				return nil, refused
			}
			return nil, err
		}
		reply, err := inv.traced(ctx, f.Name, func(ctx context.Context) (*Reply, error) { return inv.post(ctx, base, f, req) })
		if err == nil || !neverSent(err) || inv.restartWait <= 0 {
			return reply, err
		}
		old, refused = base, err
	}
}

// worker returns the base URL of the ready worker other than old, waiting
// for one (until *until, set on the first wait to restartWait from now) while
// one is expected.
func (inv *Client) worker(ctx context.Context, old string, until *time.Time) (string, error) {
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		changed := inv.changes() // before the checks: no change is missed
		if inv.unhealthy != nil {
			if reason := inv.unhealthy(); reason != "" {
				return "", &Error{Err: fmt.Errorf("the worker is unhealthy: %s", reason)}
			}
		}
		b := inv.base.Load()
		if b == nil {
			return "", &Error{Err: errors.New("the worker is not started")}
		}
		if *b != "" && *b != old {
			return *b, nil
		}
		if inv.restartWait <= 0 {
			return "", &Error{Err: errors.New("the worker is restarting")}
		}
		if until.IsZero() {
			*until = time.Now().Add(inv.restartWait)
		}
		if timer == nil {
			timer = time.NewTimer(time.Until(*until))
		}
		select {
		case <-changed:
		case <-ctx.Done():
			if errors.Is(context.Cause(ctx), errCallTimeout) {
				return "", &Error{Err: fmt.Errorf("no worker was ready within the call timeout (%v)", inv.timeout)}
			}
			return "", &Error{Err: fmt.Errorf("waiting for the worker: %w", context.Cause(ctx))}
		case <-timer.C:
			return "", &Error{Err: fmt.Errorf("no worker was ready within %v", inv.restartWait)}
		}
	}
}

// neverSent reports whether a call failed before the worker got it: no
// connection could be made.
func neverSent(err error) bool {
	if errors.Is(err, syscall.ECONNREFUSED) {
		return true
	}
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// post sends one invocation to the worker at base.
func (inv *Client) post(ctx context.Context, base string, f *Function, in *Request) (*Reply, error) {
	path := "/" + f.Name // function names are [A-Za-z0-9_-]: nothing to escape
	if in.local != nil {
		return inv.callLocal(ctx, path, f, in)
	}
	body := in.body
	if addr := hopAddr(base); addr != "" && inv.local == nil {
		return inv.postHop(ctx, addr, path, f, body)
	}
	in.held = true
	if inv.local != nil {
		return inv.postLocal(ctx, path, f, body)
	}
	req, err := runtime.NewRequest(ctx, http.MethodPost, base+path)
	if err != nil {
		return nil, &Error{Err: fmt.Errorf("building the request: %w", err)}
	}
	if err := req.SetBody(streaming.NopCloser(bytes.NewReader(body)), "application/json; charset=utf-8"); err != nil {
		return nil, &Error{Err: fmt.Errorf("building the request: %w", err)}
	}
	if f.Method != "" {
		req.Raw().Header.Set(metadata.HeaderMethod, f.Method)
	}
	runtime.SkipBodyDownload(req)
	resp, err := inv.pl.Do(req)
	if err != nil {
		return nil, inv.failed(ctx, path, 0, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
	if err != nil {
		return nil, inv.failed(ctx, path, resp.StatusCode, err)
	}
	return answered(f, resp.StatusCode, resp.Status, resp.Header.Get("Content-Type"), data)
}

// postHop is post over the hop: the same request headers as the pipeline
// sends, the same answer handling.
func (inv *Client) postHop(ctx context.Context, addr, path string, f *Function, body []byte) (*Reply, error) {
	ans, err := inv.hop.do(ctx, &hopRequest{addr: addr, path: path, header: inv.requestHeader(ctx, f), body: body}, maxResponseBytes)
	if err != nil {
		return nil, inv.failed(ctx, path, 0, err)
	}
	return answered(f, ans.status, ans.statusText, ans.contentType, ans.body)
}

// requestHeader is the header of an invocation sent by the hop or in
// process: the pipeline's headers, the trace context and the call
// channel's offer.
func (inv *Client) requestHeader(ctx context.Context, f *Function) http.Header {
	id, _ := ctx.Value(invocationIDKey{}).(string)
	if id == "" {
		id = ids.GUID()
	}
	h := http.Header{
		"Content-Type":              {"application/json; charset=utf-8"},
		"Accept":                    {acceptReply},
		"User-Agent":                {"Azure-Functions-Host/" + inv.version},
		metadata.HeaderInvocationID: {id},
		metadata.HeaderHostVersion:  {inv.version},
	}
	if f.Method != "" {
		h.Set(metadata.HeaderMethod, f.Method)
	}
	addTraceHeaders(ctx, h)
	if o, ok := ctx.Value(offerKey{}).(*Offer); ok {
		for k, v := range o.header {
			h[k] = v
		}
	}
	return h
}

// failed is the error of a call that got no complete answer (status 0:
// none at all).
func (inv *Client) failed(ctx context.Context, path string, status int, err error) error {
	if errors.Is(context.Cause(ctx), errCallTimeout) {
		if status == 0 {
			return &Error{Err: fmt.Errorf("POST %s: the worker did not answer within %v", path, inv.timeout)}
		}
		return &Error{Status: status, Err: fmt.Errorf("POST %s: the worker did not finish its answer within %v", path, inv.timeout)}
	}
	if status == 0 {
		return &Error{Err: fmt.Errorf("POST %s: %w", path, err)}
	}
	return &Error{Status: status, Err: fmt.Errorf("POST %s: reading the answer: %w", path, err)}
}

// answered checks a worker's complete answer (at most maxResponseBytes+1
// bytes of its body) to a call of f and decodes it once.
func answered(f *Function, status int, statusText, contentType string, data []byte) (*Reply, error) {
	path := "/" + f.Name
	if status < 200 || status > 299 {
		return nil, &Error{Status: status, Err: fmt.Errorf("POST %s: the worker answered %s%s", path, statusText, snippet(data)),
			Body: data[:min(len(data), maxErrorBody)]}
	}
	if len(data) > maxResponseBytes {
		return nil, &Error{Status: status, Err: fmt.Errorf("POST %s: the answer is larger than %d bytes", path, maxResponseBytes)}
	}
	out, err := decodeReply(contentType, data, f.Encoded)
	if err != nil {
		return nil, &Error{Status: status, Err: fmt.Errorf("POST %s: %w", path, err)}
	}
	return out, nil
}

var errCallTimeout = errors.New("tool call timed out")

// snippet quotes the start of a body for a log line.
func snippet(data []byte) string {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return ""
	}
	const max = 200
	if len(data) > max {
		return fmt.Sprintf(" (body: %q…)", data[:max])
	}
	return fmt.Sprintf(" (body: %q)", data)
}

// Call is what the host knows of a tools/call and passes on to the worker.
type Call struct {
	Arguments  map[string]json.RawMessage
	SessionID  string               // the client's Mcp-Session-Id, "" for none
	ClientInfo *metadata.ClientInfo // nil when unknown
	Headers    http.Header          // the client's request headers; the function key is left out
	Transport  string               // metadata.TransportStreamableHTTP ("" too) or metadata.TransportSSE
	// Encoded has headers of Headers already encoded, nil for none.
	Encoded HeaderEncoder
}

// transport is the call's transport, TransportStreamableHTTP when unsaid.
func (in *Call) transport() string {
	if in.Transport == "" {
		return metadata.TransportStreamableHTTP
	}
	return in.Transport
}

// HeaderEncoder gives client headers already encoded for the invocation: a
// header whose value is worked out once (the caller's identity headers, per
// access token) is encoded once too, and spliced into every invocation.
type HeaderEncoder interface {
	// EncodedHeader returns the member of the headers object for the
	// header name with value, `"name":"value"` as
	// metadata.AppendJSONString writes both, when it holds that header
	// with exactly that value.
	EncodedHeader(name, value string) (member string, ok bool)
}

// Body builds the custom-handler request:
//
//	{"Data":{"<trigger name>":<context>},"Metadata":{"mcptoolargs":{…},"mcpsessionid":…,"sys":{…}}}
//
// The context is sent as a JSON object. The Functions host sends it
// string-encoded (the trigger parameter of an out-of-process worker is a
// string); the worker SDK accepts both. The headers are those
// ForwardedHeaders gives, written in sorted order with the ones in.Encoded
// holds spliced in as they were encoded (the caller's identity headers, once
// per token); the buffer is sized from what is written.
func Body(f *Function, in *Call, now time.Time) ([]byte, error) {
	return appendBody(nil, f, in, now)
}

// appendBody is Body written into dst (nil: a buffer of its own, sized
// from what is written).
func appendBody(dst []byte, f *Function, in *Call, now time.Time) ([]byte, error) {
	transport := in.transport()
	// The context as metadata encodes it, with its transport (the last
	// member) written here: the headers go straight into the body.
	tc := metadata.ToolInvocationContext{
		Name:       f.Tool,
		Arguments:  in.Arguments,
		SessionID:  in.SessionID,
		ClientInfo: in.ClientInfo,
	}
	buf := dst
	if buf == nil {
		buf = make([]byte, 0, bodySize(f, in))
	}
	buf = append(buf, `{"Data":{`...)
	buf = metadata.AppendJSONString(buf, f.DataKey)
	buf = append(buf, ':')
	buf, err := tc.AppendJSON(buf)
	if err != nil {
		return nil, fmt.Errorf("encoding the tool invocation context: %w", err)
	}
	buf = append(buf[:len(buf)-1], `,"transport":{"name":`...) // reopened
	buf = metadata.AppendJSONString(buf, transport)
	if in.SessionID != "" {
		buf = append(buf, `,"sessionId":`...)
		buf = metadata.AppendJSONString(buf, in.SessionID)
	}
	if len(in.Headers) > 0 {
		buf = append(buf, `,"properties":{`...)
		buf = appendHeaders(buf, in.Headers, in.Encoded)
		buf = append(buf, '}')
	}
	buf = append(buf, "}}"...)
	buf = append(buf, `},"Metadata":{"mcptoolargs":{`...)
	first := true
	for k, v := range in.Arguments {
		if !first {
			buf = append(buf, ',')
		}
		first = false
		buf = metadata.AppendJSONString(buf, k)
		buf = append(buf, ':')
		buf = metadata.AppendJSONString(buf, argumentText(v))
	}
	buf = append(buf, '}')
	if in.SessionID != "" {
		buf = append(buf, `,"mcpsessionid":`...)
		buf = metadata.AppendJSONString(buf, in.SessionID)
	}
	buf = append(buf, `,"sys":{"MethodName":`...)
	buf = metadata.AppendJSONString(buf, f.Name)
	buf = append(buf, `,"UtcNow":"`...)
	buf = now.UTC().AppendFormat(buf, time.RFC3339Nano)
	buf = append(buf, `","RandGuid":"`...)
	buf = ids.AppendGUID(buf)
	buf = append(buf, `"}}}`...)
	return buf, nil
}

// bodySize is room for the body Body writes: every text it copies, the
// arguments twice (the context, and mcptoolargs with some room for
// escaping), and what it adds around them.
func bodySize(f *Function, in *Call) int {
	n := 384 + len(f.DataKey) + len(f.Tool) + len(f.Name) + 3*len(in.SessionID) + len(in.transport())
	for k, v := range in.Arguments {
		n += 2*len(k) + 2*len(v) + len(v)/4 + 12
	}
	if ci := in.ClientInfo; ci != nil {
		n += len(ci.Name) + len(ci.Title) + len(ci.Version) + 48
	}
	n += headersSize(in.Headers)
	return n + n/32
}

// headersSize is about the room the headers take in the invocation
// context: names and values, with their quotes and separators.
func headersSize(h http.Header) int {
	n := 0
	for k, v := range h {
		n += len(k) + 6
		for _, s := range v {
			n += len(s) + 1
		}
	}
	return n
}

// appendHeaders appends "headers":{…} of transport.properties: the headers
// ForwardedHeaders gives, as metadata.Marshal writes them (names sorted),
// with a header enc holds spliced in as it was encoded. It appends nothing
// when every header is left out.
func appendHeaders(dst []byte, h http.Header, enc HeaderEncoder) []byte {
	names := make([]string, 0, len(h))
	for k := range h {
		if !isSecretHeader(k) { // the function key never leaves the host
			names = append(names, k)
		}
	}
	if len(names) == 0 {
		return dst
	}
	slices.Sort(names)
	dst = append(dst, `"headers":{`...)
	for i, k := range names {
		if i > 0 {
			dst = append(dst, ',')
		}
		v := h[k]
		if len(v) == 1 && enc != nil {
			if member, ok := enc.EncodedHeader(k, v[0]); ok {
				dst = append(dst, member...)
				continue
			}
		}
		dst = metadata.AppendJSONString(dst, k)
		dst = append(dst, ':')
		dst = metadata.AppendJSONString(dst, strings.Join(v, ","))
	}
	return append(dst, '}')
}

// ForwardedHeaders are the client's request headers as the invocation
// context carries them (transport.properties.headers): values joined with
// ",", the function key left out; nil when there are none.
func ForwardedHeaders(h http.Header) map[string]string {
	if len(h) == 0 {
		return nil
	}
	hs := make(map[string]string, len(h))
	for k, v := range h {
		if isSecretHeader(k) {
			continue // the function key never leaves the host
		}
		hs[k] = strings.Join(v, ",")
	}
	return hs
}

// isSecretHeader reports whether a client header carries the host's own
// credentials, which are not forwarded to the worker.
func isSecretHeader(name string) bool {
	return strings.EqualFold(name, auth.HeaderFunctionsKey)
}

// argumentText is an argument as the MCP extension puts it in mcptoolargs:
// a JSON string's text, otherwise the raw JSON text.
func argumentText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if s, ok := jsonx.StringValue(raw); ok { // as encoding/json decodes it
		return s
	}
	return string(raw)
}

// ContextBody builds the custom-handler request of a resource, prompt or
// completion request: {"Data":{"<trigger name>":<context>},"Metadata":{"sys":{…}}},
// the context (an encoded JSON object) sent as it is.
func ContextBody(f *Function, context []byte, now time.Time) []byte {
	buf := make([]byte, 0, len(context)+256)
	buf = append(buf, `{"Data":{`...)
	buf = metadata.AppendJSONString(buf, f.DataKey)
	buf = append(buf, ':')
	buf = append(buf, context...)
	buf = append(buf, `},"Metadata":{"sys":{"MethodName":`...)
	buf = metadata.AppendJSONString(buf, f.Name)
	buf = append(buf, `,"UtcNow":"`...)
	buf = now.UTC().AppendFormat(buf, time.RFC3339Nano)
	buf = append(buf, `","RandGuid":"`...)
	buf = ids.AppendGUID(buf)
	return append(buf, `"}}}`...)
}
