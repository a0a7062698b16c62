package mcp

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/host/internal/tasks"
	"github.com/funcmcp/funcmcp/metadata"
)

// seen is what a middleware saw of one exchange.
type seen struct {
	method, name, transport, version, outcome string
	batch, notification                       bool
}

// exchangeLog is a middleware that records every exchange.
type exchangeLog struct {
	mu  sync.Mutex
	all []seen
}

func (l *exchangeLog) link(next MethodHandler) MethodHandler {
	return func(x *Exchange) {
		next(x)
		l.mu.Lock()
		defer l.mu.Unlock()
		l.all = append(l.all, seen{method: x.Method(), name: x.Name(), transport: x.Transport(), version: x.ProtocolVersion(),
			outcome: x.Outcome(), batch: x.InBatch(), notification: x.Notification()})
	}
}

// since returns the exchanges recorded after the first n.
func (l *exchangeLog) since(n int) []seen {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]seen(nil), l.all[n:]...)
}

func (l *exchangeLog) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.all)
}

// TestMiddlewareSeesEveryMessage: one middleware sees every request and
// notification, whatever carries it: a Streamable HTTP post, each element
// of a batch, a legacy SSE stream, a 2026-07-28 request, a call that
// becomes a task and the task's methods, and the retry of an
// input-required call; it sees each one's revision and outcome.
func TestMiddlewareSeesEveryMessage(t *testing.T) {
	log := &exchangeLog{}
	ft := newFakeTools()
	ft.call = func(ctx context.Context, req *CallRequest) (*metadata.CallToolResult, error) {
		switch req.Name {
		case "job":
			return &metadata.CallToolResult{Content: []json.RawMessage{metadata.TextContent("done")}}, nil
		case "ask":
			return twoStepTool(ctx, req)
		}
		return echoCall(ctx, req)
	}
	srv := serverOf(ft)
	srv.TaskSupport = func(name string) *metadata.TaskSupport {
		if name == "job" {
			return &metadata.TaskSupport{Support: metadata.TaskOptional}
		}
		return nil
	}
	h := NewHandler(srv, &Options{Sealer: testSealer, Middleware: []Middleware{log.link},
		Tasks: &TaskOptions{Store: tasks.NewMemory(nil)}})
	sse, err := NewLegacySSE(h, &LegacySSEOptions{InstanceID: "inst1", Sealer: testSealer})
	require.NoError(t, err)
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	mux.HandleFunc("/runtime/webhooks/mcp/sse", sse.ServeStream)
	mux.HandleFunc("/runtime/webhooks/mcp/message", sse.ServeMessage)
	hs := httptest.NewServer(mux)
	base := hs.URL
	t.Cleanup(func() {
		sse.Close()
		hs.Close()
		h.StopTasks(context.Background())
	})
	s := &testServer{Server: hs, tools: ft}
	s.URL += "/mcp"
	echo := func(id any, text string) string {
		return rpc(id, methodToolsCall, map[string]any{"name": "echo", "arguments": map[string]any{"text": text}})
	}

	t.Run("streamable HTTP", func(t *testing.T) {
		n := log.len()
		s.post(t, echo(1, "a"), map[string]string{headerProtocolVersion: "2025-11-25"})
		s.post(t, rpc(nil, "notifications/initialized", nil), map[string]string{headerProtocolVersion: "2025-11-25"})
		assert.Equal(t, []seen{
			{method: methodToolsCall, name: "echo", transport: metadata.TransportStreamableHTTP, version: "2025-11-25", outcome: "ok"},
			{method: "notifications/initialized", transport: metadata.TransportStreamableHTTP, version: "2025-11-25", outcome: "accepted", notification: true},
		}, log.since(n))
	})

	t.Run("batch", func(t *testing.T) {
		n := log.len()
		r := s.post(t, "["+echo(1, "a")+","+rpc("p", methodPing, nil)+"]", map[string]string{headerProtocolVersion: batchVersion})
		require.Equal(t, http.StatusOK, r.status, r.body)
		assert.Equal(t, []seen{
			{method: methodToolsCall, name: "echo", transport: metadata.TransportStreamableHTTP, version: batchVersion, outcome: "ok", batch: true},
			{method: methodPing, transport: metadata.TransportStreamableHTTP, version: batchVersion, outcome: "ok", batch: true},
		}, log.since(n))
	})

	t.Run("legacy SSE", func(t *testing.T) {
		n := log.len()
		st := openStream(t, base, "", nil)
		code, _ := post(t, st.Endpoint, echo(7, "over sse"))
		require.Equal(t, http.StatusAccepted, code)
		assert.Contains(t, next(t, st).Data, "over sse")
		assert.Equal(t, []seen{
			{method: methodToolsCall, name: "echo", transport: metadata.TransportSSE, version: defaultVersion, outcome: "ok"},
		}, log.since(n))
	})

	t.Run("2026-07-28, a task and its methods", func(t *testing.T) {
		n := log.len()
		id := createTask(t, s, "job", nil, nil)
		waitStatus(t, s, id, string(tasks.StatusCompleted))
		got := log.since(n)
		require.GreaterOrEqual(t, len(got), 2)
		assert.Equal(t, seen{method: methodToolsCall, name: "job", transport: metadata.TransportStreamableHTTP, version: ModernVersion, outcome: "task"}, got[0])
		for _, g := range got[1:] {
			assert.Equal(t, seen{method: methodTasksGet, transport: metadata.TransportStreamableHTTP, version: ModernVersion, outcome: "ok"}, g)
		}
	})

	t.Run("an input-required call and its retry", func(t *testing.T) {
		n := log.len()
		call := func(extra map[string]any) inputRequiredResult {
			meta := modernMeta(ModernVersion)
			meta[MetaClientCapabilities] = askingCaps
			params := map[string]any{"name": "ask", "arguments": map[string]any{}, "_meta": meta}
			for k, v := range extra {
				params[k] = v
			}
			r := s.post(t, rpc(1, methodToolsCall, params), modernHeaders(methodToolsCall, "ask"))
			var env struct {
				Result inputRequiredResult `json:"result"`
			}
			require.NoError(t, json.Unmarshal([]byte(r.data), &env), r.data)
			return env.Result
		}
		first := call(nil)
		require.Equal(t, "input_required", first.ResultType)
		call(map[string]any{"requestState": first.RequestState,
			"inputResponses": map[string]any{"name": map[string]any{"action": "decline"}}})
		got := log.since(n)
		require.Len(t, got, 2)
		assert.Equal(t, "input_required", got[0].outcome)
		assert.Equal(t, "input_required", got[1].outcome, "the second question")
		assert.Equal(t, "ask", got[1].name)
	})

	t.Run("refusals before the method's handler", func(t *testing.T) {
		n := log.len()
		r := s.post(t, rpc(1, methodToolsList, nil), map[string]string{headerProtocolVersion: "1999-01-01"})
		require.Equal(t, http.StatusBadRequest, r.status)
		r = s.post(t, rpc(2, "nope/nope", nil), map[string]string{headerProtocolVersion: "2025-11-25"})
		require.Equal(t, http.StatusOK, r.status)
		assert.Equal(t, []seen{
			{method: methodToolsList, transport: metadata.TransportStreamableHTTP, outcome: "refused 400"},
			{method: "nope/nope", transport: metadata.TransportStreamableHTTP, version: "2025-11-25", outcome: "error -32601"},
		}, log.since(n))
	})
}

// TestMiddlewareMayRefuse: a link that fails an exchange answers it with
// its error; the method's handler never runs.
func TestMiddlewareMayRefuse(t *testing.T) {
	deny := func(next MethodHandler) MethodHandler {
		return func(x *Exchange) {
			if x.Method() == methodToolsCall && x.Name() == "add" {
				x.Fail(-32001, "Forbidden: add")
				return
			}
			next(x)
		}
	}
	log := &exchangeLog{}
	s := startServer(t, &Options{Middleware: []Middleware{log.link, deny}})
	hdr := map[string]string{headerProtocolVersion: "2025-11-25"}
	r := s.post(t, rpc(1, methodToolsCall, map[string]any{"name": "add", "arguments": map[string]any{"a": 1, "b": 2}}), hdr)
	assert.JSONEq(t, errorBody("1", -32001, "Forbidden: add"), r.data)
	s.post(t, rpc(2, methodToolsCall, map[string]any{"name": "echo", "arguments": map[string]any{"text": "x"}}), hdr)
	assert.Equal(t, "echo", s.tools.lastCall(t).Name, "add never reached the tool")
	s.tools.mu.Lock()
	assert.Len(t, s.tools.calls, 1)
	s.tools.mu.Unlock()
	got := log.since(0)
	require.Len(t, got, 2)
	assert.Equal(t, "error -32001", got[0].outcome, "the outer link sees the refusal")
	assert.Equal(t, "ok", got[1].outcome)
}

// TestCapabilitiesFromTheMethodTable: initialize and server/discover
// advertise what the table's methods need, each only when served.
func TestCapabilitiesFromTheMethodTable(t *testing.T) {
	all := func(string) bool { return true }
	none := func(c string) bool { return c == capLogging || c == capTools }
	assert.JSONEq(t, `{"logging":{},"tools":{"listChanged":false},"resources":{},"prompts":{},"completions":{}}`, capabilities("2025-06-18", all, false))
	assert.JSONEq(t, `{"logging":{},"tools":{"listChanged":false}}`, capabilities("2025-06-18", none, false))
	assert.JSONEq(t, `{"tools":{},"resources":{},"prompts":{},"completions":{},"extensions":{"`+ExtensionTasks+`":{}}}`, capabilities(ModernVersion, all, false))
	assert.JSONEq(t, `{"tools":{}}`, capabilities(ModernVersion, none, false))

	for _, m := range methods {
		assert.NotNil(t, m.serve, m.Name)
		assert.True(t, m.Has(m.Since), m.Name)
		if m.NameParam != "" {
			assert.True(t, strings.Contains(m.Name, "/"), m.Name)
		}
	}
	assert.True(t, isModernMethod(methodToolsCall, ModernVersion))
	assert.False(t, isModernMethod(methodPing, ModernVersion))
	assert.False(t, isModernMethod(methodTasksGet, LatestVersion))
}

// TestMiddlewareRefusesWithStatus: a link may refuse with an HTTP status
// and headers (429 with Retry-After here): the client gets that status,
// the headers and a JSON-RPC error naming the request's id; the handler
// never runs; in a batch the element gets the error in its place.
func TestMiddlewareRefusesWithStatus(t *testing.T) {
	limit := func(next MethodHandler) MethodHandler {
		return func(x *Exchange) {
			if x.Method() == methodToolsCall && x.Name() == "add" {
				x.Refuse(http.StatusTooManyRequests, http.Header{"Retry-After": {"3"}}, -32000, "Too many requests", nil)
				return
			}
			next(x)
		}
	}
	log := &exchangeLog{}
	s := startServer(t, &Options{Middleware: []Middleware{log.link, limit}})
	hdr := map[string]string{headerProtocolVersion: "2025-11-25"}
	r := s.post(t, rpc(1, methodToolsCall, map[string]any{"name": "add", "arguments": map[string]any{"a": 1, "b": 2}}), hdr)
	assert.Equal(t, http.StatusTooManyRequests, r.status)
	assert.Equal(t, "3", r.header.Get("Retry-After"))
	assert.JSONEq(t, errorBody("1", -32000, "Too many requests"), r.body)
	s.tools.mu.Lock()
	assert.Empty(t, s.tools.calls, "the tool never ran")
	s.tools.mu.Unlock()

	r = s.post(t, "["+rpc(2, methodToolsCall, map[string]any{"name": "add", "arguments": map[string]any{"a": 1, "b": 2}})+","+rpc(3, methodPing, nil)+"]",
		map[string]string{headerProtocolVersion: batchVersion})
	require.Equal(t, http.StatusOK, r.status, r.body)
	assert.JSONEq(t, "["+errorBody("2", -32000, "Too many requests")+`,{"jsonrpc":"2.0","id":3,"result":{}}]`, r.data)
	got := log.since(0)
	require.Len(t, got, 3)
	assert.Equal(t, "refused 429", got[0].outcome)
	assert.Equal(t, "refused 429", got[1].outcome)
	assert.Equal(t, "ok", got[2].outcome)
}

// TestChainSeesEarlyRefusalsAndStreams: what the endpoint refuses before
// the method's handler is decided (an id that cannot be echoed, params
// that cannot be read, a body that is not JSON, a batch refused whole, a
// GET without a stream) and the GET streams pass the chain: a link sees
// each, and may answer it otherwise.
func TestChainSeesEarlyRefusalsAndStreams(t *testing.T) {
	type saw struct {
		method  string
		stream  StreamKind
		refused bool
		outcome string
	}
	var mu sync.Mutex
	var all []saw
	watch := func(next MethodHandler) MethodHandler {
		return func(x *Exchange) {
			next(x)
			mu.Lock()
			defer mu.Unlock()
			all = append(all, saw{method: x.Method(), stream: x.Stream(), refused: x.Refused(), outcome: x.Outcome()})
		}
	}
	s := startServer(t, &Options{Middleware: []Middleware{watch}})
	hdr := map[string]string{headerProtocolVersion: batchVersion}
	s.post(t, `{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}`, hdr)
	s.post(t, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","name":"b"}}`, hdr)
	s.post(t, `{"jsonrpc":`, hdr)
	s.post(t, `[]`, hdr)
	s.do(t, http.MethodGet, nil, map[string]string{headerLastEventID: "nope"})
	s.do(t, http.MethodDelete, nil, nil)
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []saw{
		{method: methodPing, refused: true, outcome: "refused 400"},
		{method: methodToolsCall, refused: true, outcome: "refused 400"},
		{refused: true, outcome: "refused 400"},
		{refused: true, outcome: "refused 400"},
		{stream: StreamResume, outcome: all[4].outcome},
		{refused: true, outcome: "refused 405"},
	}, all)
	assert.NotEqual(t, "ok", all[4].outcome, "an unknown Last-Event-ID is refused")

	// A link may refuse a stream with its own status.
	deny := func(next MethodHandler) MethodHandler {
		return func(x *Exchange) {
			if x.Stream() != "" {
				x.Refuse(http.StatusServiceUnavailable, http.Header{"Retry-After": {"1"}}, -32000, "Busy", nil)
				return
			}
			next(x)
		}
	}
	s = startServer(t, &Options{Middleware: []Middleware{deny}})
	r := s.do(t, http.MethodGet, nil, map[string]string{headerLastEventID: "nope"})
	assert.Equal(t, http.StatusServiceUnavailable, r.status)
	assert.Equal(t, "1", r.header.Get("Retry-After"))
}
