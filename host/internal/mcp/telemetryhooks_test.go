package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/host/internal/mcp/taskrun"
	"github.com/funcmcp/funcmcp/host/internal/tasks"
	"github.com/funcmcp/funcmcp/metadata"
)

type runTraceKey struct{}

// TestTasksGetLinksToTheRunTrace: with TaskOptions.Traceparent, a task's
// record keeps the traceparent of the context its record was made under
// (the run), and a later tasks/get of it names that trace to the chain's
// links (Exchange.LinkedTrace), which a tools/call does not.
func TestTasksGetLinksToTheRunTrace(t *testing.T) {
	const run = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	var mu sync.Mutex
	linked := map[string]string{} // method → LinkedTrace
	store := tasks.NewMemory(nil)
	s := taskServerWith(t, store, 0, true, func(ctx context.Context, req *CallRequest) (*metadata.CallToolResult, error) {
		if err := req.Notify.Admitted(context.WithValue(ctx, runTraceKey{}, run)); err != nil {
			return nil, err
		}
		return &metadata.CallToolResult{Content: []json.RawMessage{metadata.TextContent("ran")}}, nil
	}, func(h *handler) {
		h.tasks = taskrun.NewService(&TaskOptions{Store: store, Traceparent: func(ctx context.Context) string {
			tp, _ := ctx.Value(runTraceKey{}).(string)
			return tp
		}}, h.instanceID, h.log)
		h.chain = h.buildChain([]Middleware{func(next MethodHandler) MethodHandler {
			return func(x *Exchange) {
				next(x)
				mu.Lock()
				linked[x.Method()] = x.LinkedTrace()
				mu.Unlock()
			}
		}})
	})
	id := createTask(t, s, "job", nil, nil)
	waitStatus(t, s, id, "completed")
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, run, linked[methodTasksGet])
	assert.Empty(t, linked[methodToolsCall])
}

// TestLogMessagesCarryTheCallsTraceparent: after SetTraceparent, each
// notifications/message of the call has _meta.traceparent.
func TestLogMessagesCarryTheCallsTraceparent(t *testing.T) {
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	s := startServer(t, nil)
	token := initSession(t, s, "2025-11-25")
	session := map[string]string{headerSessionID: token, headerProtocolVersion: "2025-11-25"}
	r := s.post(t, rpc(2, "logging/setLevel", map[string]any{"level": "info"}), session)
	require.Equal(t, http.StatusOK, r.status)
	s.tools.call = func(_ context.Context, req *CallRequest) (*metadata.CallToolResult, error) {
		req.Notify.SetTraceparent(tp)
		if err := req.Notify.Log("info", "tool", json.RawMessage(`"working"`)); err != nil {
			return nil, err
		}
		return &metadata.CallToolResult{Content: []json.RawMessage{metadata.TextContent("done")}}, nil
	}
	_, _, body := s.stream(t, callWithMeta(3, nil), session)
	events := sseEvents(t, body)
	require.Len(t, events, 2, body)
	assert.JSONEq(t, `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","logger":"tool","data":"working","_meta":{"traceparent":"`+tp+`"}}}`, events[0])
}

// TestLegacySSEMessagesCarryTheirOwnTraceparent: a message of a legacy SSE
// stream runs with the traceparent of the POST that sent it (or the one
// DeliverTraced names, a backplane hop's) instead of the stream's GET's;
// without one, the GET's.
func TestLegacySSEMessagesCarryTheirOwnTraceparent(t *testing.T) {
	const get, posted, hop = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "00-5bf92f3577b34da6a3ce929d0e0e4737-00f067aa0ba902b8-01"
	s := startSSEServer(t, &LegacySSEOptions{InstanceID: "inst1"})
	seen := make(chan string, 3)
	s.tools.call = func(_ context.Context, req *CallRequest) (*metadata.CallToolResult, error) {
		seen <- req.Headers.Get("Traceparent")
		return &metadata.CallToolResult{Content: []json.RawMessage{metadata.TextContent("done")}}, nil
	}
	st := openStream(t, s.URL, "", http.Header{"Traceparent": {get}})
	u, err := url.Parse(st.Endpoint)
	require.NoError(t, err)
	client, _, _, ok := s.sse.OpenState(u.Query().Get(queryClientState))
	require.True(t, ok)
	call := func(id int) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`, id)
	}

	req, err := http.NewRequest(http.MethodPost, st.Endpoint, strings.NewReader(call(1)))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Traceparent", posted)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusAccepted, resp.StatusCode)
	assert.Equal(t, posted, <-seen, "the POST's")
	next(t, st)

	require.Equal(t, Delivered, s.sse.DeliverTraced(client, []byte(call(2)), hop))
	assert.Equal(t, hop, <-seen, "the hop's")
	next(t, st)

	require.Equal(t, Delivered, s.sse.Deliver(client, []byte(call(3))))
	assert.Equal(t, get, <-seen, "the stream's")
	next(t, st)
}
