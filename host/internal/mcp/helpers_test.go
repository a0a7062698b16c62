package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/metadata"
)

// fakeTools is the Tools of the tests: a fixed list and a scripted call.
type fakeTools struct {
	mu    sync.Mutex
	list  json.RawMessage
	lists int
	calls []*CallRequest
	call  func(ctx context.Context, req *CallRequest) (*metadata.CallToolResult, error)
}

const testToolsList = `[{"name":"echo","description":"Echoes <text> & more","inputSchema":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}},` +
	`{"name":"add","inputSchema":{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}}},"outputSchema":{"type":"object","properties":{"sum":{"type":"number"}}}}]`

func newFakeTools() *fakeTools {
	return &fakeTools{list: json.RawMessage(testToolsList), call: echoCall}
}

// echoCall answers echo with its text argument and add with the sum.
func echoCall(_ context.Context, req *CallRequest) (*metadata.CallToolResult, error) {
	switch req.Name {
	case "echo":
		var text string
		if err := json.Unmarshal(req.Arguments["text"], &text); err != nil {
			return &metadata.CallToolResult{Content: []json.RawMessage{metadata.TextContent("bad text")}, IsError: true}, nil
		}
		return &metadata.CallToolResult{Content: []json.RawMessage{metadata.TextContent(text)}}, nil
	case "add":
		var a, b float64
		_ = json.Unmarshal(req.Arguments["a"], &a)
		_ = json.Unmarshal(req.Arguments["b"], &b)
		sc, _ := json.Marshal(map[string]float64{"sum": a + b})
		return &metadata.CallToolResult{Content: []json.RawMessage{metadata.TextContent(string(sc))}, StructuredContent: sc}, nil
	}
	return nil, &ProtocolError{Code: CodeInvalidParams, Message: "Unknown tool: '" + req.Name + "'"}
}

func (f *fakeTools) ToolsList() json.RawMessage {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lists++
	return f.list
}

func (f *fakeTools) setList(list json.RawMessage) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.list = list
}

func (f *fakeTools) CallTool(ctx context.Context, req *CallRequest) (*metadata.CallToolResult, error) {
	f.mu.Lock()
	f.calls = append(f.calls, req)
	call := f.call
	f.mu.Unlock()
	return call(ctx, req)
}

func (f *fakeTools) lastCall(t *testing.T) *CallRequest {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	require.NotEmpty(t, f.calls, "no tools/call reached the fake")
	return f.calls[len(f.calls)-1]
}

// syncBuffer is a log sink safe for the server goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

type testServer struct {
	*httptest.Server
	tools *fakeTools
	logs  *syncBuffer
}

// startServer serves a handler over the fake tools on 127.0.0.1.
func startServer(t *testing.T, opts *Options) *testServer {
	t.Helper()
	tools := newFakeTools()
	logs := &syncBuffer{}
	o := Options{}
	if opts != nil {
		o = *opts
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(logs, nil))
	}
	if o.Sealer == nil {
		o.Sealer = testSealer
	}
	srv := httptest.NewServer(NewHandler(serverOf(tools), &o))
	t.Cleanup(srv.Close)
	return &testServer{Server: srv, tools: tools, logs: logs}
}

// reply is one HTTP exchange as the tests look at it.
type reply struct {
	status int
	header http.Header
	body   string // raw body
	data   string // the JSON-RPC message: the body, or the data of the one SSE event
	sse    bool
}

const acceptBoth = "application/json, text/event-stream"

// post sends body with the given headers; Accept defaults to acceptBoth
// unless headers name it (an empty value removes it).
func (s *testServer) post(t *testing.T, body string, headers map[string]string) reply {
	t.Helper()
	return s.do(t, http.MethodPost, strings.NewReader(body), headers)
}

func (s *testServer) do(t *testing.T, method string, body io.Reader, headers map[string]string) reply {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, s.URL, body)
	require.NoError(t, err)
	req.Header.Set("Accept", acceptBoth)
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		if v == "" {
			req.Header.Del(k)
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := s.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	r := reply{status: resp.StatusCode, header: resp.Header, body: string(raw), data: string(raw)}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		r.sse = true
		r.data = sseData(t, string(raw))
	}
	return r
}

// withoutResumption drops what a resumable stream adds to an SSE body: the
// priming event (an id, a retry and no data) and the id line of each event.
func withoutResumption(raw string) string {
	var b strings.Builder
	for _, ev := range strings.SplitAfter(raw, "\n\n") {
		if strings.HasPrefix(ev, "id: ") && strings.Contains(ev, "\ndata: \n") {
			continue // priming
		}
		if strings.HasPrefix(ev, "id: ") {
			_, ev, _ = strings.Cut(ev, "\n")
		}
		b.WriteString(ev)
	}
	return b.String()
}

// sseData checks that raw is exactly one "message" event (after what a
// resumable stream adds) and returns its data.
func sseData(t *testing.T, raw string) string {
	t.Helper()
	raw = withoutResumption(raw)
	const prefix = "event: message\ndata: "
	require.True(t, strings.HasPrefix(raw, prefix), "SSE body %q", raw)
	require.True(t, strings.HasSuffix(raw, "\n\n"), "SSE body %q", raw)
	data := strings.TrimSuffix(strings.TrimPrefix(raw, prefix), "\n\n")
	require.NotContains(t, data, "\n", "SSE data must be one line")
	return data
}

// rpc builds a request body.
func rpc(id any, method string, params any) string {
	m := map[string]any{"jsonrpc": "2.0", "method": method}
	if id != nil {
		m["id"] = id
	}
	if params != nil {
		m["params"] = params
	}
	b, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// errorBody is the JSON of a JSON-RPC error response.
func errorBody(id string, code int, message string) string {
	m, _ := json.Marshal(message)
	return `{"jsonrpc":"2.0","id":` + id + `,"error":{"code":` + itoa(code) + `,"message":` + string(m) + `}}`
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// The shapes of the test doubles: serverOf makes a Server of whichever
// of them a double has.
type (
	testTools interface {
		ToolsList() json.RawMessage
		CallTool(ctx context.Context, req *CallRequest) (*metadata.CallToolResult, error)
	}
	testRevisionTools interface {
		ToolsListFor(version string) json.RawMessage
	}
	testParamTools interface {
		ParamHeaders(name string) []ParamHeader
	}
	testTaskTools interface {
		TaskSupport(name string) *metadata.TaskSupport
	}
	testFunctions interface {
		FunctionLists() *FunctionLists
		ReadResource(ctx context.Context, req *ReadRequest) (*metadata.ReadResourceResult, error)
		GetPrompt(ctx context.Context, req *PromptRequest) (*metadata.GetPromptResult, error)
		Complete(ctx context.Context, req *CompleteRequest) (*metadata.CompleteResult, error)
	}
)

// serverOf adapts a test double to the Server it stands for.
func serverOf(t testTools) Server {
	s := Server{ToolsList: func(string) json.RawMessage { return t.ToolsList() }, CallTool: t.CallTool}
	if rt, ok := t.(testRevisionTools); ok {
		s.ToolsList = rt.ToolsListFor
	}
	if pt, ok := t.(testParamTools); ok {
		s.ParamHeaders = pt.ParamHeaders
	}
	if tt, ok := t.(testTaskTools); ok {
		s.TaskSupport = tt.TaskSupport
	}
	if tt, ok := t.(*taskTools); ok {
		s.AdmitsTasks = tt.admits
	}
	if f, ok := t.(testFunctions); ok {
		s.Functions = &Functions{Lists: f.FunctionLists(),
			ReadResource: func(ctx context.Context, req *ReadRequest) (Result[metadata.ReadResourceResult], error) {
				v, err := f.ReadResource(ctx, req)
				return Result[metadata.ReadResourceResult]{Value: v}, err
			},
			GetPrompt: func(ctx context.Context, req *PromptRequest) (Result[metadata.GetPromptResult], error) {
				v, err := f.GetPrompt(ctx, req)
				return Result[metadata.GetPromptResult]{Value: v}, err
			},
			Complete: func(ctx context.Context, req *CompleteRequest) (Result[metadata.CompleteResult], error) {
				v, err := f.Complete(ctx, req)
				return Result[metadata.CompleteResult]{Value: v}, err
			}}
	}
	return s
}
