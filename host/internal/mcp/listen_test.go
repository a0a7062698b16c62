package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/host/internal/notify"
	"github.com/funcmcp/funcmcp/host/internal/owner"
	"github.com/funcmcp/funcmcp/host/internal/tasks"
	"github.com/funcmcp/funcmcp/metadata"
)

// eventStream reads the events of an open SSE response.
type eventStream struct {
	resp *http.Response
	r    *bufio.Reader
	stop context.CancelFunc
}

// next returns the data of the next event (comments skipped); "" at the
// end of the stream.
func (e *eventStream) next(t *testing.T) string {
	t.Helper()
	var data string
	for {
		line, err := e.r.ReadString('\n')
		if err != nil {
			return data
		}
		line = strings.TrimRight(line, "\n")
		switch {
		case line == "" && data != "":
			return data
		case strings.HasPrefix(line, "data: "):
			data = strings.TrimPrefix(line, "data: ")
		}
	}
}

func (e *eventStream) close() {
	e.stop()
	_ = e.resp.Body.Close()
}

// open sends a request and keeps its response open.
func open(t *testing.T, method, url, body string, headers map[string]string) *eventStream {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	require.NoError(t, err)
	req.Header.Set("Accept", acceptBoth)
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	e := &eventStream{resp: resp, r: bufio.NewReader(resp.Body), stop: cancel}
	t.Cleanup(e.close)
	return e
}

// notifyServer serves the fake functions (resources, no prompts) with a
// hub.
func notifyServer(t *testing.T, opts *Options) (*testServer, *notify.Hub) {
	t.Helper()
	f := &fakeFunctions{fakeTools: newFakeTools(), lists: &FunctionLists{Resources: entries(1, `{"name":"r%d","uri":"test://a"}`)}}
	hub := notify.NewHub(notify.Limits{}, nil)
	o := Options{}
	if opts != nil {
		o = *opts
	}
	o.Notify, o.Sealer, o.ServerInfo = hub, testSealer, Implementation{Name: "modern-test", Version: "9.9.9"}
	logs := &syncBuffer{}
	o.Logger = slog.New(slog.NewTextHandler(logs, nil))
	srv := httptest.NewServer(NewHandler(serverOf(f), &o))
	t.Cleanup(srv.Close)
	t.Cleanup(hub.Close)
	return &testServer{Server: srv, tools: f.fakeTools, logs: logs}, hub
}

func listenBody(id any, filter map[string]any, caps map[string]any) string {
	meta := modernMeta(ModernVersion)
	if caps != nil {
		meta[MetaClientCapabilities] = caps
	}
	return rpc(id, methodListen, map[string]any{"notifications": filter, "_meta": meta})
}

func TestListenStream(t *testing.T) {
	s, hub := notifyServer(t, nil)
	body := listenBody("L1", map[string]any{"toolsListChanged": true, "promptsListChanged": true, "resourceSubscriptions": []string{"test://a"}, "somethingNew": true}, nil)
	st := open(t, http.MethodPost, s.URL, body, modernHeaders(methodListen, ""))
	require.Equal(t, http.StatusOK, st.resp.StatusCode)
	assert.Equal(t, "text/event-stream", st.resp.Header.Get("Content-Type"))
	assert.Equal(t, "no", st.resp.Header.Get("X-Accel-Buffering"))
	assert.JSONEq(t, `{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"notifications":{"toolsListChanged":true,"resourceSubscriptions":["test://a"]},"_meta":{"io.modelcontextprotocol/subscriptionId":"L1"}}}`,
		st.next(t), "only what was asked and is served (no prompts here) is acknowledged")

	hub.Publish(notify.Change{Kind: notify.ResourceUpdated, URI: "test://b"})
	hub.Publish(notify.Change{Kind: notify.PromptsListChanged})
	hub.Publish(notify.Change{Kind: notify.ResourcesListChanged})
	hub.Publish(notify.Change{Kind: notify.ResourceUpdated, URI: "test://a"})
	hub.Publish(notify.Change{Kind: notify.ToolsListChanged})
	assert.JSONEq(t, `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"test://a","_meta":{"io.modelcontextprotocol/subscriptionId":"L1"}}}`, st.next(t))
	assert.JSONEq(t, `{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"L1"}}}`, st.next(t))

	hub.Close()
	assert.JSONEq(t, `{"jsonrpc":"2.0","id":"L1","result":{"resultType":"complete","_meta":{"io.modelcontextprotocol/subscriptionId":"L1",`+
		`"io.modelcontextprotocol/serverInfo":{"name":"modern-test","version":"9.9.9"}}}}`, st.next(t), "a graceful end answers the request")
	assert.Empty(t, st.next(t), "and the stream ends")
}

func TestListenKeepAliveAndClosingCancels(t *testing.T) {
	s, hub := notifyServer(t, &Options{ListenKeepAlive: 20 * time.Millisecond})
	st := open(t, http.MethodPost, s.URL, listenBody(7, map[string]any{"toolsListChanged": true}, nil), modernHeaders(methodListen, ""))
	st.next(t)
	line, err := st.r.ReadString('\n')
	require.NoError(t, err)
	assert.Equal(t, ": keep-alive\n", line)
	assert.Equal(t, 1, hub.Listeners())
	st.close()
	require.Eventually(t, func() bool { return hub.Listeners() == 0 && hub.Counted() == 0 }, 10*time.Second, 5*time.Millisecond,
		"closing the stream ends the subscription")
}

func TestListenRefusals(t *testing.T) {
	s, _ := notifyServer(t, &Options{})
	for name, tc := range map[string]struct {
		body    string
		accept  string
		status  int
		code    int
		message string
	}{
		"no filter": {rpc(1, methodListen, map[string]any{"_meta": modernMeta(ModernVersion)}), "", 200, CodeInvalidParams, "notifications must be an object"},
		"bad uris":  {listenBody(1, map[string]any{"resourceSubscriptions": "x"}, nil), "", 200, CodeInvalidParams, "resourceSubscriptions must be an array"},
		"bad flag":  {listenBody(1, map[string]any{"toolsListChanged": "yes"}, nil), "", 200, CodeInvalidParams, "must be a boolean"},
		"tasks ext": {listenBody(1, map[string]any{"taskIds": []string{"t"}}, nil), "", 400, CodeMissingRequiredClientCapability, "taskIds needs"},
		"json only": {listenBody(1, map[string]any{"toolsListChanged": true}, nil), "application/json", 406, codeServerError, "accept text/event-stream"},
	} {
		h := modernHeaders(methodListen, "")
		if tc.accept != "" {
			h["Accept"] = tc.accept
		}
		r := s.post(t, tc.body, h)
		assert.Equal(t, tc.status, r.status, name)
		var env envelope
		require.NoError(t, json.Unmarshal([]byte(r.data), &env), name)
		if assert.NotNil(t, env.Error, name) {
			assert.Equal(t, tc.code, env.Error.Code, name)
			assert.Contains(t, env.Error.Message, tc.message, name)
		}
	}
	// Without a hub the method does not exist.
	r := startModernServer(t).post(t, listenBody(1, map[string]any{"toolsListChanged": true}, nil), modernHeaders(methodListen, ""))
	assert.Equal(t, http.StatusNotFound, r.status)
}

func TestListenerLimitPerClient(t *testing.T) {
	f := &fakeFunctions{fakeTools: newFakeTools(), lists: &FunctionLists{}}
	hub := notify.NewHub(notify.Limits{Listeners: owner.Limit{PerOwner: 1}}, nil)
	srv := httptest.NewServer(NewHandler(serverOf(f), &Options{Notify: hub, Sealer: testSealer}))
	defer srv.Close()
	defer hub.Close() // first: it ends the open stream
	s := &testServer{Server: srv}
	open(t, http.MethodPost, s.URL, listenBody(1, map[string]any{"toolsListChanged": true}, nil), modernHeaders(methodListen, "")).next(t)
	r := s.post(t, listenBody(2, map[string]any{"toolsListChanged": true}, nil), modernHeaders(methodListen, ""))
	assert.Contains(t, r.data, "too many listeners for this client (the limit is 1); "+notify.SettingListenersPerClient+" changes it")
}

func TestCapabilitiesWithNotifications(t *testing.T) {
	s, _ := notifyServer(t, nil)
	r := s.post(t, rpc(1, methodInitialize, map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}}), nil)
	assert.Contains(t, r.data, `"capabilities":{"logging":{},"tools":{"listChanged":true},"resources":{"subscribe":true,"listChanged":true}`)
	r = s.post(t, rpc(1, methodDiscover, map[string]any{"_meta": modernMeta(ModernVersion)}), modernHeaders(methodDiscover, ""))
	assert.Contains(t, r.data, `"capabilities":{"tools":{"listChanged":true},"resources":{"subscribe":true,"listChanged":true}}`)
}

func TestSessionStreamAndResourceSubscriptions(t *testing.T) {
	s, hub := notifyServer(t, nil)
	token := initSession(t, s, "2025-11-25")
	sess := map[string]string{headerSessionID: token, "MCP-Protocol-Version": "2025-11-25"}
	r := s.post(t, rpc(2, methodSubscribe, map[string]any{"uri": "test://a"}), sess)
	assert.JSONEq(t, `{"jsonrpc":"2.0","id":2,"result":{}}`, r.data)

	st := open(t, http.MethodGet, s.URL, "", map[string]string{headerSessionID: token, "Accept": "text/event-stream"})
	require.Equal(t, http.StatusOK, st.resp.StatusCode)
	require.Eventually(t, func() bool { return hub.Listeners() == 1 }, 10*time.Second, 5*time.Millisecond)
	r = s.post(t, rpc(3, methodSubscribe, map[string]any{"uri": "test://c"}), sess)
	assert.JSONEq(t, `{"jsonrpc":"2.0","id":3,"result":{}}`, r.data, "a subscription made while the stream is open")

	hub.Publish(notify.Change{Kind: notify.ResourceUpdated, URI: "test://b"})
	hub.Publish(notify.Change{Kind: notify.ResourceUpdated, URI: "test://a"})
	hub.Publish(notify.Change{Kind: notify.ToolsListChanged})
	hub.Publish(notify.Change{Kind: notify.PromptsListChanged})
	hub.Publish(notify.Change{Kind: notify.ResourceUpdated, URI: "test://c"})
	assert.JSONEq(t, `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"test://a"}}`, st.next(t))
	assert.JSONEq(t, `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`, st.next(t))
	assert.JSONEq(t, `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"test://c"}}`, st.next(t),
		"no prompts list change: this app has no prompts")

	r = s.post(t, rpc(4, methodUnsubscribe, map[string]any{"uri": "test://a"}), sess)
	assert.JSONEq(t, `{"jsonrpc":"2.0","id":4,"result":{}}`, r.data)
	hub.Publish(notify.Change{Kind: notify.ResourceUpdated, URI: "test://a"})
	hub.Publish(notify.Change{Kind: notify.ResourcesListChanged})
	assert.JSONEq(t, `{"jsonrpc":"2.0","method":"notifications/resources/list_changed"}`, st.next(t), "no update after unsubscribing")

	// A second stream of the session replaces the first.
	st2 := open(t, http.MethodGet, s.URL, "", map[string]string{headerSessionID: token, "Accept": "text/event-stream"})
	require.Equal(t, http.StatusOK, st2.resp.StatusCode)
	assert.Empty(t, st.next(t), "the first stream ends")
	hub.Publish(notify.Change{Kind: notify.ResourceUpdated, URI: "test://c"})
	assert.JSONEq(t, `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"test://c"}}`, st2.next(t))

	// Refusals.
	r = s.post(t, rpc(5, methodSubscribe, map[string]any{"uri": ""}), sess)
	assert.Contains(t, r.data, `"code":-32602`)
	r = s.post(t, rpc(6, methodSubscribe, map[string]any{"uri": "test://a"}), map[string]string{"MCP-Protocol-Version": "2025-11-25"})
	assert.Contains(t, r.data, "needs a session")
	g := s.do(t, http.MethodGet, nil, map[string]string{"Accept": "text/event-stream"})
	assert.Equal(t, http.StatusMethodNotAllowed, g.status, "no session: no stream")
}

func TestSubscribeNeedsResources(t *testing.T) {
	hub := notify.NewHub(notify.Limits{}, nil)
	defer hub.Close()
	srv := httptest.NewServer(NewHandler(serverOf(newFakeTools()), &Options{Notify: hub, Sealer: testSealer}))
	defer srv.Close()
	s := &testServer{Server: srv}
	token := initSession(t, s, "2025-11-25")
	r := s.post(t, rpc(2, methodSubscribe, map[string]any{"uri": "test://a"}), map[string]string{headerSessionID: token})
	assert.Contains(t, r.data, `"code":-32601`, "an app without resources has no resources/subscribe")
}

func TestListenTaskStatus(t *testing.T) {
	release := make(chan struct{})
	hub := notify.NewHub(notify.Limits{}, nil)
	defer hub.Close()
	s := taskServerWith(t, tasks.NewMemory(nil), 0, false, func(ctx context.Context, req *CallRequest) (*metadata.CallToolResult, error) {
		<-release
		return &metadata.CallToolResult{Content: []json.RawMessage{metadata.TextContent("done")}}, nil
	}, func(h *handler) {
		h.hub = hub
		h.tasks.Publish(hub)
	})
	id := createTask(t, s, "job", map[string]any{}, nil)
	st := open(t, http.MethodPost, s.URL, listenBody("T", map[string]any{"taskIds": []string{id, "unknown"}}, tasksCaps), modernHeaders(methodListen, ""))
	assert.JSONEq(t, `{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"notifications":{"taskIds":["`+id+`","unknown"]},"_meta":{"io.modelcontextprotocol/subscriptionId":"T"}}}`, st.next(t))
	var n struct {
		Method string `json:"method"`
		Params struct {
			TaskID string          `json:"taskId"`
			Status string          `json:"status"`
			Result json.RawMessage `json:"result"`
			Meta   map[string]any  `json:"_meta"`
		} `json:"params"`
	}
	require.NoError(t, json.Unmarshal([]byte(st.next(t)), &n))
	assert.Equal(t, "notifications/tasks", n.Method)
	assert.Equal(t, id, n.Params.TaskID)
	assert.Equal(t, "working", n.Params.Status, "the task's state when the stream opened")
	assert.Equal(t, "T", n.Params.Meta[MetaSubscriptionID])

	// Another client (other credentials) listening for the same id hears nothing.
	other := open(t, http.MethodPost, s.URL, listenBody("O", map[string]any{"taskIds": []string{id}}, tasksCaps),
		map[string]string{"MCP-Protocol-Version": ModernVersion, "Mcp-Method": methodListen, "x-functions-key": "someone-else"})
	other.next(t)

	close(release)
	for n.Params.Status != "completed" {
		require.NoError(t, json.Unmarshal([]byte(st.next(t)), &n))
		require.Equal(t, id, n.Params.TaskID)
	}
	assert.JSONEq(t, `{"content":[{"type":"text","text":"done"}],"resultType":"complete",`+serverInfoMeta+`}`, string(n.Params.Result),
		"the whole task, its result inlined as tasks/get gives it")
	assert.Equal(t, "completed", str(t, getTask(t, s, id, nil).Result["status"]), "tasks/get still answers")

	hub.Publish(notify.Change{Kind: notify.ToolsListChanged}) // not asked for by either
	hub.Close()
	assert.Contains(t, other.next(t), `"resultType":"complete"`, "the other client heard nothing before the end")
}
