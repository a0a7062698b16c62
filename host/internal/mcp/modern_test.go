package mcp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/metadata"
)

// revisionTools advertises another tool list to modern clients, as the host
// does for natural output schemas.
type revisionTools struct {
	*fakeTools
	modern json.RawMessage
}

func (r revisionTools) ToolsListFor(version string) json.RawMessage {
	if IsModern(version) {
		return r.modern
	}
	return r.ToolsList()
}

const testModernList = `[{"name":"echo","inputSchema":{"type":"object"}},{"name":"primes","inputSchema":{"type":"object"},"outputSchema":{"type":"array","items":{"type":"integer"}}}]`

// startModernServer serves revisionTools with the server info and cache
// settings the assertions below expect.
func startModernServer(t *testing.T) *testServer {
	t.Helper()
	tools := newFakeTools()
	logs := &syncBuffer{}
	srv := httptest.NewServer(NewHandler(serverOf(revisionTools{tools, json.RawMessage(testModernList)}), &Options{
		ServerInfo:   Implementation{Name: "modern-test", Version: "9.9.9"},
		Instructions: "Use <tools>.",
		Logger:       slog.New(slog.NewTextHandler(logs, nil)),
		CacheTTL:     90 * time.Second,
	}))
	t.Cleanup(srv.Close)
	return &testServer{Server: srv, tools: tools, logs: logs}
}

// modernMeta is a well-formed request envelope.
func modernMeta(version string) map[string]any {
	return map[string]any{
		MetaProtocolVersion:    version,
		MetaClientInfo:         map[string]any{"name": "probe", "version": "2.0"},
		MetaClientCapabilities: map[string]any{},
	}
}

// modernHeaders are the headers a conforming client sends.
func modernHeaders(method, name string) map[string]string {
	h := map[string]string{"MCP-Protocol-Version": ModernVersion, "Mcp-Method": method}
	if name != "" {
		h["Mcp-Name"] = name
	}
	return h
}

const serverInfoMeta = `"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"modern-test","version":"9.9.9"}}`

func TestModernDiscover(t *testing.T) {
	s := startModernServer(t)
	want := `{"jsonrpc":"2.0","id":"d","result":{"resultType":"complete",` +
		`"supportedVersions":["2026-07-28","2025-11-25","2025-06-18","2025-03-26","2024-11-05"],` +
		`"capabilities":{"tools":{}},"instructions":"Use <tools>.","ttlMs":90000,"cacheScope":"private",` + serverInfoMeta + `}}`
	for _, accept := range []string{acceptBoth, "application/json"} {
		h := modernHeaders(methodDiscover, "")
		h["Accept"] = accept
		r := s.post(t, rpc("d", methodDiscover, map[string]any{"_meta": modernMeta(ModernVersion)}), h)
		require.Equal(t, http.StatusOK, r.status, r.body)
		assert.Equal(t, accept == acceptBoth, r.sse)
		assert.Equal(t, want, r.data, "exact bytes: the result is encoded once")
		assert.Empty(t, r.header.Get("Mcp-Session-Id"), "no session is minted")
	}
	assert.NotContains(t, s.logs.String(), "level=ERROR")
}

func TestModernToolsFlow(t *testing.T) {
	s := startModernServer(t)

	t.Run("tools/list", func(t *testing.T) {
		r := s.post(t, rpc(1, methodToolsList, map[string]any{"_meta": modernMeta(ModernVersion)}), modernHeaders(methodToolsList, ""))
		require.Equal(t, http.StatusOK, r.status, r.body)
		assert.Equal(t, `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","ttlMs":90000,"cacheScope":"private",`+serverInfoMeta+`,"tools":`+testModernList+`}}`, r.data)

		legacy := s.post(t, rpc(2, methodToolsList, nil), map[string]string{"MCP-Protocol-Version": "2025-11-25"})
		require.Equal(t, http.StatusOK, legacy.status)
		assert.Equal(t, `{"jsonrpc":"2.0","id":2,"result":{"tools":`+testToolsList+`}}`, legacy.data, "legacy clients keep their list and result shape")
	})

	t.Run("tools/call", func(t *testing.T) {
		meta := modernMeta(ModernVersion)
		meta[MetaLogLevel] = "debug"
		meta["progressToken"] = "p-1"
		meta[MetaClientCapabilities] = map[string]any{"elicitation": map[string]any{}}
		h := modernHeaders(methodToolsCall, "add")
		h["Mcp-Session-Id"] = "not-a-token" // ignored, never parsed
		r := s.post(t, rpc(3, methodToolsCall, map[string]any{"name": "add", "arguments": map[string]any{"a": 1, "b": 2}, "_meta": meta}), h)
		require.Equal(t, http.StatusOK, r.status, r.body)
		assert.Equal(t, `{"jsonrpc":"2.0","id":3,"result":{"resultType":"complete","content":[{"type":"text","text":"{\"sum\":3}"}],"structuredContent":{"sum":3},`+serverInfoMeta+`}}`, r.data)
		assert.Empty(t, r.header.Get("Mcp-Session-Id"))

		got := s.tools.lastCall(t)
		assert.Equal(t, ModernVersion, got.ProtocolVersion)
		assert.Empty(t, got.SessionID, "modern calls have no session")
		assert.Equal(t, &metadata.ClientInfo{Name: "probe", Version: "2.0"}, got.ClientInfo)
		require.NotNil(t, got.Meta)
		assert.Equal(t, &RequestMeta{
			ProtocolVersion:    ModernVersion,
			ClientInfo:         &metadata.ClientInfo{Name: "probe", Version: "2.0"},
			ClientCapabilities: json.RawMessage(`{"elicitation":{}}`),
			LogLevel:           "debug",
			ProgressToken:      json.RawMessage(`"p-1"`),
		}, got.Meta)
	})

	t.Run("tool _meta keeps its keys", func(t *testing.T) {
		s.tools.setCall(func(context.Context, *CallRequest) (*metadata.CallToolResult, error) {
			return &metadata.CallToolResult{Content: []json.RawMessage{metadata.TextContent("x")}, Meta: json.RawMessage(`{"a":1}`)}, nil
		})
		r := s.post(t, rpc(4, methodToolsCall, map[string]any{"name": "echo", "_meta": modernMeta(ModernVersion)}), modernHeaders(methodToolsCall, "echo"))
		require.Equal(t, http.StatusOK, r.status, r.body)
		assert.JSONEq(t, `{"jsonrpc":"2.0","id":4,"result":{"resultType":"complete","content":[{"type":"text","text":"x"}],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"modern-test","version":"9.9.9"},"a":1}}}`, r.data)
	})

	t.Run("unknown tool stays in band", func(t *testing.T) {
		s.tools.setCall(echoCall)
		r := s.post(t, rpc(5, methodToolsCall, map[string]any{"name": "nope", "_meta": modernMeta(ModernVersion)}), modernHeaders(methodToolsCall, "nope"))
		assert.Equal(t, http.StatusOK, r.status)
		assert.JSONEq(t, errorBody("5", CodeInvalidParams, "Unknown tool: 'nope'"), r.data)
	})

	t.Run("notification accepted", func(t *testing.T) {
		r := s.post(t, rpc(nil, "notifications/cancelled", map[string]any{"_meta": modernMeta(ModernVersion)}), nil)
		assert.Equal(t, http.StatusAccepted, r.status)
		assert.Empty(t, r.body)
	})
}

// TestModernRefusals covers every header-mismatch, unsupported-version,
// envelope and unknown-method case of a modern request.
func TestModernRefusals(t *testing.T) {
	s := startModernServer(t)
	call := func(meta any, name string) string {
		p := map[string]any{"name": name, "arguments": map[string]any{"text": "x"}}
		if meta != nil {
			p["_meta"] = meta
		}
		return rpc(1, methodToolsCall, p)
	}
	with := func(h map[string]string, k, v string) map[string]string {
		out := map[string]string{}
		for kk, vv := range h {
			out[kk] = vv
		}
		out[k] = v
		return out
	}
	without := func(h map[string]string, k string) map[string]string {
		out := with(h, k, "")
		delete(out, k)
		return out
	}
	hdr := modernHeaders(methodToolsCall, "echo")
	supported := `"supported":["2026-07-28","2025-11-25","2025-06-18","2025-03-26","2024-11-05"]`
	tests := []struct {
		name    string
		body    string
		headers map[string]string
		status  int
		code    int
		message string
		data    string // the error data, "" for none
	}{
		{"version header differs from _meta", call(modernMeta(ModernVersion), "echo"), with(hdr, "MCP-Protocol-Version", "2025-11-25"),
			400, CodeHeaderMismatch, "Header mismatch: MCP-Protocol-Version header value '2025-11-25' does not match body value '2026-07-28'", ""},
		{"mismatch outranks unsupported", call(modernMeta("2099-01-01"), "echo"), hdr,
			400, CodeHeaderMismatch, "Header mismatch: MCP-Protocol-Version header value '2026-07-28' does not match body value '2099-01-01'", ""},
		{"unsupported version", call(modernMeta("2099-01-01"), "echo"), with(hdr, "MCP-Protocol-Version", "2099-01-01"),
			400, CodeUnsupportedProtocolVersion, "Unsupported protocol version", `{` + supported + `,"requested":"2099-01-01"}`},
		{"unsupported version without header", call(modernMeta("2099-01-01"), "echo"), without(hdr, "MCP-Protocol-Version"),
			400, CodeUnsupportedProtocolVersion, "Unsupported protocol version", `{` + supported + `,"requested":"2099-01-01"}`},
		{"legacy version in a modern envelope", call(modernMeta("2025-11-25"), "echo"), with(hdr, "MCP-Protocol-Version", "2025-11-25"),
			400, CodeUnsupportedProtocolVersion, "Unsupported protocol version", `{` + supported + `,"requested":"2025-11-25"}`},
		{"version header missing", call(modernMeta(ModernVersion), "echo"), without(hdr, "MCP-Protocol-Version"),
			400, CodeHeaderMismatch, "Header mismatch: the MCP-Protocol-Version header is required.", ""},
		{"method header missing", call(modernMeta(ModernVersion), "echo"), without(hdr, "Mcp-Method"),
			400, CodeHeaderMismatch, "Header mismatch: the Mcp-Method header is required.", ""},
		{"method header differs", call(modernMeta(ModernVersion), "echo"), with(hdr, "Mcp-Method", "tools/list"),
			400, CodeHeaderMismatch, "Header mismatch: Mcp-Method header value 'tools/list' does not match body value 'tools/call'", ""},
		{"method header case differs", call(modernMeta(ModernVersion), "echo"), with(hdr, "Mcp-Method", "Tools/Call"),
			400, CodeHeaderMismatch, "Header mismatch: Mcp-Method header value 'Tools/Call' does not match body value 'tools/call'", ""},
		{"name header missing", call(modernMeta(ModernVersion), "echo"), without(hdr, "Mcp-Name"),
			400, CodeHeaderMismatch, "Header mismatch: the Mcp-Name header is required for tools/call.", ""},
		{"name header differs", call(modernMeta(ModernVersion), "echo"), with(hdr, "Mcp-Name", "add"),
			400, CodeHeaderMismatch, "Header mismatch: Mcp-Name header value 'add' does not match body value 'echo'", ""},
		{"name header base64 differs", call(modernMeta(ModernVersion), "echo"), with(hdr, "Mcp-Name", "=?base64?"+base64.StdEncoding.EncodeToString([]byte("écho"))+"?="),
			400, CodeHeaderMismatch, "Header mismatch: Mcp-Name header value 'écho' does not match body value 'echo'", ""},
		{"name header bad base64", call(modernMeta(ModernVersion), "echo"), with(hdr, "Mcp-Name", "=?base64?!!!?="),
			400, CodeHeaderMismatch, "Header mismatch: the Mcp-Name header value is not valid base64 in its =?base64?…?= form.", ""},
		{"name header without body name", call(modernMeta(ModernVersion), ""), hdr,
			400, CodeHeaderMismatch, "Header mismatch: Mcp-Name header value 'echo' does not match body value ''", ""},
		{"protocol version not a string", call(map[string]any{MetaProtocolVersion: 20260728, MetaClientCapabilities: map[string]any{}}, "echo"), hdr,
			400, CodeInvalidParams, "Invalid params: _meta.io.modelcontextprotocol/protocolVersion must be a non-empty string.", ""},
		{"capabilities missing", call(map[string]any{MetaProtocolVersion: ModernVersion}, "echo"), hdr,
			400, CodeInvalidParams, "Invalid params: _meta.io.modelcontextprotocol/clientCapabilities is required.", ""},
		{"capabilities not an object", call(map[string]any{MetaProtocolVersion: ModernVersion, MetaClientCapabilities: true}, "echo"), hdr,
			400, CodeInvalidParams, "Invalid params: _meta.io.modelcontextprotocol/clientCapabilities must be an object.", ""},
		{"client info not an object", call(map[string]any{MetaProtocolVersion: ModernVersion, MetaClientCapabilities: map[string]any{}, MetaClientInfo: "me"}, "echo"), hdr,
			400, CodeInvalidParams, "Invalid params: _meta.io.modelcontextprotocol/clientInfo must be an object with string name and version.", ""},
		{"log level not a string", call(map[string]any{MetaProtocolVersion: ModernVersion, MetaClientCapabilities: map[string]any{}, MetaLogLevel: 3}, "echo"), hdr,
			400, CodeInvalidParams, "Invalid params: _meta.io.modelcontextprotocol/logLevel must be a string.", ""},
		{"modern header without envelope", call(nil, "echo"), hdr,
			400, CodeInvalidParams, "Invalid params: a 2026-07-28 request needs _meta.io.modelcontextprotocol/protocolVersion (and io.modelcontextprotocol/clientCapabilities); send initialize for the earlier revisions.", ""},
		{"ping is gone", rpc(1, "ping", map[string]any{"_meta": modernMeta(ModernVersion)}), modernHeaders("ping", ""),
			404, CodeMethodNotFound, "Method not found: 'ping' is not available in protocol version 2026-07-28.", ""},
		{"ping without envelope", rpc(1, "ping", nil), modernHeaders("ping", ""),
			404, CodeMethodNotFound, "Method not found: 'ping' is not available in protocol version 2026-07-28.", ""},
		{"initialize in a modern envelope", rpc(1, "initialize", map[string]any{"_meta": modernMeta(ModernVersion)}), modernHeaders("initialize", ""),
			404, CodeMethodNotFound, "Method not found: 'initialize' is not available in protocol version 2026-07-28.", ""},
		{"prompts/get", rpc(1, "prompts/get", map[string]any{"name": "p", "_meta": modernMeta(ModernVersion)}), modernHeaders("prompts/get", "p"),
			404, CodeMethodNotFound, "Method not found: 'prompts/get' is not available in protocol version 2026-07-28.", ""},
		{"resources/read name header", rpc(1, "resources/read", map[string]any{"uri": "file:///a", "_meta": modernMeta(ModernVersion)}), modernHeaders("resources/read", "file:///b"),
			400, CodeHeaderMismatch, "Header mismatch: Mcp-Name header value 'file:///b' does not match body value 'file:///a'", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := s.tools.callCount()
			r := s.post(t, tt.body, tt.headers)
			assert.Equal(t, tt.status, r.status)
			assert.Equal(t, "application/json", r.header.Get("Content-Type"), "refusals are plain JSON")
			want := errorBody("1", tt.code, tt.message)
			if tt.data != "" {
				want = want[:len(want)-2] + `,"data":` + tt.data + `}}`
			}
			assert.JSONEq(t, want, r.body)
			assert.Equal(t, before, s.tools.callCount(), "a refused request never reaches the tool")
		})
	}

	t.Run("base64 name accepted", func(t *testing.T) {
		r := s.post(t, call(modernMeta(ModernVersion), "echo"), with(hdr, "Mcp-Name", "=?base64?"+base64.StdEncoding.EncodeToString([]byte("echo"))+"?="))
		assert.Equal(t, http.StatusOK, r.status, r.body)
	})
}

// TestLegacyUntouchedByModern checks that requests without _meta keep the
// initialize flow and its sessions.
func TestLegacyUntouchedByModern(t *testing.T) {
	s := startModernServer(t)
	init := s.post(t, rpc(0, "initialize", map[string]any{"protocolVersion": "2025-11-25", "clientInfo": map[string]any{"name": "old", "version": "1"}}), nil)
	require.Equal(t, http.StatusOK, init.status)
	assert.Contains(t, init.data, `"protocolVersion":"2025-11-25"`)
	token := init.header.Get("Mcp-Session-Id")
	require.NotEmpty(t, token)
	r := s.post(t, rpc(1, methodToolsCall, map[string]any{"name": "echo", "arguments": map[string]any{"text": "hi"}, "_meta": map[string]any{"progressToken": 7}}),
		map[string]string{"Mcp-Session-Id": token, "MCP-Protocol-Version": "2025-11-25"})
	require.Equal(t, http.StatusOK, r.status, r.body)
	assert.Equal(t, `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hi"}]}}`, r.data, "no resultType on legacy results")
	got := s.tools.lastCall(t)
	assert.Nil(t, got.Meta)
	assert.Equal(t, token, got.SessionID)
	assert.Equal(t, "2025-11-25", got.ProtocolVersion)
}

func (f *fakeTools) setCall(call func(ctx context.Context, req *CallRequest) (*metadata.CallToolResult, error)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.call = call
}

func (f *fakeTools) callCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.calls)
}
