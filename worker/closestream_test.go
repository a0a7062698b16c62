package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/metadata"
)

// streamHost is the host end of the channel for CloseSSEStream: it records
// each notification and answers closeStream with status.
type streamHost struct {
	srv    *httptest.Server
	status int

	mu     sync.Mutex
	auth   []string
	bodies []string
}

// postRaw posts an invocation of fn whose context is context (encoded once)
// with the given headers, and returns the status and body, whatever they are.
func postRaw(t *testing.T, url, fn, context string, headers map[string]string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url+"/"+fn, strings.NewReader(body(t, context, 1)))
	require.NoError(t, err)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res.StatusCode, data
}

func newStreamHost(t *testing.T, status int) *streamHost {
	t.Helper()
	h := &streamHost{status: status}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, _ := io.ReadAll(r.Body)
		h.mu.Lock()
		h.auth = append(h.auth, r.Header.Get("Authorization"))
		h.bodies = append(h.bodies, string(data))
		h.mu.Unlock()
		if strings.Contains(string(data), `"closeStream"`) {
			w.WriteHeader(h.status)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(h.srv.Close)
	return h
}

func (h *streamHost) got() (auth, bodies []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.auth...), append([]string(nil), h.bodies...)
}

// reconnectingApp has a tool "reconnect" that closes the stream, reports
// progress after it and answers with what CloseSSEStream returned.
func reconnectingApp() *App {
	a := New(&Options{Stdout: io.Discard, Stderr: io.Discard})
	a.ConfigureMcpTool("reconnect").Handle(func(ctx context.Context, tc *ToolContext) (*Result, error) {
		tc.Progress(1, 2, "before")
		err := tc.CloseSSEStream(ctx)
		tc.Progress(2, 2, "after")
		if err != nil {
			return TextResult(fmt.Sprintf("not supported=%v: %v", errors.Is(err, ErrNotSupported), err)), nil
		}
		return TextResult("closed"), nil
	})
	return a
}

func TestCloseSSEStream(t *testing.T) {
	srv := httptest.NewServer(reconnectingApp().Handler())
	t.Cleanup(srv.Close)
	tests := []struct {
		name      string
		status    int  // the host's answer to closeStream
		resumable bool // the host offers it
		channel   bool // the host offers a channel at all
		want      string
		sent      []string // the notifications the host receives
	}{
		{name: "closed", status: http.StatusNoContent, resumable: true, channel: true, want: "closed",
			sent: []string{`{"type":"progress","progress":1,"total":2,"message":"before"}`, `{"type":"closeStream"}`, `{"type":"progress","progress":2,"total":2,"message":"after"}`}},
		{name: "the stream cannot be resumed: 409", status: http.StatusConflict, resumable: true, channel: true,
			want: "not supported=true: closing the client's response stream: the host cannot, the stream of this call is not resumable",
			sent: []string{`{"type":"progress","progress":1,"total":2,"message":"before"}`, `{"type":"closeStream"}`, `{"type":"progress","progress":2,"total":2,"message":"after"}`}},
		{name: "the call ended: 404 stops later sends", status: http.StatusNotFound, resumable: true, channel: true,
			want: "not supported=false: closing the client's response stream: the host answered 404 Not Found",
			sent: []string{`{"type":"progress","progress":1,"total":2,"message":"before"}`, `{"type":"closeStream"}`}},
		{name: "not offered: nothing is sent", status: http.StatusNoContent, channel: true,
			want: "not supported=true: closing the client's response stream: the host does not offer it for this call",
			sent: []string{`{"type":"progress","progress":1,"total":2,"message":"before"}`, `{"type":"progress","progress":2,"total":2,"message":"after"}`}},
		{name: "no channel (the real Azure Functions host)", status: http.StatusNoContent,
			want: "not supported=true: closing the client's response stream: the host does not offer it for this call"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newStreamHost(t, tt.status)
			headers := map[string]string{}
			if tt.channel {
				headers[metadata.HeaderNotifyURL] = h.srv.URL + "/invocations/1/notifications"
				headers[metadata.HeaderNotifyToken] = "tok"
				headers[metadata.HeaderNotifyProgress] = "true"
			}
			if tt.resumable {
				headers[metadata.HeaderResumable] = "true"
			}
			text, isErr := resultText(t, invokeWith(t, srv.URL, "reconnect", headers))
			assert.False(t, isErr)
			assert.Equal(t, tt.want, text)
			auth, bodies := h.got()
			require.Len(t, bodies, len(tt.sent), "%q", bodies)
			for i := range tt.sent {
				assert.JSONEq(t, tt.sent[i], bodies[i])
				assert.Equal(t, "Bearer tok", auth[i])
			}
		})
	}
}

// TestCloseSSEStreamHonoursItsContext: a cancelled context ends the
// request, and does not break the channel for later notifications.
func TestCloseSSEStreamHonoursItsContext(t *testing.T) {
	h := newStreamHost(t, http.StatusNoContent)
	hdr := http.Header{}
	hdr.Set(metadata.HeaderNotifyURL, h.srv.URL+"/n")
	hdr.Set(metadata.HeaderNotifyToken, "tok")
	hdr.Set(metadata.HeaderNotifyProgress, "true")
	hdr.Set(metadata.HeaderResumable, "true")
	tc := &ToolContext{Name: "t", notify: newNotifier(context.Background(), hdr)}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := tc.CloseSSEStream(ctx)
	require.Error(t, err)
	assert.ErrorIs(t, err, context.Canceled)
	assert.NotErrorIs(t, err, ErrNotSupported)
	tc.Progress(1, 1, "still there")
	_, bodies := h.got()
	require.Len(t, bodies, 1)
	assert.JSONEq(t, `{"type":"progress","progress":1,"total":1,"message":"still there"}`, bodies[0])
}

// TestCapabilityErrorFailsTheInvocation: a tool or prompt handler that
// returns an error wrapping a *CapabilityError fails the invocation with
// HTTP 500 and -32021 naming the capability; any other error is a tool
// result with isError.
func TestCapabilityErrorFailsTheInvocation(t *testing.T) {
	a := New(&Options{Stdout: io.Discard, Stderr: io.Discard})
	a.ConfigureMcpTool("sample").Handle(func(ctx context.Context, tc *ToolContext) (*Result, error) {
		msg, err := tc.CreateMessage(ctx, &CreateMessageParams{Messages: []SamplingMessage{{Role: "user", Content: Text("hi")}}, MaxTokens: 5})
		if err != nil {
			return nil, fmt.Errorf("asking the model: %w", err)
		}
		return TextResult(msg.Text()), nil
	})
	a.ConfigureMcpTool("roots").Handle(func(ctx context.Context, tc *ToolContext) (*Result, error) {
		_, err := tc.ListRoots(ctx)
		return nil, err // returned as is
	})
	a.ConfigureMcpTool("other").Handle(func(context.Context, *ToolContext) (*Result, error) {
		return nil, errors.New("plain failure")
	})
	a.ConfigureMcpPrompt("ask_prompt").Handle(func(ctx context.Context, pc *PromptContext) (*PromptResult, error) {
		el, err := pc.Elicit(ctx, "Context?", map[string]any{"type": "object"})
		if err != nil {
			return nil, err
		}
		return TextPromptResult(el.Action), nil
	})
	srv := httptest.NewServer(a.Handler())
	t.Cleanup(srv.Close)
	fc := newFakeClient(t, answerAll)
	none := fc.offer(metadata.InputModeStream, `{}`, nil)

	tests := []struct {
		name, function, context string
		header                  map[string]string
		status                  int
		failure                 string // the FailureReply, when 500
	}{
		{name: "tool, wrapped", function: "sample", context: `{"name":"sample","arguments":{}}`, header: none, status: 500,
			failure: `{"error":"asking the model: the MCP client does not support sampling/createMessage (no \"sampling\" capability)","code":-32021,` +
				`"data":{"requiredCapabilities":{"sampling":{}}},"Logs":["tool sample failed: asking the model: the MCP client does not support sampling/createMessage (no \"sampling\" capability)"]}`},
		{name: "tool, as is", function: "roots", context: `{"name":"roots","arguments":{}}`, header: none, status: 500,
			failure: `{"error":"the MCP client does not support roots/list (no \"roots\" capability)","code":-32021,` +
				`"data":{"requiredCapabilities":{"roots":{}}},"Logs":["tool roots failed: the MCP client does not support roots/list (no \"roots\" capability)"]}`},
		{name: "prompt", function: "ask_prompt", context: `{"name":"ask_prompt","arguments":{}}`, header: none, status: 500,
			failure: `{"error":"the MCP client does not support elicitation/create (no \"elicitation\" capability)","code":-32021,` +
				`"data":{"requiredCapabilities":{"elicitation":{}}},"Logs":["prompt ask_prompt failed: the MCP client does not support elicitation/create (no \"elicitation\" capability)"]}`},
		{name: "another error is an isError result", function: "other", context: `{"name":"other","arguments":{}}`, header: none, status: 200},
		{name: "no channel: not supported, a result", function: "sample", context: `{"name":"sample","arguments":{}}`, status: 200},
		{name: "capability declared", function: "sample", context: `{"name":"sample","arguments":{}}`,
			header: fc.offer(metadata.InputModeStream, `{"sampling":{}}`, nil), status: 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body := postRaw(t, srv.URL, tt.function, tt.context, tt.header)
			require.Equal(t, tt.status, status, "%s", body)
			if tt.failure != "" {
				assert.JSONEq(t, tt.failure, string(body))
				return
			}
			var fr metadata.FailureReply
			assert.False(t, json.Unmarshal(body, &fr) == nil && fr.Code != 0, "a result, not a failure: %s", body)
		})
	}
	assert.Len(t, fc.requests(), 1, "only the call with the capability declared asked the client")
}
