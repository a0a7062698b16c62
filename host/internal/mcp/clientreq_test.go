package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/internal/testutil"
	"github.com/funcmcp/funcmcp/metadata"
)

// openCall posts body and returns its response stream (status 200,
// text/event-stream required); the stream ends with the test.
func (s *testServer) openCall(t *testing.T, body string, headers map[string]string) *testutil.SSEStream {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.URL, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Accept", acceptBoth)
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := s.Client().Do(req)
	if err != nil {
		cancel()
		require.NoError(t, err)
	}
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	st := testutil.ReadSSE(resp, cancel)
	t.Cleanup(st.Close)
	return st
}

// initWithCaps initializes at version declaring caps and returns the
// Mcp-Session-Id.
func initWithCaps(t *testing.T, s *testServer, version string, caps map[string]any) string {
	t.Helper()
	r := s.post(t, rpc(0, "initialize", map[string]any{"protocolVersion": version, "capabilities": caps,
		"clientInfo": map[string]any{"name": "t", "version": "1"}}), nil)
	require.Equal(t, http.StatusOK, r.status, r.body)
	token := r.header.Get(headerSessionID)
	require.NotEmpty(t, token)
	return token
}

// serverRequest is a request a call sent the client.
type serverRequest struct {
	ID     string          `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// nextMessage returns the next event of st carrying a message (a priming
// event carries none).
func nextMessage(t *testing.T, st *testutil.SSEStream) (testutil.SSEEvent, error) {
	t.Helper()
	for {
		ev, err := st.Next(10 * time.Second)
		if err != nil || ev.Data != "" {
			return ev, err
		}
	}
}

func nextRequest(t *testing.T, st *testutil.SSEStream) serverRequest {
	t.Helper()
	ev, err := nextMessage(t, st)
	require.NoError(t, err)
	var r serverRequest
	require.NoError(t, json.Unmarshal([]byte(ev.Data), &r), ev.Data)
	require.NotEmpty(t, r.ID, "a request has an id: %s", ev.Data)
	return r
}

// askingTool asks the client once (method, params) and answers with the
// reply it got, as JSON text, or with the error.
func askingTool(key, method, params string) func(context.Context, *CallRequest) (*metadata.CallToolResult, error) {
	return func(ctx context.Context, req *CallRequest) (*metadata.CallToolResult, error) {
		reply, err := req.Notify.Request(ctx, key, method, json.RawMessage(params))
		if err != nil {
			return metadata.ErrorResult("error: " + err.Error()), nil
		}
		b, _ := json.Marshal(reply)
		return &metadata.CallToolResult{Content: []json.RawMessage{metadata.TextContent(string(b))}}, nil
	}
}

// resultText returns the text of the first content block of a tools/call
// response.
func resultText(t *testing.T, data string) string {
	t.Helper()
	var r struct {
		Result struct {
			Content []struct{ Text string } `json:"content"`
		} `json:"result"`
	}
	require.NoError(t, json.Unmarshal([]byte(data), &r), data)
	require.NotEmpty(t, r.Result.Content, data)
	return r.Result.Content[0].Text
}

const elicitParams = `{"message":"Name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}`

// TestClientRequestRoundTrip: on a legacy revision the request goes out on
// the call's stream and the client's answer (a POST with its session) comes
// back to the call, whatever the answer.
func TestClientRequestRoundTrip(t *testing.T) {
	tests := []struct {
		name, answer, want string
	}{
		{"accept", `"result":{"action":"accept","content":{"name":"Ada"}}`, `{"result":{"action":"accept","content":{"name":"Ada"}}}`},
		{"decline", `"result":{"action":"decline"}`, `{"result":{"action":"decline"}}`},
		{"cancel", `"result":{"action":"cancel"}`, `{"result":{"action":"cancel"}}`},
		{"error", `"error":{"code":-1,"message":"user closed the dialog"}`, `{"error":{"code":-1,"message":"user closed the dialog"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := startServer(t, nil)
			s.tools.call = askingTool("elicitation-1", "elicitation/create", elicitParams)
			token := initWithCaps(t, s, "2025-11-25", map[string]any{"elicitation": map[string]any{}})
			hdr := map[string]string{headerSessionID: token, headerProtocolVersion: "2025-11-25"}
			st := s.openCall(t, rpc(1, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{}}), hdr)
			req := nextRequest(t, st)
			assert.Equal(t, "elicitation/create", req.Method)
			assert.JSONEq(t, elicitParams, string(req.Params))
			assert.True(t, strings.HasPrefix(req.ID, s.handlerInstance(t)+"~"), "the id names the instance: %s", req.ID)

			r := s.post(t, `{"jsonrpc":"2.0","id":"`+req.ID+`",`+tt.answer+`}`, hdr)
			assert.Equal(t, http.StatusAccepted, r.status)
			ev, err := nextMessage(t, st)
			require.NoError(t, err)
			assert.JSONEq(t, tt.want, resultText(t, ev.Data))
		})
	}
}

// handlerInstance reads the instance id a test server's handler chose.
func (s *testServer) handlerInstance(t *testing.T) string {
	t.Helper()
	e, ok := s.Config.Handler.(*Handler)
	require.True(t, ok)
	return e.h.instanceID
}

// TestClientRequestNeedsACapability: nothing is sent for a capability the
// client did not declare, nor to a client that accepts no stream.
func TestClientRequestNeedsACapability(t *testing.T) {
	tests := []struct {
		name   string
		caps   map[string]any
		accept string
		want   string
	}{
		{"no capability at all", map[string]any{}, acceptBoth, "error: " + ErrNoClientRequests.Error()},
		{"another capability", map[string]any{"sampling": map[string]any{}}, acceptBoth,
			`{"error":{"code":-32021,"message":"The client did not declare the 'elicitation' capability.","data":{"requiredCapabilities":{"elicitation":{}}}}}`},
		{"no stream accepted", map[string]any{"elicitation": map[string]any{}}, "application/json", "error: " + ErrNoClientRequests.Error()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := startServer(t, nil)
			s.tools.call = askingTool("elicitation-1", "elicitation/create", elicitParams)
			token := initWithCaps(t, s, "2025-11-25", tt.caps)
			r := s.post(t, rpc(1, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{}}),
				map[string]string{headerSessionID: token, "Accept": tt.accept})
			require.Equal(t, http.StatusOK, r.status)
			assert.Equal(t, tt.want, resultText(t, r.data), "only the result: nothing else reached the client")
		})
	}
}

// TestClientRequestTimeLimit: a client that never answers holds the call
// only as long as its context; the client is told the request is off.
func TestClientRequestTimeLimit(t *testing.T) {
	s := startServer(t, nil)
	ask := askingTool("sampling-1", "sampling/createMessage", `{"messages":[],"maxTokens":1}`)
	s.tools.call = func(ctx context.Context, req *CallRequest) (*metadata.CallToolResult, error) {
		ctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		defer cancel()
		return ask(ctx, req)
	}
	token := initWithCaps(t, s, "2025-06-18", map[string]any{"sampling": map[string]any{}})
	st := s.openCall(t, rpc(1, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{}}),
		map[string]string{headerSessionID: token})
	req := nextRequest(t, st)
	ev, err := nextMessage(t, st)
	require.NoError(t, err)
	assert.JSONEq(t, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"`+req.ID+`","reason":"context deadline exceeded"}}`, ev.Data)
	ev, err = nextMessage(t, st)
	require.NoError(t, err)
	assert.Equal(t, "error: "+context.DeadlineExceeded.Error(), resultText(t, ev.Data))
}

// TestClientRequestCancelledCall: a call the client cancels while its
// request waits stops waiting.
func TestClientRequestCancelledCall(t *testing.T) {
	s := startServer(t, nil)
	s.tools.call = askingTool("roots-1", "roots/list", `{}`)
	token := initWithCaps(t, s, "2025-11-25", map[string]any{"roots": map[string]any{"listChanged": true}})
	hdr := map[string]string{headerSessionID: token}
	st := s.openCall(t, rpc(5, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{}}), hdr)
	req := nextRequest(t, st)
	assert.Equal(t, "roots/list", req.Method)
	r := s.post(t, rpc(nil, methodCancelled, map[string]any{"requestId": 5}), hdr)
	require.Equal(t, http.StatusAccepted, r.status)
	for {
		ev, err := nextMessage(t, st)
		require.NoError(t, err)
		if strings.Contains(ev.Data, `"result"`) {
			assert.Equal(t, "error: "+ErrCancelled.Error(), resultText(t, ev.Data))
			return
		}
	}
}

// TestClientAnswersOnlyItsOwnRequests: an answer sent with another
// session does not reach the call, even with the right id.
func TestClientAnswersOnlyItsOwnRequests(t *testing.T) {
	s := startServer(t, nil)
	s.tools.call = askingTool("elicitation-1", "elicitation/create", elicitParams)
	caps := map[string]any{"elicitation": map[string]any{}}
	mine := initWithCaps(t, s, "2025-11-25", caps)
	other := initWithCaps(t, s, "2025-11-25", caps)
	st := s.openCall(t, rpc(1, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{}}),
		map[string]string{headerSessionID: mine})
	req := nextRequest(t, st)
	for _, hdr := range []map[string]string{{headerSessionID: other}, {}} {
		r := s.post(t, `{"jsonrpc":"2.0","id":"`+req.ID+`","result":{"action":"accept","content":{"name":"Mallory"}}}`, hdr)
		assert.Equal(t, http.StatusAccepted, r.status)
	}
	r := s.post(t, `{"jsonrpc":"2.0","id":"`+req.ID+`","result":{"action":"accept","content":{"name":"Ada"}}}`,
		map[string]string{headerSessionID: mine})
	assert.Equal(t, http.StatusAccepted, r.status)
	ev, err := nextMessage(t, st)
	require.NoError(t, err)
	assert.JSONEq(t, `{"result":{"action":"accept","content":{"name":"Ada"}}}`, resultText(t, ev.Data))
}

// TestClientAnswerReachesAnotherInstance: the answer POSTed to another
// instance is forwarded to the one named in the request id.
func TestClientAnswerReachesAnotherInstance(t *testing.T) {
	a := startServer(t, &Options{InstanceID: "insta"})
	a.tools.call = askingTool("elicitation-1", "elicitation/create", elicitParams)
	forwarded := make(chan string, 1)
	b := startServer(t, &Options{InstanceID: "instb", ForwardResponse: func(_ context.Context, instance, scope string, body []byte) error {
		forwarded <- instance
		if instance != "insta" {
			return errors.New("no such instance")
		}
		if !a.Config.Handler.(*Handler).DeliverResponse(scope, body) {
			return errors.New("nothing waits")
		}
		return nil
	}})
	token := initWithCaps(t, a, "2025-11-25", map[string]any{"elicitation": map[string]any{}})
	hdr := map[string]string{headerSessionID: token}
	st := a.openCall(t, rpc(1, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{}}), hdr)
	req := nextRequest(t, st)
	require.True(t, strings.HasPrefix(req.ID, "insta~"), req.ID)
	r := b.post(t, `{"jsonrpc":"2.0","id":"`+req.ID+`","result":{"action":"accept","content":{"name":"Ada"}}}`, hdr)
	assert.Equal(t, http.StatusAccepted, r.status)
	assert.Equal(t, "insta", <-forwarded)
	ev, err := nextMessage(t, st)
	require.NoError(t, err)
	assert.JSONEq(t, `{"result":{"action":"accept","content":{"name":"Ada"}}}`, resultText(t, ev.Data))
}

// TestLegacySSEClientRequestsAndNotifications: over the legacy SSE
// transport a call's progress, log messages and requests travel on the
// stream, and the client's answer POSTed to the message URL reaches the
// call while it runs.
func TestLegacySSEClientRequestsAndNotifications(t *testing.T) {
	s := startSSEServer(t, &LegacySSEOptions{InstanceID: "inst1"})
	s.tools.call = func(ctx context.Context, req *CallRequest) (*metadata.CallToolResult, error) {
		if err := req.Notify.Progress(1, 2, "half"); err != nil {
			return nil, err
		}
		if err := req.Notify.Log("info", "tool", json.RawMessage(`"working"`)); err != nil {
			return nil, err
		}
		reply, err := req.Notify.Request(ctx, "k", "sampling/createMessage", json.RawMessage(`{"messages":[],"maxTokens":3}`))
		if err != nil {
			return nil, err
		}
		return &metadata.CallToolResult{Content: []json.RawMessage{metadata.TextContent(string(reply.Result))}}, nil
	}
	st := openStream(t, s.URL, "", nil)
	code, _ := post(t, st.Endpoint, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{"sampling":{}},"clientInfo":{"name":"c","version":"1"}}}`)
	require.Equal(t, http.StatusAccepted, code)
	next(t, st)
	code, _ = post(t, st.Endpoint, `{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"info"}}`)
	require.Equal(t, http.StatusAccepted, code)
	assert.JSONEq(t, `{"jsonrpc":"2.0","id":1,"result":{}}`, next(t, st).Data)
	code, _ = post(t, st.Endpoint, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{},"_meta":{"progressToken":"p"}}}`)
	require.Equal(t, http.StatusAccepted, code)

	assert.JSONEq(t, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1,"total":2,"message":"half"}}`, next(t, st).Data)
	assert.JSONEq(t, `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","logger":"tool","data":"working"}}`, next(t, st).Data)
	var req serverRequest
	require.NoError(t, json.Unmarshal([]byte(next(t, st).Data), &req))
	assert.Equal(t, "sampling/createMessage", req.Method)
	code, _ = post(t, st.Endpoint, `{"jsonrpc":"2.0","id":"`+req.ID+`","result":{"role":"assistant","content":{"type":"text","text":"hi"},"model":"m"}}`)
	require.Equal(t, http.StatusAccepted, code)
	ev := next(t, st)
	assert.JSONEq(t, `{"role":"assistant","content":{"type":"text","text":"hi"},"model":"m"}`, resultText(t, ev.Data))
	assert.Equal(t, "2", gjson(t, ev.Data, "id"))
}
