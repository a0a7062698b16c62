package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/host/internal/auth"
	"github.com/funcmcp/funcmcp/host/internal/mcp/legacysse"
	"github.com/funcmcp/funcmcp/internal/testutil"
	"github.com/funcmcp/funcmcp/metadata"
)

// newSealer returns the auth sealer of a 32-byte key.
func newSealer(t testing.TB, key []byte) *auth.Sealer {
	t.Helper()
	s, err := auth.NewSealer(key)
	require.NoError(t, err)
	return s
}

// queryClientState is the query parameter of the legacy message endpoint.
const queryClientState = legacysse.QueryClientState

var sseTestKey = []byte("0123456789abcdef0123456789abcdef")

// sseServer is one instance: the Streamable HTTP handler and the legacy
// transport mounted as the host mounts them.
type sseServer struct {
	*httptest.Server
	tools *fakeTools
	sse   *LegacySSE
}

func startSSEServer(t *testing.T, o *LegacySSEOptions) *sseServer {
	t.Helper()
	tools := newFakeTools()
	if o.Sealer == nil {
		o.Sealer = newSealer(t, sseTestKey)
	}
	sse, err := NewLegacySSE(NewHandler(serverOf(tools), nil), o)
	require.NoError(t, err)
	mux := http.NewServeMux()
	mux.HandleFunc("/runtime/webhooks/mcp/sse", sse.ServeStream)
	mux.HandleFunc("/runtime/webhooks/mcp/message", sse.ServeMessage)
	s := &sseServer{Server: httptest.NewServer(mux), tools: tools, sse: sse}
	t.Cleanup(func() { sse.Close(); s.Close() })
	return s
}

// openStream GETs …/sse (with the query and headers given) and reads the
// endpoint event; the stream is closed when the test ends.
func openStream(t *testing.T, base, query string, hdr http.Header) *testutil.SSEStream {
	t.Helper()
	st, err := testutil.OpenSSE(t.Context(), base+"/runtime/webhooks/mcp/sse"+query, hdr)
	require.NoError(t, err)
	t.Cleanup(st.Close)
	return st
}

// next returns the next event of st that is not a comment.
func next(t *testing.T, st *testutil.SSEStream) testutil.SSEEvent {
	t.Helper()
	ev, err := st.Next(10 * time.Second)
	require.NoError(t, err)
	return ev
}

// post sends one message to a message URL and returns status and body.
func post(t *testing.T, endpoint, body string) (int, string) {
	t.Helper()
	resp, err := http.Post(endpoint, "application/json", strings.NewReader(body))
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestLegacySSEEndpointEvent(t *testing.T) {
	s := startSSEServer(t, &LegacySSEOptions{InstanceID: "inst1"})
	tests := []struct {
		name, query string
		hdr         http.Header
		wantCode    string
	}{
		{"no key", "", nil, ""},
		{"code query", "?code=k%2B1", nil, "k+1"},
		{"x-functions-key header", "", http.Header{"X-Functions-Key": {"hdrkey"}}, "hdrkey"},
		{"header wins, as in the key check", "?code=q", http.Header{"X-Functions-Key": {"h"}}, "h"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := openStream(t, s.URL, tt.query, tt.hdr)
			u, err := url.Parse(st.Endpoint)
			require.NoError(t, err)
			assert.Equal(t, "/runtime/webhooks/mcp/message", u.Path)
			assert.NotEmpty(t, u.Query().Get("azmcpcs"))
			assert.Equal(t, tt.wantCode, u.Query().Get("code"))
			_, hasCode := u.Query()["code"]
			assert.Equal(t, tt.wantCode != "", hasCode)
		})
	}
}

func TestLegacySSERepliesInOrderOnTheStream(t *testing.T) {
	s := startSSEServer(t, &LegacySSEOptions{InstanceID: "inst1"})
	st := openStream(t, s.URL, "", http.Header{"X-Test": {"abc"}})

	code, body := post(t, st.Endpoint, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2024-11-05","clientInfo":{"name":"c","version":"1"}}}`)
	require.Equal(t, http.StatusAccepted, code)
	assert.Equal(t, "Accepted", body)
	init := next(t, st)
	assert.Equal(t, "message", init.Name)
	assert.JSONEq(t, `"2024-11-05"`, gjson(t, init.Data, "result", "protocolVersion"))
	code, _ = post(t, st.Endpoint, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	require.Equal(t, http.StatusAccepted, code)

	const n = 50
	for i := 1; i <= n; i++ {
		code, _ := post(t, st.Endpoint, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":"t%d"}}}`, i, i))
		require.Equal(t, http.StatusAccepted, code)
	}
	for i := 1; i <= n; i++ {
		ev := next(t, st)
		assert.JSONEq(t, fmt.Sprint(i), gjson(t, ev.Data, "id"))
		assert.Contains(t, ev.Data, fmt.Sprintf(`"text":"t%d"`, i))
	}
	// A request sent again runs once: the next reply is the ping's.
	code, _ = post(t, st.Endpoint, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"again"}}}`)
	require.Equal(t, http.StatusAccepted, code)
	code, _ = post(t, st.Endpoint, `{"jsonrpc":"2.0","id":"p","method":"ping"}`)
	require.Equal(t, http.StatusAccepted, code)
	assert.JSONEq(t, `"p"`, gjson(t, next(t, st).Data, "id"))

	call := s.tools.lastCall(t)
	assert.Equal(t, metadata.TransportSSE, call.Transport)
	assert.Empty(t, call.SessionID, "legacy SSE has no session id")
	assert.Equal(t, "2024-11-05", call.ProtocolVersion)
	require.NotNil(t, call.ClientInfo)
	assert.Equal(t, "c", call.ClientInfo.Name)
	assert.Equal(t, "abc", call.Headers.Get("X-Test"), "the stream's headers reach the tool")
}

// gjson returns the JSON at a path of object keys.
func gjson(t *testing.T, doc string, path ...string) string {
	t.Helper()
	var v json.RawMessage = json.RawMessage(doc)
	for _, k := range path {
		var m map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(v, &m), doc)
		v = m[k]
	}
	return string(v)
}

func TestLegacySSEKeepAliveAndTeardown(t *testing.T) {
	s := startSSEServer(t, &LegacySSEOptions{InstanceID: "inst1", KeepAlive: 20 * time.Millisecond})
	st := openStream(t, s.URL, "", nil)
	select {
	case ev := <-st.Events:
		assert.Equal(t, ":", ev.Name)
		assert.Equal(t, ": keep-alive", ev.Data)
	case <-time.After(5 * time.Second):
		t.Fatal("no keep-alive comment")
	}
	require.Equal(t, 1, s.sse.Streams())

	st.Close()
	deadline := time.Now().Add(5 * time.Second)
	for s.sse.Streams() != 0 {
		require.True(t, time.Now().Before(deadline), "the stream was not removed after the client left")
		time.Sleep(10 * time.Millisecond)
	}
	code, body := post(t, st.Endpoint, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	assert.Equal(t, http.StatusBadRequest, code)
	assert.Contains(t, body, "No active session for client")
}

func TestLegacySSERefusals(t *testing.T) {
	s := startSSEServer(t, &LegacySSEOptions{InstanceID: "inst1"})
	st := openStream(t, s.URL, "", nil)
	other := newSealer(t, []byte("ffffffffffffffffffffffffffffffff"))
	forged, _ := other.Seal(ClientStatePurpose, []byte("abc|inst1"), time.Hour)
	msgURL := s.URL + "/runtime/webhooks/mcp/message"
	tests := []struct {
		name, method, url, body string
		status                  int
		text                    string
	}{
		{"no state", "POST", msgURL, `{}`, 400, "Missing service context"},
		{"forged state", "POST", msgURL + "?azmcpcs=" + forged, `{}`, 400, "Invalid client state"},
		{"garbage state", "POST", msgURL + "?azmcpcs=xyz", `{}`, 400, "Invalid client state"},
		{"empty body", "POST", st.Endpoint, ``, 400, "No message in request body."},
		{"null body", "POST", st.Endpoint, `null`, 400, "No message in request body."},
		{"not JSON", "POST", st.Endpoint, `{`, 400, "not JSON"},
		{"GET message", "GET", st.Endpoint, ``, 405, "Method not allowed"},
		{"POST sse", "POST", s.URL + "/runtime/webhooks/mcp/sse", `{}`, 405, "Method not allowed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequest(tt.method, tt.url, strings.NewReader(tt.body))
			require.NoError(t, err)
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			assert.Equal(t, tt.status, resp.StatusCode)
			assert.Contains(t, string(b), tt.text)
		})
	}
}

// hubForwarder forwards to the LegacySSE of the instance named.
type hubForwarder map[string]*LegacySSE

func (f hubForwarder) Forward(_ context.Context, instanceID, clientID string, msg []byte) error {
	to, ok := f[instanceID]
	if !ok {
		return fmt.Errorf("forwarding to %s: %w", instanceID, ErrNoInstance)
	}
	switch d := to.Deliver(clientID, msg); d {
	case Delivered:
		return nil
	case DeliveryFull:
		return fmt.Errorf("forwarding to %s: %w", instanceID, ErrStreamFull)
	default:
		return fmt.Errorf("forwarding to %s: %s: %w", instanceID, d, ErrNoInstance)
	}
}

func TestLegacySSEForwardsToTheStreamsInstance(t *testing.T) {
	hub := hubForwarder{}
	a := startSSEServer(t, &LegacySSEOptions{InstanceID: "insta", Forward: hub})
	b := startSSEServer(t, &LegacySSEOptions{InstanceID: "instb", Forward: hub})
	lone := startSSEServer(t, &LegacySSEOptions{InstanceID: "instc"}) // no forwarder
	hub["insta"], hub["instb"] = a.sse, b.sse

	st := openStream(t, a.URL, "", nil)
	code, body := post(t, testutil.OnHost(st.Endpoint, b.URL), `{"jsonrpc":"2.0","id":0,"method":"ping"}`)
	require.Equal(t, http.StatusAccepted, code, body)
	assert.JSONEq(t, "0", gjson(t, next(t, st).Data, "id"))
	for i := 1; i <= 5; i++ {
		code, body := post(t, testutil.OnHost(st.Endpoint, b.URL), fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"add","arguments":{"a":%d,"b":1}}}`, i, i))
		require.Equal(t, http.StatusAccepted, code, body)
	}
	for i := 1; i <= 5; i++ {
		ev := next(t, st)
		assert.JSONEq(t, fmt.Sprint(i), gjson(t, ev.Data, "id"))
		assert.JSONEq(t, fmt.Sprintf(`{"sum":%d}`, i+1), gjson(t, ev.Data, "result", "structuredContent"))
	}
	b.tools.mu.Lock()
	assert.Empty(t, b.tools.calls, "the call runs on the stream's instance")
	b.tools.mu.Unlock()

	code, body = post(t, testutil.OnHost(st.Endpoint, lone.URL), `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	assert.Equal(t, http.StatusBadRequest, code)
	assert.Contains(t, body, "No active session for client")
	assert.Contains(t, body, "instance 'insta'")

	full := startSSEServer(t, &LegacySSEOptions{InstanceID: "instd", Forward: fullForwarder{}})
	code, body = post(t, testutil.OnHost(st.Endpoint, full.URL), `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	assert.Equal(t, http.StatusServiceUnavailable, code, "a stream that takes no more for now")
	assert.Contains(t, body, "too many messages waiting for this stream")

	delete(hub, "insta")
	code, body = post(t, testutil.OnHost(st.Endpoint, b.URL), `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	assert.Equal(t, http.StatusBadRequest, code, "an instance that is gone")
	assert.Contains(t, body, "No active session for client")
}

// fullForwarder answers every message as its stream's instance would when
// the stream takes no more.
type fullForwarder struct{}

func (fullForwarder) Forward(context.Context, string, string, []byte) error {
	return fmt.Errorf("forwarding: %w", ErrStreamFull)
}

// TestLegacySSEOfficialGoClient connects the official Go SDK's SSE client
// transport, which speaks 2024-11-05.
func TestLegacySSEOfficialGoClient(t *testing.T) {
	s := startSSEServer(t, &LegacySSEOptions{InstanceID: "inst1"})
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	client := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "0"}, nil)
	cs, err := client.Connect(ctx, &sdk.SSEClientTransport{Endpoint: s.URL + "/runtime/webhooks/mcp/sse"}, nil)
	require.NoError(t, err)
	defer cs.Close()

	lt, err := cs.ListTools(ctx, nil)
	require.NoError(t, err)
	require.Len(t, lt.Tools, 2)
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "add", Arguments: map[string]any{"a": 2, "b": 3}})
	require.NoError(t, err)
	assert.False(t, res.IsError)
	sc, err := json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	assert.JSONEq(t, `{"sum":5}`, string(sc))
	assert.Equal(t, metadata.TransportSSE, s.tools.lastCall(t).Transport)
}

// TestLegacySSEOutlivesTheRequestDeadline: a server that sets a write
// deadline on every request (as funchost does) must not cut a stream that
// the client still reads.
func TestLegacySSEOutlivesTheRequestDeadline(t *testing.T) {
	sse, err := NewLegacySSE(NewHandler(serverOf(newFakeTools()), nil), &LegacySSEOptions{
		InstanceID: "inst1", Sealer: newSealer(t, sseTestKey), KeepAlive: 50 * time.Millisecond,
	})
	require.NoError(t, err)
	mux := http.NewServeMux()
	mux.HandleFunc("/runtime/webhooks/mcp/sse", func(w http.ResponseWriter, r *http.Request) {
		_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(200 * time.Millisecond))
		sse.ServeStream(w, r)
	})
	mux.HandleFunc("/runtime/webhooks/mcp/message", sse.ServeMessage)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	defer sse.Close()

	st := openStream(t, srv.URL, "", nil)
	// Keep-alive comments keep coming well after the 200 ms deadline the
	// server set: each is written within a window of its own.
	opened := time.Now()
	for time.Since(opened) < 3*200*time.Millisecond {
		select {
		case ev, ok := <-st.Events:
			require.True(t, ok, "the stream ended after %v", time.Since(opened))
			require.Equal(t, ":", ev.Name)
		case <-time.After(5 * time.Second):
			t.Fatalf("no keep-alive within 5s, %v after the stream opened", time.Since(opened))
		}
	}
	code, _ := post(t, st.Endpoint, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	require.Equal(t, http.StatusAccepted, code)
	assert.JSONEq(t, `{"jsonrpc":"2.0","id":1,"result":{}}`, next(t, st).Data)
}

// TestLegacySSECloseEndsStreams: a stopping host closes the transport, and
// every open stream ends (streams never end by themselves).
func TestLegacySSECloseEndsStreams(t *testing.T) {
	s := startSSEServer(t, &LegacySSEOptions{InstanceID: "inst1"})
	st := openStream(t, s.URL, "", nil)
	require.Equal(t, 1, s.sse.Streams())
	s.sse.Close()
	timeout := time.After(5 * time.Second)
	for {
		select {
		case _, ok := <-st.Events:
			if !ok {
				assert.Equal(t, 0, s.sse.Streams())
				resp, err := http.Get(s.URL + "/runtime/webhooks/mcp/sse")
				require.NoError(t, err)
				resp.Body.Close()
				assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, "no new stream once closed")
				return
			}
		case <-timeout:
			t.Fatal("the stream did not end within 5s of Close")
		}
	}
}

// TestLegacySSECancelReachesTheRunningCall: a stream runs one request at a
// time, so notifications/cancelled must not wait behind the call it names.
func TestLegacySSECancelReachesTheRunningCall(t *testing.T) {
	s := startSSEServer(t, &LegacySSEOptions{InstanceID: "inst1"})
	started := make(chan struct{})
	cause := make(chan error, 1)
	s.tools.call = func(ctx context.Context, _ *CallRequest) (*metadata.CallToolResult, error) {
		close(started)
		select {
		case <-ctx.Done():
			cause <- context.Cause(ctx)
		case <-time.After(10 * time.Second):
			cause <- nil
		}
		return &metadata.CallToolResult{Content: []json.RawMessage{metadata.TextContent("done")}}, nil
	}
	st := openStream(t, s.URL, "", nil)
	code, _ := post(t, st.Endpoint, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2024-11-05","clientInfo":{"name":"c","version":"1"}}}`)
	require.Equal(t, http.StatusAccepted, code)
	next(t, st)
	code, _ = post(t, st.Endpoint, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`)
	require.Equal(t, http.StatusAccepted, code)
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("the call did not start")
	}
	code, _ = post(t, st.Endpoint, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"user gave up"}}`)
	require.Equal(t, http.StatusAccepted, code)
	assert.ErrorIs(t, <-cause, ErrCancelled, "the running call is cancelled by the notification")

	// The stream goes on: the next request is answered.
	code, _ = post(t, st.Endpoint, `{"jsonrpc":"2.0","id":8,"method":"ping"}`)
	require.Equal(t, http.StatusAccepted, code)
	for {
		ev := next(t, st)
		if gjson(t, ev.Data, "id") == "8" {
			assert.JSONEq(t, `{"jsonrpc":"2.0","id":8,"result":{}}`, ev.Data)
			break
		}
	}
}

// TestLegacySSEDeliverSaysWhatBecameOfTheMessage: a forwarded message is
// taken, refused for now (a full inbox: the backplane offers it again), or
// refused for good (no such stream).
func TestLegacySSEDeliverSaysWhatBecameOfTheMessage(t *testing.T) {
	s := startSSEServer(t, &LegacySSEOptions{InstanceID: "inst1", Inbox: 1})
	started, release := make(chan struct{}), make(chan struct{})
	s.tools.call = func(ctx context.Context, _ *CallRequest) (*metadata.CallToolResult, error) {
		close(started)
		select {
		case <-release:
		case <-ctx.Done():
		}
		return &metadata.CallToolResult{Content: []json.RawMessage{metadata.TextContent("done")}}, nil
	}
	st := openStream(t, s.URL, "", nil)
	u, err := url.Parse(st.Endpoint)
	require.NoError(t, err)
	client, instance, _, ok := s.sse.OpenState(u.Query().Get(queryClientState))
	require.True(t, ok)
	assert.Equal(t, "inst1", instance)

	call := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`)
	require.Equal(t, Delivered, s.sse.Deliver(client, call))
	<-started // the stream runs the call: its inbox is empty again
	ping := func(id int) []byte { return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"ping"}`, id) }
	assert.Equal(t, Delivered, s.sse.Deliver(client, ping(2)), "one message waits")
	assert.Equal(t, DeliveryFull, s.sse.Deliver(client, ping(3)), "the inbox holds one")
	assert.Equal(t, DeliveryGone, s.sse.Deliver("nobody", ping(4)))
	close(release)
	for _, id := range []string{"1", "2"} {
		assert.Equal(t, id, gjson(t, next(t, st).Data, "id"))
	}
	assert.Equal(t, Delivered, s.sse.Deliver(client, ping(3)), "room again")
	assert.Equal(t, "3", gjson(t, next(t, st).Data, "id"))
}
