package worker

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/metadata"
)

// fakeClient is the host end of the call channel for requests: it records
// each request notification and answers it with answer(n).
type fakeClient struct {
	srv    *httptest.Server
	mu     sync.Mutex
	got    []metadata.Notification
	answer func(n metadata.Notification) (status int, body string)
}

func newFakeClient(t *testing.T, answer func(n metadata.Notification) (int, string)) *fakeClient {
	t.Helper()
	fc := &fakeClient{answer: answer}
	fc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var n metadata.Notification
		data, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(data, &n)
		fc.mu.Lock()
		fc.got = append(fc.got, n)
		fc.mu.Unlock()
		status, body := fc.answer(n)
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(fc.srv.Close)
	return fc
}

func (fc *fakeClient) requests() []metadata.Notification {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	return append([]metadata.Notification(nil), fc.got...)
}

// offer is the channel headers the host sends, for a client with caps.
func (fc *fakeClient) offer(mode, caps string, answers map[string]any) map[string]string {
	h := map[string]string{
		metadata.HeaderNotifyURL:          fc.srv.URL + "/invocations/x/notifications",
		metadata.HeaderNotifyToken:        "tok",
		metadata.HeaderInputMode:          mode,
		metadata.HeaderClientCapabilities: metadata.EncodeHeaderJSON(json.RawMessage(caps)),
	}
	if answers != nil {
		data, _ := json.Marshal(answers)
		h[metadata.HeaderInputResponses] = metadata.EncodeHeaderJSON(data)
	}
	return h
}

// askingApp has a tool "ask" that elicits, samples and lists roots, and
// reports what each returned in its text.
func askingApp(timeout time.Duration) *App {
	a := New(&Options{Stdout: io.Discard, Stderr: io.Discard, ClientRequestTimeout: timeout})
	a.ConfigureMcpTool("ask").Handle(func(ctx context.Context, tc *ToolContext) (*Result, error) {
		el, err := tc.Elicit(ctx, "Proceed?", map[string]any{"type": "object", "properties": map[string]any{"ok": map[string]any{"type": "boolean"}}})
		if err != nil {
			return nil, err
		}
		msg, err := tc.CreateMessage(ctx, &CreateMessageParams{Messages: []SamplingMessage{{Role: "user", Content: Text("hi")}}, MaxTokens: 10})
		if err != nil {
			return nil, err
		}
		roots, err := tc.ListRoots(ctx, InputKey("my_roots"))
		if err != nil {
			return nil, err
		}
		return TextResult(el.Action + "|" + msg.Text() + "|" + roots[0].URI), nil
	})
	return a
}

func answerAll(n metadata.Notification) (int, string) {
	switch n.Method {
	case metadata.MethodElicitationCreate:
		return 200, `{"result":{"action":"accept","content":{"ok":true}}}`
	case metadata.MethodSamplingCreate:
		return 200, `{"result":{"role":"assistant","content":{"type":"text","text":"hello"},"model":"m"}}`
	case metadata.MethodRootsList:
		return 200, `{"result":{"roots":[{"uri":"file:///r"}]}}`
	}
	return 400, "unknown"
}

// resultText decodes the tool result of an invocation reply (today's
// envelope) and returns its first text and isError.
func resultText(t *testing.T, r reply) (string, bool) {
	t.Helper()
	var resp metadata.InvocationResponse
	require.NoError(t, json.Unmarshal([]byte(r.body), &resp), r.body)
	var s string
	require.NoError(t, json.Unmarshal(resp.ReturnValue, &s), r.body)
	var env metadata.ToolResult
	require.NoError(t, json.Unmarshal([]byte(s), &env), s)
	var block struct{ Text string }
	if env.Type == metadata.ResultTypeCallToolResult {
		var res metadata.CallToolResult
		require.NoError(t, json.Unmarshal([]byte(env.Content), &res), env.Content)
		require.NotEmpty(t, res.Content)
		require.NoError(t, json.Unmarshal(res.Content[0], &block))
		return block.Text, res.IsError
	}
	require.NoError(t, json.Unmarshal([]byte(env.Content), &block), env.Content)
	return block.Text, false
}

func TestClientRequests(t *testing.T) {
	srv := httptest.NewServer(askingApp(time.Minute).Handler())
	t.Cleanup(srv.Close)
	all := `{"elicitation":{},"sampling":{},"roots":{}}`

	t.Run("no channel: not supported, at once", func(t *testing.T) {
		r := invokeWith(t, srv.URL, "ask", nil)
		text, isErr := resultText(t, (r))
		assert.True(t, isErr)
		assert.Contains(t, text, ErrNotSupported.Error())
	})
	t.Run("stream: every request answered", func(t *testing.T) {
		fc := newFakeClient(t, answerAll)
		text, isErr := resultText(t, (invokeWith(t, srv.URL, "ask", fc.offer(metadata.InputModeStream, all, nil))))
		assert.False(t, isErr, text)
		assert.Equal(t, "accept|hello|file:///r", text)
		got := fc.requests()
		require.Len(t, got, 3)
		assert.Equal(t, []string{"elicitation-1", "sampling-2", "my_roots"}, []string{got[0].Key, got[1].Key, got[2].Key})
		assert.JSONEq(t, `{"message":"Proceed?","requestedSchema":{"type":"object","properties":{"ok":{"type":"boolean"}}}}`, string(got[0].Params))
	})
	t.Run("capability absent: nothing is sent, the call fails with -32021", func(t *testing.T) {
		fc := newFakeClient(t, answerAll)
		status, body := postRaw(t, srv.URL, "ask", `{"name":"ask","arguments":{}}`, fc.offer(metadata.InputModeStream, `{"sampling":{}}`, nil))
		require.Equal(t, http.StatusInternalServerError, status, "%s", body)
		var fr metadata.FailureReply
		require.NoError(t, json.Unmarshal(body, &fr))
		assert.Equal(t, metadata.CodeMissingRequiredClientCapability, fr.Code)
		assert.Contains(t, fr.Error, `the MCP client does not support elicitation/create (no "elicitation" capability)`)
		assert.JSONEq(t, `{"requiredCapabilities":{"elicitation":{}}}`, string(fr.Data))
		assert.Empty(t, fc.requests())
	})
	t.Run("declined and the client's errors", func(t *testing.T) {
		fc := newFakeClient(t, func(n metadata.Notification) (int, string) {
			if n.Method == metadata.MethodElicitationCreate {
				return 200, `{"result":{"action":"decline"}}`
			}
			return 200, `{"error":{"code":-1,"message":"User rejected sampling request"}}`
		})
		text, isErr := resultText(t, (invokeWith(t, srv.URL, "ask", fc.offer(metadata.InputModeStream, all, nil))))
		assert.True(t, isErr)
		assert.Contains(t, text, "the MCP client answered -1: User rejected sampling request")
	})
	t.Run("input-required: the first run asks, the second gets the answers", func(t *testing.T) {
		fc := newFakeClient(t, func(metadata.Notification) (int, string) { return 200, `{"inputRequired":true}` })
		r := (invokeWith(t, srv.URL, "ask", fc.offer(metadata.InputModeInputRequired, all, nil)))
		text, isErr := resultText(t, r)
		assert.True(t, isErr)
		assert.Contains(t, text, ErrInputRequired.Error())
		got := fc.requests()
		require.Len(t, got, 1, "the run ends at the first unanswered request")
		assert.Equal(t, "elicitation-1", got[0].Key)

		answers := map[string]any{
			"elicitation-1": map[string]any{"action": "accept", "content": map[string]any{"ok": true}},
			"sampling-2":    map[string]any{"role": "assistant", "content": map[string]any{"type": "text", "text": "hey"}, "model": "m"},
			"my_roots":      map[string]any{"roots": []any{map[string]any{"uri": "file:///x"}}},
		}
		fc2 := newFakeClient(t, func(metadata.Notification) (int, string) { return 500, "must not be asked" })
		text, isErr = resultText(t, (invokeWith(t, srv.URL, "ask", fc2.offer(metadata.InputModeInputRequired, all, answers))))
		assert.False(t, isErr, text)
		assert.Equal(t, "accept|hey|file:///x", text)
		assert.Empty(t, fc2.requests(), "known answers are not asked again")
	})
}

// TestInputRequiredAnswersMustHaveTheResultShape: on MCP 2026-07-28 an
// answer that is not a result of its method is asked again, as a missing
// one is, and never reaches the handler.
func TestInputRequiredAnswersMustHaveTheResultShape(t *testing.T) {
	tests := []struct {
		name   string
		method string
		answer string
		usable bool
	}{
		{"elicitation accepted", metadata.MethodElicitationCreate, `{"action":"accept","content":{"ok":true}}`, true},
		{"elicitation declined", metadata.MethodElicitationCreate, `{"action":"decline"}`, true},
		{"elicitation cancelled, null content", metadata.MethodElicitationCreate, `{"action":"cancel","content":null}`, true},
		{"elicitation: a number", metadata.MethodElicitationCreate, `12345`, false},
		{"elicitation: null", metadata.MethodElicitationCreate, `null`, false},
		{"elicitation: unknown action", metadata.MethodElicitationCreate, `{"action":"maybe"}`, false},
		{"elicitation: content not an object", metadata.MethodElicitationCreate, `{"action":"accept","content":"x"}`, false},
		{"sampling", metadata.MethodSamplingCreate, `{"role":"assistant","content":{"type":"text","text":"hi"},"model":"m"}`, true},
		{"sampling: no content", metadata.MethodSamplingCreate, `{"role":"assistant","model":"m"}`, false},
		{"roots", metadata.MethodRootsList, `{"roots":[]}`, true},
		{"roots: missing", metadata.MethodRootsList, `{}`, false},
		{"roots: not a list", metadata.MethodRootsList, `{"roots":"file:///"}`, false},
		{"an unknown method", "ping", `{}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.usable, usableAnswer(tt.method, json.RawMessage(tt.answer)))
		})
	}

	srv := httptest.NewServer(askingApp(time.Minute).Handler())
	t.Cleanup(srv.Close)
	fc := newFakeClient(t, func(metadata.Notification) (int, string) { return 200, `{"inputRequired":true}` })
	text, isErr := resultText(t, invokeWith(t, srv.URL, "ask", fc.offer(metadata.InputModeInputRequired, `{"elicitation":{},"sampling":{},"roots":{}}`,
		map[string]any{"elicitation-1": 12345})))
	assert.True(t, isErr)
	assert.Contains(t, text, ErrInputRequired.Error())
	got := fc.requests()
	require.Len(t, got, 1)
	assert.Equal(t, "elicitation-1", got[0].Key, "the malformed answer is asked again")
}

func TestClientRequestTimeLimitAndCancel(t *testing.T) {
	srv := httptest.NewServer(askingApp(100 * time.Millisecond).Handler())
	t.Cleanup(srv.Close)
	release := make(chan struct{})
	fc := newFakeClient(t, func(metadata.Notification) (int, string) {
		<-release // the client never answers
		return 200, "{}"
	})
	t.Cleanup(func() { close(release) }) // before the server closes (cleanups run last first)
	text, isErr := resultText(t, (invokeWith(t, srv.URL, "ask", fc.offer(metadata.InputModeStream, `{"elicitation":{}}`, nil))))
	assert.True(t, isErr)
	assert.Contains(t, text, "the MCP client did not answer elicitation/create within 100ms")

	// The call's own context ends the wait too.
	cr := &ClientRequests{ch: &notifier{ctx: context.Background(), url: fc.srv.URL, auth: "Bearer x"}, mode: metadata.InputModeStream,
		caps: map[string]json.RawMessage{"roots": json.RawMessage(`{}`)}, timeout: time.Minute}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := cr.ListRoots(ctx); done <- err }()
	require.Eventually(t, func() bool { return len(fc.requests()) == 2 }, 10*time.Second, 5*time.Millisecond)
	cancel()
	select {
	case err := <-done:
		assert.True(t, errors.Is(err, context.Canceled), "%v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("the request did not end with its context")
	}
}

// TestRequestInputChecksCapabilitiesInKeyOrder: with several capabilities
// missing, the error names the one of the first key, every time.
func TestRequestInputChecksCapabilitiesInKeyOrder(t *testing.T) {
	cr := &ClientRequests{ch: &notifier{ctx: context.Background(), url: "http://127.0.0.1:9/n", auth: "Bearer x"},
		mode: metadata.InputModeStream, caps: map[string]json.RawMessage{}, timeout: time.Minute}
	reqs := map[string]InputRequest{
		"user_name":    ElicitationRequest("Name?", map[string]any{"type": "object"}),
		"greeting":     SamplingRequest(&CreateMessageParams{MaxTokens: 1}),
		"client_roots": RootsRequest(),
	}
	for range 20 { // map order varies from one range to the next
		_, err := cr.RequestInput(context.Background(), reqs)
		var ce *CapabilityError
		require.ErrorAs(t, err, &ce)
		assert.Equal(t, "roots", ce.Capability)
	}
}

// BenchmarkClientRequest is one invocation through the worker's handler
// (in process) of a tool that asks nothing, and of one that elicits once
// over a loopback channel whose host answers at once: the difference is
// what a request costs the worker (the client's own time aside).
func BenchmarkClientRequest(b *testing.B) {
	a := New(&Options{Stdout: io.Discard, Stderr: io.Discard})
	a.ConfigureMcpTool("plain").Handle(func(context.Context, *ToolContext) (*Result, error) { return TextResult("ok"), nil })
	a.ConfigureMcpTool("elicit").Handle(func(ctx context.Context, tc *ToolContext) (*Result, error) {
		el, err := tc.Elicit(ctx, "Proceed?", map[string]any{"type": "object", "properties": map[string]any{"ok": map[string]any{"type": "boolean"}}})
		if err != nil {
			return nil, err
		}
		return TextResult(el.Action), nil
	})
	h := a.Handler()
	host := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		_, _ = io.WriteString(w, `{"result":{"action":"accept","content":{"ok":true}}}`)
	}))
	b.Cleanup(host.Close)
	for _, tool := range []string{"plain", "elicit"} {
		b.Run(tool, func(b *testing.B) {
			payload := []byte(body(b, `{"name":"`+tool+`","arguments":{}}`, 1))
			b.ReportAllocs()
			for b.Loop() {
				req := httptest.NewRequest(http.MethodPost, "/"+tool, bytes.NewReader(payload))
				req.Header.Set(metadata.HeaderNotifyURL, host.URL+"/n")
				req.Header.Set(metadata.HeaderNotifyToken, "tok")
				req.Header.Set(metadata.HeaderInputMode, metadata.InputModeStream)
				req.Header.Set(metadata.HeaderClientCapabilities, metadata.EncodeHeaderJSON(json.RawMessage(`{"elicitation":{}}`)))
				w := httptest.NewRecorder()
				h.ServeHTTP(w, req)
				if w.Code != http.StatusOK || strings.Contains(w.Body.String(), `isError`) {
					b.Fatal(w.Body.String())
				}
			}
		})
	}
}
