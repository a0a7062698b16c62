package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/metadata"
)

// fakeFunctions adds resources, templates, prompts and completions to the
// fake tools.
type fakeFunctions struct {
	*fakeTools
	lists *FunctionLists
	reads []*ReadRequest
	// prompt serves prompts/get when set.
	prompt func(ctx context.Context, req *PromptRequest) (*metadata.GetPromptResult, error)
}

func (f *fakeFunctions) FunctionLists() *FunctionLists { return f.lists }

func (f *fakeFunctions) ReadResource(_ context.Context, req *ReadRequest) (*metadata.ReadResourceResult, error) {
	f.mu.Lock()
	f.reads = append(f.reads, req)
	f.mu.Unlock()
	if req.URI != "test://a" {
		return nil, ResourceNotFound(req.ProtocolVersion, req.URI)
	}
	text := "A"
	return &metadata.ReadResourceResult{Contents: []metadata.ResourceContents{{URI: req.URI, MimeType: "text/plain", Text: &text}}}, nil
}

func (f *fakeFunctions) GetPrompt(ctx context.Context, req *PromptRequest) (*metadata.GetPromptResult, error) {
	if f.prompt != nil {
		return f.prompt(ctx, req)
	}
	if req.Name != "greet" {
		return nil, &ProtocolError{Code: CodeInvalidParams, Message: "Unknown prompt: '" + req.Name + "'"}
	}
	return &metadata.GetPromptResult{Description: "d", Messages: []metadata.PromptMessage{{Role: "user", Content: metadata.TextContent("hi " + string(req.Arguments["who"]))}},
		Meta: json.RawMessage(`{"k":1}`)}, nil
}

func (f *fakeFunctions) Complete(_ context.Context, req *CompleteRequest) (*metadata.CompleteResult, error) {
	return &metadata.CompleteResult{Completion: metadata.CompletionValues{Values: []string{req.Argument.Value + "x"}}}, nil
}

func startFunctionServer(t *testing.T, lists *FunctionLists, pageSize int) (*testServer, *fakeFunctions) {
	t.Helper()
	f := &fakeFunctions{fakeTools: newFakeTools(), lists: lists}
	logs := &syncBuffer{}
	srv := httptest.NewServer(NewHandler(serverOf(f), &Options{Logger: slog.New(slog.NewTextHandler(logs, nil)), Sealer: testSealer,
		PageSize: pageSize, ServerInfo: Implementation{Name: "modern-test", Version: "9.9.9"}}))
	t.Cleanup(srv.Close)
	return &testServer{Server: srv, tools: f.fakeTools, logs: logs}, f
}

func entries(n int, format string) []json.RawMessage {
	out := make([]json.RawMessage, n)
	for i := range out {
		out[i] = json.RawMessage(fmt.Sprintf(format, i))
	}
	return out
}

func fullLists() *FunctionLists {
	return &FunctionLists{
		Resources:   entries(5, `{"name":"r%d","uri":"test://r"}`),
		Templates:   entries(1, `{"name":"t%d","uriTemplate":"test://{id}"}`),
		Prompts:     entries(2, `{"name":"p%d"}`),
		Completions: true,
	}
}

func TestCapabilitiesFollowTheFunctions(t *testing.T) {
	for _, tc := range []struct {
		name  string
		lists *FunctionLists
		want  string
	}{
		{"everything", fullLists(), `{"logging":{},"tools":{"listChanged":false},"resources":{},"prompts":{},"completions":{}}`},
		{"templates only", &FunctionLists{Templates: entries(1, `{"name":"t%d"}`), Completions: true}, `{"logging":{},"tools":{"listChanged":false},"resources":{},"completions":{}}`},
		{"nothing", &FunctionLists{}, `{"logging":{},"tools":{"listChanged":false}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := startFunctionServer(t, tc.lists, 0)
			r := s.post(t, rpc(1, "initialize", map[string]any{"protocolVersion": "2025-11-25"}), nil)
			var res struct {
				Result struct{ Capabilities json.RawMessage }
			}
			require.NoError(t, json.Unmarshal([]byte(r.data), &res), r.data)
			assert.JSONEq(t, tc.want, string(res.Result.Capabilities))
		})
	}
	// Without Functions, the methods are not found.
	s := startServer(t, nil)
	r := s.post(t, rpc(1, "resources/list", nil), map[string]string{headerProtocolVersion: "2025-11-25"})
	assert.JSONEq(t, errorBody("1", CodeMethodNotFound, "Method 'resources/list' is not available."), r.data)
}

func TestListsArePaged(t *testing.T) {
	s, _ := startFunctionServer(t, fullLists(), 2)
	hdr := map[string]string{headerProtocolVersion: "2025-11-25"}
	var names []string
	var cursor any
	for page := 0; ; page++ {
		require.Less(t, page, 5, "paging ends")
		params := map[string]any{}
		if cursor != nil {
			params["cursor"] = cursor
		}
		r := s.post(t, rpc(page, "resources/list", params), hdr)
		var res struct {
			Result struct {
				Resources  []struct{ Name string }
				NextCursor *string
			}
		}
		require.NoError(t, json.Unmarshal([]byte(r.data), &res), r.data)
		for _, e := range res.Result.Resources {
			names = append(names, e.Name)
		}
		if res.Result.NextCursor == nil {
			break
		}
		cursor = *res.Result.NextCursor
	}
	assert.Equal(t, []string{"r0", "r1", "r2", "r3", "r4"}, names)

	r := s.post(t, rpc(9, "prompts/list", map[string]any{"cursor": "not-ours"}), hdr)
	assert.JSONEq(t, errorBody("9", CodeInvalidParams, "Invalid params: the cursor is not one this server gave."), r.data)
	r = s.post(t, rpc(10, "resources/templates/list", nil), hdr)
	assert.JSONEq(t, `{"jsonrpc":"2.0","id":10,"result":{"resourceTemplates":[{"name":"t0","uriTemplate":"test://{id}"}]}}`, r.data)
}

func TestReadGetAndCompletePerRevision(t *testing.T) {
	s, f := startFunctionServer(t, fullLists(), 0)
	legacy := map[string]string{headerProtocolVersion: "2025-11-25"}
	r := s.post(t, rpc(1, "resources/read", map[string]any{"uri": "test://a"}), legacy)
	assert.JSONEq(t, `{"jsonrpc":"2.0","id":1,"result":{"contents":[{"uri":"test://a","mimeType":"text/plain","text":"A"}]}}`, r.data)
	require.NotEmpty(t, f.reads)
	assert.Equal(t, "2025-11-25", f.reads[0].ProtocolVersion)

	r = s.post(t, rpc(2, "resources/read", map[string]any{"uri": "test://none"}), legacy)
	assert.JSONEq(t, `{"jsonrpc":"2.0","id":2,"error":{"code":-32002,"message":"Resource not found","data":{"uri":"test://none"}}}`, r.data)
	r = s.post(t, rpc(3, "resources/read", map[string]any{}), legacy)
	assert.JSONEq(t, errorBody("3", CodeInvalidParams, "Invalid params: missing required parameter 'uri'."), r.data)
	r = s.post(t, rpc(4, "prompts/get", map[string]any{"name": "greet", "arguments": map[string]any{"who": "you"}}), legacy)
	assert.JSONEq(t, `{"jsonrpc":"2.0","id":4,"result":{"description":"d","messages":[{"role":"user","content":{"type":"text","text":"hi \"you\""}}],"_meta":{"k":1}}}`, r.data)
	r = s.post(t, rpc(5, "completion/complete", map[string]any{"ref": map[string]any{"type": "ref/prompt", "name": "greet"}, "argument": map[string]any{"name": "who", "value": "a"}}), legacy)
	assert.JSONEq(t, `{"jsonrpc":"2.0","id":5,"result":{"completion":{"values":["ax"],"hasMore":false}}}`, r.data)
	r = s.post(t, rpc(6, "completion/complete", map[string]any{"ref": map[string]any{"type": "ref/prompt"}}), legacy)
	const needRef = "Invalid params: completion/complete needs ref {type, name or uri} and argument {name, value}, each a string."
	assert.JSONEq(t, errorBody("6", CodeInvalidParams, needRef), r.data)
	// Member names are matched exactly, as in every other message.
	r = s.post(t, rpc(7, "resources/read", map[string]any{"URI": "test://a"}), legacy)
	assert.JSONEq(t, errorBody("7", CodeInvalidParams, "Invalid params: missing required parameter 'uri'."), r.data)
	r = s.post(t, rpc(8, "prompts/get", map[string]any{"Name": "greet"}), legacy)
	assert.JSONEq(t, errorBody("8", CodeInvalidParams, "Invalid params: missing required parameter 'name'."), r.data)
	r = s.post(t, rpc(9, "completion/complete", map[string]any{"ref": map[string]any{"Type": "ref/prompt", "name": "greet"}, "argument": map[string]any{"name": "who", "value": "a"}}), legacy)
	assert.JSONEq(t, errorBody("9", CodeInvalidParams, needRef), r.data)
	r = s.post(t, rpc(10, "prompts/get", map[string]any{"name": "greet", "arguments": []string{"who"}}), legacy)
	assert.JSONEq(t, errorBody("10", CodeInvalidParams, "Invalid params: 'arguments' must be an object."), r.data)

	// 2026-07-28: resultType, the cache hints on lists and reads, the server
	// info in _meta; an unknown resource is -32602 (SEP-2164).
	read := func(id int, uri string) reply {
		return s.post(t, rpc(id, "resources/read", map[string]any{"uri": uri, "_meta": modernMeta(ModernVersion)}), modernHeaders("resources/read", uri))
	}
	r = read(7, "test://a")
	assert.JSONEq(t, `{"jsonrpc":"2.0","id":7,"result":{"resultType":"complete","ttlMs":0,"cacheScope":"private",`+
		`"contents":[{"uri":"test://a","mimeType":"text/plain","text":"A"}],`+serverInfoMeta+`}}`, r.data)
	r = read(8, "test://none")
	assert.JSONEq(t, `{"jsonrpc":"2.0","id":8,"error":{"code":-32602,"message":"Resource not found","data":{"uri":"test://none"}}}`, r.data)
	r = s.post(t, rpc(9, "prompts/list", map[string]any{"_meta": modernMeta(ModernVersion)}), modernHeaders("prompts/list", ""))
	assert.JSONEq(t, `{"jsonrpc":"2.0","id":9,"result":{"resultType":"complete","ttlMs":0,"cacheScope":"private","prompts":[{"name":"p0"},{"name":"p1"}],`+serverInfoMeta+`}}`, r.data)
	r = s.post(t, rpc(10, "prompts/get", map[string]any{"name": "greet", "_meta": modernMeta(ModernVersion)}), modernHeaders("prompts/get", "greet"))
	assert.JSONEq(t, `{"jsonrpc":"2.0","id":10,"result":{"resultType":"complete","description":"d","messages":[{"role":"user","content":{"type":"text","text":"hi "}}],`+
		`"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"modern-test","version":"9.9.9"},"k":1}}}`, r.data)
	// Mcp-Name must agree with the body.
	r = s.post(t, rpc(11, "prompts/get", map[string]any{"name": "greet", "_meta": modernMeta(ModernVersion)}), modernHeaders("prompts/get", "other"))
	assert.Equal(t, http.StatusBadRequest, r.status, r.body)

	// The discover result names the capabilities too.
	r = s.post(t, rpc("d", methodDiscover, map[string]any{"_meta": modernMeta(ModernVersion)}), modernHeaders(methodDiscover, ""))
	var disc struct {
		Result struct{ Capabilities json.RawMessage }
	}
	require.NoError(t, json.Unmarshal([]byte(r.data), &disc), r.data)
	assert.JSONEq(t, `{"tools":{},"resources":{},"prompts":{},"completions":{}}`, string(disc.Result.Capabilities))
}
