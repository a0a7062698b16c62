package mcp

import (
	"context"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/metadata"
)

// stream posts body and returns the raw reply, without expecting one event.
func (s *testServer) stream(t *testing.T, body string, headers map[string]string) (status int, header http.Header, raw string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.URL, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Accept", acceptBoth)
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := s.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, resp.Header, string(data)
}

// sseEvents splits an SSE body into the data of its "message" events.
func sseEvents(t *testing.T, raw string) []string {
	t.Helper()
	raw = withoutResumption(raw)
	require.True(t, strings.HasSuffix(raw, "\n\n"), "SSE body %q", raw)
	var out []string
	for _, ev := range strings.Split(strings.TrimSuffix(raw, "\n\n"), "\n\n") {
		data, ok := strings.CutPrefix(ev, "event: message\ndata: ")
		require.True(t, ok, "event %q", ev)
		require.NotContains(t, data, "\n", "SSE data must be one line")
		require.True(t, json.Valid([]byte(data)), "event data %q", data)
		out = append(out, data)
	}
	return out
}

// notificationKinds names the events before the last (the result) of a
// notifyingCall: "progress", or the level of a log message, whose logger and
// data it checks.
func notificationKinds(t *testing.T, events []string) []string {
	t.Helper()
	var kinds []string
	for _, ev := range events[:len(events)-1] {
		var n struct {
			Method string `json:"method"`
			Params struct {
				Level  string `json:"level"`
				Logger string `json:"logger"`
				Data   string `json:"data"`
			} `json:"params"`
		}
		require.NoError(t, json.Unmarshal([]byte(ev), &n))
		switch n.Method {
		case "notifications/progress":
			kinds = append(kinds, "progress")
		case "notifications/message":
			assert.Equal(t, "tool", n.Params.Logger)
			assert.Equal(t, "at "+n.Params.Level, n.Params.Data)
			kinds = append(kinds, n.Params.Level)
		default:
			t.Errorf("unexpected event %s", ev)
		}
	}
	return kinds
}

// notifyingCall is a tool that reports progress 1, 2, 3 of 3 and logs at
// every level, recording what the Notifier answered.
func notifyingCall(errs *[]error) func(context.Context, *CallRequest) (*metadata.CallToolResult, error) {
	return func(_ context.Context, req *CallRequest) (*metadata.CallToolResult, error) {
		for i := 1; i <= 3; i++ {
			*errs = append(*errs, req.Notify.Progress(float64(i), 3, "step "+itoa(i)))
		}
		for _, lvl := range metadata.LogLevels {
			*errs = append(*errs, req.Notify.Log(lvl, "tool", json.RawMessage(`"at `+lvl+`"`)))
		}
		return &metadata.CallToolResult{Content: []json.RawMessage{metadata.TextContent("done")}}, nil
	}
}

func callWithMeta(id int, meta map[string]any) string {
	params := map[string]any{"name": "echo", "arguments": map[string]any{}}
	if meta != nil {
		params["_meta"] = meta
	}
	return rpc(id, "tools/call", params)
}

// initSession initializes at version and returns the Mcp-Session-Id.
func initSession(t *testing.T, s *testServer, version string) string {
	t.Helper()
	r := s.post(t, rpc(0, "initialize", map[string]any{"protocolVersion": version, "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "t", "version": "1"}}), nil)
	require.Equal(t, http.StatusOK, r.status, r.body)
	token := r.header.Get(headerSessionID)
	require.NotEmpty(t, token)
	return token
}

func TestProgressNotificationsPrecedeTheResult(t *testing.T) {
	s := startServer(t, nil)
	var errs []error
	s.tools.call = notifyingCall(&errs)
	status, header, body := s.stream(t, callWithMeta(7, map[string]any{"progressToken": "tok-1"}), map[string]string{headerProtocolVersion: "2025-11-25"})
	require.Equal(t, http.StatusOK, status)
	assert.Equal(t, "text/event-stream", header.Get("Content-Type"))
	events := sseEvents(t, body)
	require.Len(t, events, 4, body)
	for i := 1; i <= 3; i++ {
		assert.JSONEq(t, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"tok-1","progress":`+itoa(i)+`,"total":3,"message":"step `+itoa(i)+`"}}`, events[i-1])
	}
	assert.JSONEq(t, `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"done"}]}}`, events[3])
	for i, err := range errs {
		if i < 3 {
			assert.NoError(t, err, "progress %d", i+1)
		} else {
			assert.ErrorIs(t, err, ErrNotRequested, "no log level was set: log %d", i-3)
		}
	}
}

func TestProgressTokenKinds(t *testing.T) {
	tests := []struct {
		name  string
		token any
		want  string // the progressToken as sent back, "" for no notification
	}{
		{"string", "abc", `"abc"`},
		{"integer", 42, `42`},
		{"object is not a token", map[string]any{"a": 1}, ""},
		{"null is not a token", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := startServer(t, nil)
			var got error
			s.tools.call = func(_ context.Context, req *CallRequest) (*metadata.CallToolResult, error) {
				got = req.Notify.Progress(1, 0, "")
				return &metadata.CallToolResult{}, nil
			}
			status, _, body := s.stream(t, callWithMeta(1, map[string]any{"progressToken": tt.token}), nil)
			require.Equal(t, http.StatusOK, status)
			events := sseEvents(t, body)
			if tt.want == "" {
				assert.ErrorIs(t, got, ErrNotRequested)
				assert.Len(t, events, 1, "only the result")
				return
			}
			require.NoError(t, got)
			require.Len(t, events, 2)
			assert.JSONEq(t, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":`+tt.want+`,"progress":1}}`, events[0])
		})
	}
}

func TestNoNotificationsWithoutSSE(t *testing.T) {
	s := startServer(t, nil)
	var notify *Notifier
	s.tools.call = func(_ context.Context, req *CallRequest) (*metadata.CallToolResult, error) {
		notify = req.Notify
		return &metadata.CallToolResult{}, nil
	}
	r := s.post(t, callWithMeta(1, map[string]any{"progressToken": "p"}), map[string]string{"Accept": "application/json"})
	require.Equal(t, http.StatusOK, r.status)
	assert.Nil(t, notify, "a client that cannot read a stream gets no notifier")
	assert.ErrorIs(t, notify.Progress(1, 2, ""), ErrNotRequested, "a nil Notifier drops notifications")
	assert.JSONEq(t, `{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`, r.body)
}

func TestProgressMustIncrease(t *testing.T) {
	s := startServer(t, nil)
	var errs []error
	s.tools.call = func(_ context.Context, req *CallRequest) (*metadata.CallToolResult, error) {
		for _, p := range []float64{5, 5, 4, 6} {
			errs = append(errs, req.Notify.Progress(p, 10, ""))
		}
		return &metadata.CallToolResult{}, nil
	}
	_, _, body := s.stream(t, callWithMeta(1, map[string]any{"progressToken": "p"}), nil)
	require.Len(t, sseEvents(t, body), 3, "5, 6 and the result")
	require.Len(t, errs, 4)
	assert.NoError(t, errs[0])
	assert.ErrorIs(t, errs[1], ErrProgressNotIncreasing)
	assert.ErrorIs(t, errs[2], ErrProgressNotIncreasing)
	assert.NoError(t, errs[3])
}

func TestNotificationsAfterTheResultAreRefused(t *testing.T) {
	s := startServer(t, nil)
	var notify *Notifier
	s.tools.call = func(_ context.Context, req *CallRequest) (*metadata.CallToolResult, error) {
		notify = req.Notify
		return &metadata.CallToolResult{}, nil
	}
	_, _, body := s.stream(t, callWithMeta(1, map[string]any{"progressToken": "p"}), nil)
	require.Len(t, sseEvents(t, body), 1)
	require.NotNil(t, notify)
	assert.ErrorIs(t, notify.Progress(1, 0, ""), ErrCallEnded)
}

func TestLoggingSetLevelFiltersLogMessages(t *testing.T) {
	s := startServer(t, nil)
	token := initSession(t, s, "2025-11-25")
	session := map[string]string{headerSessionID: token, headerProtocolVersion: "2025-11-25"}
	var errs []error
	s.tools.call = notifyingCall(&errs)

	// Before logging/setLevel the session gets no log messages.
	_, _, body := s.stream(t, callWithMeta(1, nil), session)
	assert.Len(t, sseEvents(t, body), 1, "only the result: %s", body)

	r := s.post(t, rpc(2, "logging/setLevel", map[string]any{"level": "error"}), session)
	require.Equal(t, http.StatusOK, r.status)
	assert.JSONEq(t, `{"jsonrpc":"2.0","id":2,"result":{}}`, r.data)

	errs = nil
	_, _, body = s.stream(t, callWithMeta(3, nil), session)
	events := sseEvents(t, body)
	assert.Equal(t, []string{"error", "critical", "alert", "emergency"}, notificationKinds(t, events))
	assert.JSONEq(t, `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"done"}]}}`, events[len(events)-1])

	// Another session is not affected.
	other := initSession(t, s, "2025-11-25")
	_, _, body = s.stream(t, callWithMeta(4, nil), map[string]string{headerSessionID: other})
	assert.Len(t, sseEvents(t, body), 1)
}

func TestLoggingSetLevelParams(t *testing.T) {
	s := startServer(t, nil)
	tests := []struct {
		name   string
		params any
		want   string
	}{
		{"unknown level", map[string]any{"level": "verbose"}, errorBody("1", -32602, "Invalid params: unknown log level 'verbose'.")},
		{"missing level", map[string]any{}, errorBody("1", -32602, "Invalid params: missing required parameter 'level'.")},
		{"level not a string", map[string]any{"level": 3}, errorBody("1", -32602, "Invalid params: params must be an object with a string 'level'.")},
		{"every level is accepted", map[string]any{"level": "emergency"}, `{"jsonrpc":"2.0","id":1,"result":{}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.post(t, rpc(1, "logging/setLevel", tt.params), nil)
			require.Equal(t, http.StatusOK, r.status)
			assert.JSONEq(t, tt.want, r.data)
		})
	}
}

func TestInitializeAdvertisesLogging(t *testing.T) {
	s := startServer(t, nil)
	r := s.post(t, rpc(1, "initialize", map[string]any{"protocolVersion": "2025-06-18"}), nil)
	var reply struct {
		Result struct {
			Capabilities map[string]json.RawMessage `json:"capabilities"`
		} `json:"result"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.data), &reply))
	assert.JSONEq(t, `{}`, string(reply.Result.Capabilities["logging"]))
}

func TestProgressTokenFromParams(t *testing.T) {
	tests := []struct {
		name, params, token string
	}{
		{"none", `{"name":"x"}`, ""},
		{"string token", `{"name":"x","_meta":{"progressToken":"a"}}`, `"a"`},
		{"number token", `{"_meta":{"other":1,"progressToken":-1.5},"name":"x"}`, `-1.5`},
		{"bool token", `{"_meta":{"progressToken":true}}`, ""},
		{"meta not an object", `{"_meta":"progressToken"}`, ""},
		{"params not an object", `["_meta"]`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var msg message
			code, _ := decodeMessage([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":`+tt.params+`}`), &msg)
			require.Zero(t, code)
			assert.Equal(t, tt.token, string(progressToken(msg.Meta)))
		})
	}
}

func TestModernRequestsCarryTheirOwnLogLevel(t *testing.T) {
	s := startModernServer(t)
	var errs []error
	s.tools.setCall(notifyingCall(&errs))
	tests := []struct {
		name   string
		meta   map[string]any
		events []string // the methods of the events before the result
	}{
		{"no level, no token: nothing", nil, nil},
		{"level warning", map[string]any{MetaLogLevel: "warning"}, []string{"warning", "error", "critical", "alert", "emergency"}},
		{"token and level emergency", map[string]any{MetaLogLevel: "emergency", "progressToken": "m"}, []string{"progress", "progress", "progress", "emergency"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			meta := modernMeta(ModernVersion)
			maps.Copy(meta, tt.meta)
			body := rpc(1, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{}, "_meta": meta})
			status, _, raw := s.stream(t, body, modernHeaders("tools/call", "echo"))
			require.Equal(t, http.StatusOK, status, raw)
			events := sseEvents(t, raw)
			assert.Equal(t, tt.events, notificationKinds(t, events))
			assert.Contains(t, events[len(events)-1], `"id":1,"result"`)
		})
	}
}
