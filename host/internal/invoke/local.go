package invoke

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/funcmcp/funcmcp/binding"
	"github.com/funcmcp/funcmcp/metadata"
)

// postLocal sends one invocation to the worker's handler in this process:
// the request the hop would send, served on the calling goroutine, its
// answer read as the hop's is. No connection is made.
func (inv *Client) postLocal(ctx context.Context, path string, f *Function, body []byte) (reply *Reply, err error) {
	// The call's context comes from the client's request, routed by the
	// host's chi router; a chi router in the worker that found its route
	// context would route this request as the client's (its method, its
	// path): the worker's request is routed afresh.
	ctx = withChannel(context.WithValue(ctx, chi.RouteCtxKey, (*chi.Context)(nil)))
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://worker"+path, bytes.NewReader(body))
	if err != nil {
		return nil, &Error{Err: fmt.Errorf("building the request: %w", err)}
	}
	req.Header = inv.localHeader(ctx, f)
	req.Host = "worker"
	req.RemoteAddr = "127.0.0.1:0"
	w := &localWriter{header: http.Header{}}
	defer func() {
		// An HTTP server would end the one request; in process, the panic
		// ends the call (a funcmcp worker recovers a tool's own panics).
		if p := recover(); p != nil {
			reply, err = nil, &Error{Err: fmt.Errorf("POST %s: the worker's handler panicked: %v", path, p)}
		}
	}()
	inv.local.ServeHTTP(w, req)
	if err := context.Cause(ctx); err != nil && w.status == 0 {
		return nil, inv.failed(ctx, path, 0, err)
	}
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return answered(f, w.status, fmt.Sprintf("%d %s", w.status, http.StatusText(w.status)), w.header.Get("Content-Type"), w.body.Bytes())
}

// withChannel returns ctx with the call channel back (progress, logs,
// requests to the client) of the invocation's offer: the hub's handler,
// reached in process too.
func withChannel(ctx context.Context) context.Context {
	if o, ok := ctx.Value(offerKey{}).(*Offer); ok && o != nil && o.hub != nil {
		return metadata.WithChannel(ctx, hubTransport{o.hub})
	}
	return ctx
}

// localHeader is the header of an invocation served in process: the
// hop's (see requestHeader), which the hop writes as it is, in the
// canonical spelling a handler's Header.Get looks up.
func (inv *Client) localHeader(ctx context.Context, f *Function) http.Header {
	h := inv.requestHeader(ctx, f)
	for k, v := range h {
		if ck := http.CanonicalHeaderKey(k); ck != k {
			delete(h, k)
			h[ck] = v
		}
	}
	return h
}

// ToolRequest is the request of the tool call in. When the worker's handler
// in this process runs tool calls itself ([metadata.LocalTools]), it is
// the call with the context the worker would decode from [Body]'s
// request, made with no encoding; otherwise it is Body's request.
func (inv *Client) ToolRequest(f *Function, in *Call, now time.Time) (*Request, error) {
	tools := metadata.LocalTools(inv.local)
	if tools == nil {
		body, err := appendBody(bodies.Get(bodySize(f, in)), f, in, now)
		if err != nil {
			return nil, err
		}
		return &Request{body: body, pooled: true}, nil
	}
	c, err := localContext(f, in)
	if err != nil {
		return nil, fmt.Errorf("encoding the tool invocation context: %w", err)
	}
	return &Request{local: &metadata.LocalToolCall{Function: f.Name, Context: c}, tools: tools}, nil
}

// localContext is the tool invocation context Body writes, as the worker
// decodes it: the arguments object as Body writes it (keys sorted, values
// compacted) and each argument a slice of it, the headers as Body writes
// them (decoded when the worker first reads one), the client info a copy
// (the worker's code may change what it is given).
func localContext(f *Function, in *Call) (*metadata.ToolInvocationContext, error) {
	c := &metadata.ToolInvocationContext{Name: f.Tool, SessionID: in.SessionID,
		Transport: &metadata.Transport{Name: in.transport(), SessionID: in.SessionID}}
	if in.ClientInfo != nil {
		ci := *in.ClientInfo
		c.ClientInfo = &ci
	}
	if len(in.Arguments) > 0 {
		n := 2
		for k, v := range in.Arguments {
			n += len(k) + len(v) + 4
		}
		raw, err := metadata.AppendArguments(make([]byte, 0, n), in.Arguments)
		if err != nil {
			return nil, err
		}
		args, ok := metadata.ScanArguments(raw)
		if !ok {
			return nil, fmt.Errorf("the arguments written are not an object: %s", snippet(raw))
		}
		c.Arguments, c.RawArguments = args, raw
	}
	if len(in.Headers) > 0 {
		p := &metadata.TransportProperties{}
		n := len(`"headers":{}`) + headersSize(in.Headers)
		if member := appendHeaders(make([]byte, 0, n+n/16), in.Headers, in.Encoded); len(member) > 0 {
			// "headers":{…}, held as it is
			var err error
			if p.Headers, err = metadata.HeadersOf(member[len(`"headers":`):]); err != nil {
				return nil, fmt.Errorf("the headers written are not an object of strings: %w", err)
			}
		}
		c.Transport.Properties = p
	}
	return c, nil
}

// callLocal runs a tool call in the worker's handler in this process
// (in.tools): the request post would send, with no encoding either way.
// Its reply is checked as a direct reply is, and its other answers are
// read as post reads them.
func (inv *Client) callLocal(ctx context.Context, path string, f *Function, in *Request) (reply *Reply, err error) {
	ctx = withChannel(ctx)
	call := *in.local // its header is this try's
	call.Header = inv.localHeader(ctx, f)
	defer func() {
		// As in postLocal: the panic ends the call (a funcmcp worker
		// recovers a tool's own panics).
		if p := recover(); p != nil {
			reply, err = nil, &Error{Err: fmt.Errorf("POST %s: the worker's handler panicked: %v", path, p)}
		}
	}()
	d, status, body := in.tools.CallToolLocal(ctx, &call)
	if d == nil {
		return answered(f, status, fmt.Sprintf("%d %s", status, http.StatusText(status)), "application/json", body)
	}
	if directSize(d) > maxResponseBytes {
		return nil, &Error{Status: http.StatusOK, Err: fmt.Errorf("POST %s: the answer is larger than %d bytes", path, maxResponseBytes)}
	}
	dec, err := binding.DirectResult(d)
	if err != nil {
		return nil, &Error{Status: http.StatusOK, Err: fmt.Errorf("POST %s: %w", path, err)}
	}
	return &Reply{Logs: d.Logs, direct: dec}, nil
}

// directSize is about the size of d encoded, for the bound on an answer.
func directSize(d *metadata.DirectReply) int {
	n := 0
	for _, l := range d.Logs {
		n += len(l)
	}
	if r := d.Result; r != nil {
		n += len(r.StructuredContent) + len(r.Meta)
		for _, c := range r.Content {
			n += len(c)
		}
	}
	return n
}

// localWriter is the http.ResponseWriter of an in-process invocation: it
// keeps the status, the header and at most maxResponseBytes+1 bytes of the
// body (answered refuses a larger one).
type localWriter struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (w *localWriter) Header() http.Header { return w.header }

func (w *localWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}

func (w *localWriter) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	if room := maxResponseBytes + 1 - w.body.Len(); room > 0 {
		w.body.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// hubTransport carries the worker's call channel requests to the hub's
// handler in this process: the hub answers them as over its listener.
type hubTransport struct{ hub *Hub }

func (t hubTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		defer r.Body.Close()
	}
	w := &localWriter{header: http.Header{}}
	t.hub.serve(w, r)
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return &http.Response{
		Status: fmt.Sprintf("%d %s", w.status, http.StatusText(w.status)), StatusCode: w.status,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: w.header, Body: io.NopCloser(bytes.NewReader(w.body.Bytes())), ContentLength: int64(w.body.Len()),
		Request: r,
	}, nil
}
