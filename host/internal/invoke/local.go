package invoke

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"

	"github.com/go-chi/chi/v5"

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
	ctx = context.WithValue(ctx, chi.RouteCtxKey, (*chi.Context)(nil))
	// The call channel back (progress, logs, requests to the client) is
	// the hub's handler, reached in process too.
	if o, ok := ctx.Value(offerKey{}).(*Offer); ok && o != nil && o.hub != nil {
		ctx = metadata.WithChannel(ctx, hubTransport{o.hub})
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://worker"+path, bytes.NewReader(body))
	if err != nil {
		return nil, &Error{Err: fmt.Errorf("building the request: %w", err)}
	}
	// The hop writes its header as it is; a handler reads it through
	// Header.Get, which looks up the canonical spelling.
	for k, v := range inv.requestHeader(ctx, f) {
		req.Header[http.CanonicalHeaderKey(k)] = v
	}
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
