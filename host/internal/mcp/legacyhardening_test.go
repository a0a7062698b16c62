package mcp

import (
	"context"
	"encoding/json"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/host/internal/mcp/wire"
	"github.com/funcmcp/funcmcp/host/internal/mcp/wire/wiretest"
	"github.com/funcmcp/funcmcp/metadata"
)

// TestLegacySSESmuggledMembers: a message whose members repeat a name in
// another case is one message for the router and the handler alike: it is
// queued like any request and answered -32600 on the stream, and nothing is
// called. (The router once peeked case-insensitively and ran such a
// tools/call at once, outside the stream, as a cancellation.)
func TestLegacySSESmuggledMembers(t *testing.T) {
	s := startSSEServer(t, &LegacySSEOptions{InstanceID: "inst1"})
	called := make(chan string, 4)
	s.tools.mu.Lock()
	s.tools.call = func(_ context.Context, req *CallRequest) (*metadata.CallToolResult, error) {
		called <- req.Name
		return &metadata.CallToolResult{Content: []json.RawMessage{metadata.TextContent("ran")}}, nil
	}
	s.tools.mu.Unlock()
	st := openStream(t, s.URL, "", nil)
	for _, tc := range []struct{ body, message string }{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","METHOD":"notifications/cancelled","params":{"name":"echo","arguments":{"text":"x"},"requestId":1}}`,
			`Invalid Request: the members "method" and "METHOD" differ only in case.`},
		{`{"jsonrpc":"2.0","id":10,"ID":"x","method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`,
			`Invalid Request: the members "id" and "ID" differ only in case.`},
	} {
		code, _ := post(t, st.Endpoint, tc.body)
		require.Equal(t, http.StatusAccepted, code)
		ev := next(t, st)
		assert.JSONEq(t, errorBody("null", CodeInvalidRequest, tc.message), ev.Data)
	}
	// id 10 was refused, not run: a well-formed id 10 runs.
	code, _ := post(t, st.Endpoint, `{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`)
	require.Equal(t, http.StatusAccepted, code)
	ev := next(t, st)
	assert.Equal(t, "10", gjson(t, ev.Data, "id"))
	assert.Equal(t, "echo", <-called)
	assert.Empty(t, called, "the refused messages called nothing")
}

// TestLegacySSEInboxBudgets: what waits for a stream is bounded in bytes,
// per stream and per host, not only in messages.
func TestLegacySSEInboxBudgets(t *testing.T) {
	const big = 64 << 10
	s := startSSEServer(t, &LegacySSEOptions{InstanceID: "inst1", InboxBytes: 4 * big, HostInboxBytes: 6 * big})
	release := make(chan struct{})
	started := make(chan struct{}, 4)
	s.tools.mu.Lock()
	s.tools.call = func(ctx context.Context, _ *CallRequest) (*metadata.CallToolResult, error) {
		started <- struct{}{}
		select {
		case <-release:
		case <-ctx.Done():
		}
		return &metadata.CallToolResult{Content: []json.RawMessage{metadata.TextContent("done")}}, nil
	}
	s.tools.mu.Unlock()
	defer close(release)

	padded := func(id int) string {
		return `{"jsonrpc":"2.0","id":` + itoa(id) + `,"method":"ping","params":{"pad":"` + strings.Repeat("x", big-80) + `"}}`
	}
	a, b := openStream(t, s.URL, "", nil), openStream(t, s.URL, "", nil)
	for _, st := range []string{a.Endpoint, b.Endpoint} {
		code, _ := post(t, st, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`)
		require.Equal(t, http.StatusAccepted, code)
		<-started // each stream is busy: what comes next waits
	}
	for i := range 4 {
		code, body := post(t, a.Endpoint, padded(100+i))
		require.Equal(t, http.StatusAccepted, code, body)
	}
	code, body := post(t, a.Endpoint, padded(200))
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Contains(t, body, "too many bytes waiting for this stream")

	for i := range 2 {
		code, body := post(t, b.Endpoint, padded(300+i))
		require.Equal(t, http.StatusAccepted, code, body)
	}
	code, body = post(t, b.Endpoint, padded(400))
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Contains(t, body, "too many bytes waiting for the streams of this host")
	assert.LessOrEqual(t, s.sse.QueuedBytes(), int64(6*big))

	// A stream that ends gives its bytes back.
	a.Close()
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Equal(c, 1, s.sse.Streams())
	}, 10*time.Second, 10*time.Millisecond)
	assert.LessOrEqual(t, s.sse.QueuedBytes(), int64(2*big))
	code, body = post(t, b.Endpoint, padded(500))
	assert.Equal(t, http.StatusAccepted, code, body)
}

// flushRecorder is the ResponseWriter of a stream served without a
// connection: what an idle stream costs is then the stream's own state.
type flushRecorder struct {
	mu     sync.Mutex
	header http.Header
	n      int
}

func (f *flushRecorder) Header() http.Header { return f.header }
func (f *flushRecorder) WriteHeader(int)     {}
func (f *flushRecorder) Flush()              {}
func (f *flushRecorder) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n += len(p)
	return len(p), nil
}

// TestLegacySSEIdleStreamsCostLittle opens many idle streams and measures
// the heap they hold: each one's state is made on use, so an idle stream
// holds no inbox and no id window.
func TestLegacySSEIdleStreamsCostLittle(t *testing.T) {
	sse, err := NewLegacySSE(NewHandler(serverOf(newFakeTools()), nil), &LegacySSEOptions{InstanceID: "inst1", Sealer: newSealer(t, sseTestKey)})
	require.NoError(t, err)
	defer sse.Close()
	const n = 500
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	defer func() {
		cancel()
		wg.Wait()
	}()
	hdr := http.Header{"User-Agent": {"mcp-client/1.0"}, "Accept": {"text/event-stream"}, "X-Functions-Key": {"some-key-of-forty-characters-or-so-000000"}}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range n {
		req := httptestRequest(ctx, hdr)
		wg.Go(func() { sse.ServeStream(&flushRecorder{header: http.Header{}}, req) })
	}
	require.EventuallyWithT(t, func(c *assert.CollectT) { assert.Equal(c, n, sse.Streams()) }, 30*time.Second, 10*time.Millisecond)
	runtime.GC()
	runtime.ReadMemStats(&after)
	heap := (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / n
	stack := (int64(after.StackInuse) - int64(before.StackInuse)) / n
	t.Logf("an idle stream holds %d B of heap and %d B of goroutine stack (%d streams)", heap, stack, n)
	assert.Less(t, heap, int64(10<<10), "heap per idle stream")
}

func httptestRequest(ctx context.Context, hdr http.Header) *http.Request {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://127.0.0.1/runtime/webhooks/mcp/sse", nil)
	if err != nil {
		panic(err)
	}
	req.Header = hdr.Clone()
	return req
}

// FuzzRouterAndHandlerAgree: for any message, the legacy SSE router (which
// drops repeated ids and runs cancellations at once) sees the message the
// handler answers: the id the router keys on is the id the handler echoes,
// and what the router runs at once as a cancellation is a cancellation
// notification for the handler, which answers nothing. Both agree with a
// strict reading by encoding/json.
func FuzzRouterAndHandlerAgree(f *testing.F) {
	for _, s := range wiretest.DecodeSeeds {
		f.Add([]byte(s))
	}
	f.Add([]byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","METHOD":"tools/call","id":3,"params":{"requestId":1}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"RequestId":2}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","Method":"notifications/cancelled","method":"ping","id":1}`))
	h := NewHandler(serverOf(newFakeTools()), &Options{Sealer: testSealer})
	f.Fuzz(func(t *testing.T, body []byte) {
		r := routeOf(body)
		ref := wiretest.StrictDecode(body)

		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, "/", strings.NewReader(string(body)))
		require.NoError(t, err)
		req.Header.Set("Accept", "application/json")
		req.Header.Set("Content-Type", "application/json")
		rec := wire.NewRecorder()
		h.h.serve(rec, req, &streamOrigin{ClientID: "fuzz"})
		var reply struct {
			ID json.RawMessage `json:"id"`
		}
		answered := rec.Body.Len() > 0 && json.Unmarshal(rec.Body.Bytes(), &reply) == nil
		echoed := ""
		if answered && string(reply.ID) != "null" {
			echoed = string(reply.ID)
		}

		assert.Equal(t, json.Valid(body), r.JSON, "the router's one decoding refuses exactly what is not JSON: %q", body)
		assert.Equal(t, r.ID, echoed, "the router keys on the id the handler echoes: %q", body)
		if r.Cancel {
			assert.Equal(t, http.StatusAccepted, rec.Status, "a cancellation is answered by nothing")
			assert.True(t, ref.Code == 0 && ref.Method == methodCancelled && !ref.HasID, "encoding/json reads a cancellation too: %q", body)
		}
		if ref.Code == 0 && ref.Method == methodCancelled && !ref.HasID && !ref.ParamsProblem {
			assert.True(t, r.Cancel, "a cancellation the router does not run at once: %q", body)
		}
		if r.ID != "" {
			assert.Equal(t, r.ID, string(ref.ID), "encoding/json reads the same id")
		}
	})
}
