package mcp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/host/internal/auth"
	"github.com/funcmcp/funcmcp/host/internal/mcp/sessions"
	"github.com/funcmcp/funcmcp/metadata"
)

func TestMethodNotAllowed(t *testing.T) {
	s := startServer(t, nil)
	for _, method := range []string{http.MethodGet, http.MethodDelete, http.MethodPut, http.MethodPatch} {
		t.Run(method, func(t *testing.T) {
			r := s.do(t, method, nil, nil)
			assert.Equal(t, http.StatusMethodNotAllowed, r.status)
			assert.Equal(t, "POST", r.header.Get("Allow"))
			assert.Equal(t, "application/json", r.header.Get("Content-Type"))
			assert.JSONEq(t, errorBody("null", -32000, "Method not allowed"), r.body)
		})
	}
}

func TestAcceptChoosesFraming(t *testing.T) {
	const notAcceptable = `{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Not Acceptable: Client must accept application/json or text/event-stream"}}`
	tests := []struct {
		name, accept string
		status       int
		sse          bool
	}{
		{"both", "application/json, text/event-stream", http.StatusOK, true},
		{"both reversed", "text/event-stream, application/json", http.StatusOK, true},
		{"sse only", "text/event-stream", http.StatusOK, true},
		{"json only", "application/json", http.StatusOK, false},
		{"json with params", "application/json; charset=utf-8;q=0.9", http.StatusOK, false},
		{"upper case", "Application/JSON", http.StatusOK, false},
		{"wildcard", "*/*", http.StatusOK, false},
		{"application wildcard", "application/*", http.StatusOK, false},
		{"neither", "text/html, text/plain", http.StatusNotAcceptable, false},
		{"absent", "", http.StatusNotAcceptable, false},
	}
	s := startServer(t, nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.post(t, rpc(1, "ping", nil), map[string]string{"Accept": tt.accept})
			assert.Equal(t, tt.status, r.status)
			assert.Equal(t, tt.sse, r.sse)
			if tt.status != http.StatusOK {
				assert.Equal(t, "application/json", r.header.Get("Content-Type"))
				assert.JSONEq(t, notAcceptable, r.body)
				return
			}
			if tt.sse {
				assert.Equal(t, "text/event-stream", r.header.Get("Content-Type"))
				assert.Equal(t, "no-cache", r.header.Get("Cache-Control"))
			} else {
				assert.Equal(t, "application/json", r.header.Get("Content-Type"))
			}
			assert.JSONEq(t, `{"jsonrpc":"2.0","id":1,"result":{}}`, r.data)
		})
	}
}

// unsized hides the length of a body so that it is sent chunked.
type unsized struct{ r io.Reader }

func (u unsized) Read(p []byte) (int, error) { return u.r.Read(p) }

func TestBodyLimit(t *testing.T) {
	s := startServer(t, &Options{MaxBodyBytes: 128})
	big := rpc(1, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": strings.Repeat("x", 200)}})
	small := rpc(1, "ping", nil)
	tests := []struct {
		name   string
		body   io.Reader
		status int
	}{
		{"declared length", strings.NewReader(big), http.StatusRequestEntityTooLarge},
		{"chunked", unsized{strings.NewReader(big)}, http.StatusRequestEntityTooLarge},
		{"within limit", strings.NewReader(small), http.StatusOK},
		{"within limit chunked", unsized{strings.NewReader(small)}, http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.do(t, http.MethodPost, tt.body, nil)
			assert.Equal(t, tt.status, r.status)
			if tt.status == http.StatusRequestEntityTooLarge {
				assert.JSONEq(t, errorBody("null", -32000, "Request Entity Too Large: the body exceeds the limit"), r.body)
			}
		})
	}
}

func TestMalformedMessages(t *testing.T) {
	tests := []struct {
		name, body string
		want       string
	}{
		{"invalid json", `{"jsonrpc":"2.0","id":1,`, errorBody("null", -32700, "Parse error")},
		{"empty body", ``, errorBody("null", -32700, "Parse error")},
		{"garbage", `hello`, errorBody("null", -32700, "Parse error")},
		{"invalid array", `[{"a":`, errorBody("null", -32700, "Parse error")},
		{"number", `5`, errorBody("null", -32600, "Invalid Request: the message must be a JSON object")},
		{"string", `"ping"`, errorBody("null", -32600, "Invalid Request: the message must be a JSON object")},
		{"no jsonrpc", `{"id":1,"method":"ping"}`, errorBody("1", -32600, `Invalid Request: jsonrpc must be "2.0"`)},
		{"wrong jsonrpc", `{"jsonrpc":"1.0","id":"a","method":"ping"}`, errorBody(`"a"`, -32600, `Invalid Request: jsonrpc must be "2.0"`)},
		{"jsonrpc number", `{"jsonrpc":2.0,"id":1,"method":"ping"}`, errorBody("1", -32600, `Invalid Request: jsonrpc must be "2.0"`)},
		{"no method", `{"jsonrpc":"2.0","id":1}`, errorBody("1", -32600, "Invalid Request: missing method")},
		{"no method no id", `{"jsonrpc":"2.0"}`, errorBody("null", -32600, "Invalid Request: missing method")},
		{"method not a string", `{"jsonrpc":"2.0","id":1,"method":5}`, errorBody("1", -32600, "Invalid Request: method must be a string")},
		{"id object", `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, errorBody("null", -32600, "Invalid Request: id must be a string or a number")},
		{"id null", `{"jsonrpc":"2.0","id":null,"method":"ping"}`, errorBody("null", -32600, "Invalid Request: id must be a string or a number")},
		{"id bool", `{"jsonrpc":"2.0","id":true,"method":"ping"}`, errorBody("null", -32600, "Invalid Request: id must be a string or a number")},
	}
	s := startServer(t, nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.post(t, tt.body, nil)
			assert.Equal(t, http.StatusBadRequest, r.status)
			assert.Equal(t, "application/json", r.header.Get("Content-Type"))
			assert.JSONEq(t, tt.want, r.body)
		})
	}
}

func TestNotificationsAndResponsesAccepted(t *testing.T) {
	tests := []struct{ name, body string }{
		{"initialized", rpc(nil, "notifications/initialized", nil)},
		{"cancelled", rpc(nil, "notifications/cancelled", map[string]any{"requestId": 3, "reason": "x"})},
		{"unknown notification", rpc(nil, "notifications/whatever", nil)},
		{"tools/call without id", rpc(nil, "tools/call", map[string]any{"name": "echo"})},
		{"client result", `{"jsonrpc":"2.0","id":1,"result":{}}`},
		{"client error", `{"jsonrpc":"2.0","id":"s1","error":{"code":-1,"message":"no"}}`},
	}
	s := startServer(t, nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.post(t, tt.body, nil)
			assert.Equal(t, http.StatusAccepted, r.status)
			assert.Empty(t, r.body)
			assert.Empty(t, r.header.Get("Content-Type"))
		})
	}
	assert.Empty(t, s.tools.calls, "a notification must not call a tool")
}

// testSealer seals the session tokens of the test servers.
var testSealer = func() *auth.Sealer {
	s, err := auth.NewSealer([]byte("0123456789abcdef0123456789abcdef"))
	if err != nil {
		panic(err)
	}
	return s
}()

// decodeToken opens an Mcp-Session-Id issued by the handler.
func decodeToken(t *testing.T, token string) map[string]any {
	t.Helper()
	data, err := testSealer.Open(sessions.Purpose, token)
	require.NoError(t, err, "token %q does not open", token)
	var m map[string]any
	require.NoError(t, json.Unmarshal(data, &m))
	return m
}

func TestInitializeNegotiates(t *testing.T) {
	tests := []struct{ requested, want string }{
		{"2024-11-05", "2024-11-05"},
		{"2025-03-26", "2025-03-26"},
		{"2025-06-18", "2025-06-18"},
		{"2025-11-25", "2025-11-25"},
		{"2026-07-28", LatestVersion},
		{"1999-01-01", LatestVersion},
		{"", LatestVersion},
	}
	s := startServer(t, &Options{
		ServerInfo:   Implementation{Name: "test server", Version: "2.1.0"},
		Instructions: "Use <echo> & add.",
	})
	for _, tt := range tests {
		t.Run(tt.requested, func(t *testing.T) {
			params := map[string]any{
				"protocolVersion": tt.requested,
				"capabilities":    map[string]any{},
				"clientInfo":      map[string]any{"name": "probe", "version": "9.9"},
			}
			r := s.post(t, rpc(1, "initialize", params), nil)
			require.Equal(t, http.StatusOK, r.status)
			assert.JSONEq(t, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"`+tt.want+`",`+
				`"capabilities":{"logging":{},"tools":{"listChanged":false}},`+
				`"serverInfo":{"name":"test server","version":"2.1.0"},"instructions":"Use <echo> & add."}}`, r.data)
			assert.Contains(t, r.data, `"Use <echo> & add."`, "no HTML escaping")

			token := r.header.Get("Mcp-Session-Id")
			require.NotEmpty(t, token)
			m := decodeToken(t, token)
			assert.Regexp(t, `^[a-z0-9]{16}$`, m["id"])
			assert.Equal(t, tt.want, m["v"])
			assert.Equal(t, map[string]any{"name": "probe", "version": "9.9"}, m["c"])
		})
	}
}

func TestInitializeDefaults(t *testing.T) {
	s := startServer(t, nil)
	r := s.post(t, rpc("init", "initialize", map[string]any{"protocolVersion": "2025-06-18"}), map[string]string{"Accept": "application/json"})
	require.Equal(t, http.StatusOK, r.status)
	assert.JSONEq(t, `{"jsonrpc":"2.0","id":"init","result":{"protocolVersion":"2025-06-18",`+
		`"capabilities":{"logging":{},"tools":{"listChanged":false}},`+
		`"serverInfo":{"name":"Azure Functions MCP server","version":"1.0.0"}}}`, r.data)
	m := decodeToken(t, r.header.Get("Mcp-Session-Id"))
	assert.NotContains(t, m, "c", "no clientInfo, no c")

	bad := s.post(t, rpc(2, "initialize", []int{1}), nil)
	assert.Equal(t, http.StatusOK, bad.status)
	assert.Empty(t, bad.header.Get("Mcp-Session-Id"))
	var e struct {
		Error struct{ Code int } `json:"error"`
	}
	require.NoError(t, json.Unmarshal([]byte(bad.data), &e))
	assert.Equal(t, CodeInvalidParams, e.Error.Code)

	// Each initialize mints a new id.
	r2 := s.post(t, rpc(3, "initialize", map[string]any{"protocolVersion": "2025-06-18"}), nil)
	assert.NotEqual(t, m["id"], decodeToken(t, r2.header.Get("Mcp-Session-Id"))["id"])
}

func TestSessionCarriesProtocolState(t *testing.T) {
	s := startServer(t, nil)
	init := func(version string) string {
		r := s.post(t, rpc(1, "initialize", map[string]any{
			"protocolVersion": version, "clientInfo": map[string]any{"name": "client-" + version, "version": "1.2"},
		}), nil)
		require.Equal(t, http.StatusOK, r.status)
		return r.header.Get("Mcp-Session-Id")
	}
	call := rpc(2, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "hi"}})
	for _, version := range SupportedVersions {
		t.Run(version, func(t *testing.T) {
			token := init(version)
			r := s.post(t, call, map[string]string{"Mcp-Session-Id": token})
			require.Equal(t, http.StatusOK, r.status, r.body)
			got := s.tools.lastCall(t)
			assert.Equal(t, version, got.ProtocolVersion)
			assert.Equal(t, token, got.SessionID)
			assert.Equal(t, &metadata.ClientInfo{Name: "client-" + version, Version: "1.2"}, got.ClientInfo)
			assert.Equal(t, metadata.TransportStreamableHTTP, got.Transport)
			assert.Equal(t, token, got.Headers.Get("Mcp-Session-Id"))

			// The header wins over the token.
			r = s.post(t, call, map[string]string{"Mcp-Session-Id": token, "MCP-Protocol-Version": "2024-11-05"})
			require.Equal(t, http.StatusOK, r.status, r.body)
			assert.Equal(t, "2024-11-05", s.tools.lastCall(t).ProtocolVersion)
		})
	}
	t.Run("stateless", func(t *testing.T) {
		r := s.post(t, call, nil)
		require.Equal(t, http.StatusOK, r.status, r.body)
		got := s.tools.lastCall(t)
		assert.Equal(t, "2025-03-26", got.ProtocolVersion)
		assert.Empty(t, got.SessionID)
		assert.Nil(t, got.ClientInfo)
	})
}

func TestBadSessionHeader(t *testing.T) {
	enc := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	seal := func(plain string) string {
		tok, err := testSealer.Seal(sessions.Purpose, []byte(plain), time.Hour)
		require.NoError(t, err)
		return tok
	}
	genuine := seal(`{"id":"abcdefghijklmnop","v":"2025-06-18"}`)
	tampered := []byte(genuine)
	tampered[len(tampered)/2] ^= 0x01
	stranger, err := auth.NewRandomSealer()
	require.NoError(t, err)
	foreign, err := stranger.Seal(sessions.Purpose, []byte(`{"id":"abcdefghijklmnop","v":"2025-06-18"}`), time.Hour)
	require.NoError(t, err)
	otherPurpose, err := testSealer.Seal("sse-client-state", []byte(`{"id":"abcdefghijklmnop","v":"2025-06-18"}`), time.Hour)
	require.NoError(t, err)
	tests := []struct{ name, token string }{
		{"not base64", "garbage!!"},
		{"forged plain json", enc(`{"id":"abcdefghijklmnop","v":"2025-06-18"}`)},
		{"extension format", enc("abc|def")},
		{"tampered", string(tampered)},
		{"sealed with another key", foreign},
		{"sealed for another purpose", otherPurpose},
		{"sealed, not json", seal("hello|world")},
		{"sealed, unsupported version", seal(`{"id":"abcdefghijklmnop","v":"2026-07-28"}`)},
		{"sealed, no id", seal(`{"v":"2025-06-18"}`)},
		{"too long", strings.Repeat("A", auth.MaxTokenLen+4)},
	}
	s := startServer(t, nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, body := range []string{rpc(7, "tools/list", nil), rpc(nil, "notifications/initialized", nil)} {
				r := s.post(t, body, map[string]string{"Mcp-Session-Id": tt.token})
				assert.Equal(t, http.StatusBadRequest, r.status)
				id := "7"
				if !strings.Contains(body, `"id"`) {
					id = "null"
				}
				assert.JSONEq(t, errorBody(id, -32000, "Invalid client state."), r.body)
			}
		})
	}
	t.Run("genuine token accepted", func(t *testing.T) {
		r := s.post(t, rpc(1, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "x"}}), map[string]string{"Mcp-Session-Id": genuine})
		assert.Equal(t, http.StatusOK, r.status, r.body)
		assert.Equal(t, "2025-06-18", s.tools.lastCall(t).ProtocolVersion)
	})
	t.Run("expired token is 404", func(t *testing.T) {
		expired, err := testSealer.Seal(sessions.Purpose, []byte(`{"id":"abcdefghijklmnop","v":"2025-06-18"}`), -time.Second)
		require.NoError(t, err)
		r := s.post(t, rpc(3, "tools/list", nil), map[string]string{"Mcp-Session-Id": expired})
		assert.Equal(t, http.StatusNotFound, r.status)
		assert.JSONEq(t, errorBody("3", -32000, "Session expired: initialize again."), r.body)
	})
}

func TestSessionSharedAcrossInstances(t *testing.T) {
	a := startServer(t, nil) // both use testSealer: one key, two handlers
	b := startServer(t, nil)
	r := a.post(t, rpc(1, "initialize", map[string]any{"protocolVersion": "2025-06-18"}), nil)
	token := r.header.Get("Mcp-Session-Id")
	require.NotEmpty(t, token)
	r = b.post(t, rpc(2, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "x"}}), map[string]string{"Mcp-Session-Id": token})
	require.Equal(t, http.StatusOK, r.status, r.body)
	assert.Equal(t, "2025-06-18", b.tools.lastCall(t).ProtocolVersion)

	own, err := auth.NewRandomSealer()
	require.NoError(t, err)
	c := startServer(t, &Options{Sealer: own})
	r = c.post(t, rpc(3, "tools/list", nil), map[string]string{"Mcp-Session-Id": token})
	assert.Equal(t, http.StatusBadRequest, r.status, "a host with another key refuses the token")
}

func TestProtocolVersionHeader(t *testing.T) {
	s := startServer(t, nil)
	call := rpc(1, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "x"}})
	for _, v := range SupportedVersions {
		t.Run(v, func(t *testing.T) {
			r := s.post(t, call, map[string]string{"MCP-Protocol-Version": v})
			require.Equal(t, http.StatusOK, r.status, r.body)
			assert.Equal(t, v, s.tools.lastCall(t).ProtocolVersion)
		})
	}
	for _, v := range []string{"2099-01-01", "2025-13-01", "latest"} {
		t.Run("unsupported "+v, func(t *testing.T) {
			for _, tc := range []struct{ id, body string }{{"1", call}, {`"d"`, rpc("d", "server/discover", nil)}} {
				r := s.post(t, tc.body, map[string]string{"MCP-Protocol-Version": v})
				assert.Equal(t, http.StatusBadRequest, r.status)
				assert.JSONEq(t, `{"jsonrpc":"2.0","id":`+tc.id+`,"error":{"code":-32000,"message":"Unsupported protocol version",`+
					`"data":{"supported":["2024-11-05","2025-03-26","2025-06-18","2025-11-25"],"requested":"`+v+`"}}}`, r.body)
			}
		})
	}
	t.Run("initialize ignores the header", func(t *testing.T) {
		r := s.post(t, rpc(1, "initialize", map[string]any{"protocolVersion": "2025-06-18"}), map[string]string{"MCP-Protocol-Version": "2025-11-25"})
		require.Equal(t, http.StatusOK, r.status)
		assert.Contains(t, r.data, `"protocolVersion":"2025-06-18"`)
	})
}

func TestPing(t *testing.T) {
	s := startServer(t, nil)
	r := s.post(t, rpc(42, "ping", nil), nil)
	require.Equal(t, http.StatusOK, r.status)
	assert.Equal(t, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":42,\"result\":{}}\n\n", r.body)
}

func TestToolsListSplicesBytes(t *testing.T) {
	s := startServer(t, nil)
	tests := []struct {
		name, accept, want string
	}{
		{"json", "application/json", `{"jsonrpc":"2.0","id":1,"result":{"tools":` + testToolsList + `}}`},
		{"sse", acceptBoth, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"tools\":" + testToolsList + "}}\n\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := rpc(1, "tools/list", map[string]any{"cursor": "ignored"})
			r := s.post(t, body, map[string]string{"Accept": tt.accept})
			require.Equal(t, http.StatusOK, r.status)
			assert.Equal(t, tt.want, r.body, "the list bytes are spliced unchanged")
			assert.Equal(t, itoa(len(tt.want)), r.header.Get("Content-Length"))
			assert.NotContains(t, r.data, "nextCursor")
		})
	}
}

func TestToolsListChanges(t *testing.T) {
	tests := []struct {
		name, list, want string
	}{
		{"empty", "", `[]`},
		{"spaces kept", `[ {"name":"a"} ]`, `[ {"name":"a"} ]`},
		{"line breaks compacted", "[\n  {\"name\": \"a\"}\n]\n", `[{"name":"a"}]`},
	}
	s := startServer(t, nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s.tools.setList(json.RawMessage(tt.list))
			r := s.post(t, rpc(1, "tools/list", nil), nil)
			require.Equal(t, http.StatusOK, r.status)
			assert.Equal(t, `{"jsonrpc":"2.0","id":1,"result":{"tools":`+tt.want+`}}`, r.data)
		})
	}
	for _, bad := range []string{`{"name":"a"}`, `[{"name":`, `null`} {
		t.Run("invalid "+bad, func(t *testing.T) {
			s.tools.setList(json.RawMessage(bad))
			r := s.post(t, rpc(1, "tools/list", nil), nil)
			assert.Equal(t, http.StatusOK, r.status)
			assert.JSONEq(t, errorBody("1", -32603, "Internal error"), r.data)
			assert.Contains(t, s.logs.String(), "tool list is not usable")
		})
	}
}

func TestToolsCallFraming(t *testing.T) {
	s := startServer(t, nil)
	body := rpc(5, "tools/call", map[string]any{"name": "add", "arguments": map[string]any{"a": 2, "b": 3}, "_meta": map[string]any{"progressToken": 1}})
	const result = `{"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"{\"sum\":5}"}],"structuredContent":{"sum":5}}}`
	tests := []struct{ name, accept, want string }{
		{"json", "application/json", result},
		{"sse", acceptBoth, "event: message\ndata: " + result + "\n\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.post(t, body, map[string]string{"Accept": tt.accept})
			require.Equal(t, http.StatusOK, r.status)
			assert.Equal(t, tt.want, r.body)
			got := s.tools.lastCall(t)
			assert.Equal(t, "add", got.Name)
			assert.Equal(t, map[string]json.RawMessage{"a": json.RawMessage("2"), "b": json.RawMessage("3")}, got.Arguments)
		})
	}
}

func TestToolsCallResultEncoding(t *testing.T) {
	tests := []struct {
		name   string
		result *metadata.CallToolResult
		want   string
	}{
		{"nil content", &metadata.CallToolResult{}, `{"content":[]}`},
		{"error result", &metadata.CallToolResult{Content: []json.RawMessage{metadata.TextContent("boom")}, IsError: true},
			`{"content":[{"type":"text","text":"boom"}],"isError":true}`},
		{"null structured content", &metadata.CallToolResult{StructuredContent: json.RawMessage("null")}, `{"content":[]}`},
		{"compacted members", &metadata.CallToolResult{
			Content:           []json.RawMessage{json.RawMessage("{\n \"type\": \"text\",\n \"text\": \"a<b>\"\n}")},
			StructuredContent: json.RawMessage(`{ "x" : [1, 2] }`),
			Meta:              json.RawMessage(`{"k":"v"}`),
		}, `{"content":[{"type":"text","text":"a<b>"}],"structuredContent":{"x":[1,2]},"_meta":{"k":"v"}}`},
		{"html kept", &metadata.CallToolResult{Content: []json.RawMessage{metadata.TextContent("<b>&</b>")}},
			`{"content":[{"type":"text","text":"<b>&</b>"}]}`},
	}
	s := startServer(t, nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s.tools.call = func(context.Context, *CallRequest) (*metadata.CallToolResult, error) { return tt.result, nil }
			r := s.post(t, rpc(1, "tools/call", map[string]any{"name": "x"}), nil)
			require.Equal(t, http.StatusOK, r.status)
			assert.Equal(t, `{"jsonrpc":"2.0","id":1,"result":`+tt.want+`}`, r.data)
		})
	}
}

func TestToolsCallParams(t *testing.T) {
	tests := []struct {
		name   string
		params string // raw params JSON, "" for none
		want   string // error message; "" for success
		args   map[string]json.RawMessage
	}{
		{"no params", "", "Invalid params: missing required parameter 'name'.", nil},
		{"null params", "null", "Invalid params: missing required parameter 'name'.", nil},
		{"params array", `[1]`, "Invalid params: params must be an object.", nil},
		{"missing name", `{"arguments":{}}`, "Invalid params: missing required parameter 'name'.", nil},
		{"empty name", `{"name":""}`, "Invalid params: missing required parameter 'name'.", nil},
		{"name number", `{"name":5}`, "Invalid params: 'name' must be a string.", nil},
		{"arguments string", `{"name":"echo","arguments":"{}"}`, "Invalid params: 'arguments' must be an object.", nil},
		{"arguments array", `{"name":"echo","arguments":[1]}`, "Invalid params: 'arguments' must be an object.", nil},
		{"arguments absent", `{"name":"probe"}`, "", nil},
		{"arguments null", `{"name":"probe","arguments":null}`, "", nil},
		{"arguments object", `{"name":"probe","arguments":{"a":{"b":[1,"x"]},"c":null},"_meta":{"p":1}}`, "",
			map[string]json.RawMessage{"a": json.RawMessage(`{"b":[1,"x"]}`), "c": json.RawMessage("null")}},
	}
	s := startServer(t, nil)
	s.tools.call = func(context.Context, *CallRequest) (*metadata.CallToolResult, error) {
		return &metadata.CallToolResult{}, nil
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := `{"jsonrpc":"2.0","id":1,"method":"tools/call"`
			if tt.params != "" {
				body += `,"params":` + tt.params
			}
			body += "}"
			before := len(s.tools.calls)
			r := s.post(t, body, nil)
			require.Equal(t, http.StatusOK, r.status)
			if tt.want != "" {
				assert.JSONEq(t, errorBody("1", -32602, tt.want), r.data)
				assert.Len(t, s.tools.calls, before, "the tool must not be called")
				return
			}
			assert.JSONEq(t, `{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`, r.data)
			assert.Equal(t, tt.args, s.tools.lastCall(t).Arguments)
		})
	}
}

func TestToolsCallErrors(t *testing.T) {
	tests := []struct {
		name string
		call func(context.Context, *CallRequest) (*metadata.CallToolResult, error)
		want string
		log  string
	}{
		{"protocol error", func(context.Context, *CallRequest) (*metadata.CallToolResult, error) {
			return nil, &ProtocolError{Code: CodeInvalidParams, Message: "Unknown tool: 'nope'"}
		}, errorBody("1", -32602, "Unknown tool: 'nope'"), ""},
		{"wrapped protocol error with data", func(context.Context, *CallRequest) (*metadata.CallToolResult, error) {
			return nil, fmt.Errorf("calling: %w", &ProtocolError{Code: CodeInvalidParams, Message: "missing <args>", Data: map[string]any{"missing": []string{"city"}}})
		}, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"missing <args>","data":{"missing":["city"]}}}`, ""},
		{"unencodable data dropped", func(context.Context, *CallRequest) (*metadata.CallToolResult, error) {
			return nil, &ProtocolError{Code: -32001, Message: "odd", Data: func() {}}
		}, errorBody("1", -32001, "odd"), "encoding error data failed"},
		{"generic error", func(context.Context, *CallRequest) (*metadata.CallToolResult, error) {
			return nil, errors.New("worker exploded at 10.0.0.7")
		}, errorBody("1", -32603, "Internal error"), "worker exploded at 10.0.0.7"},
		{"panic", func(context.Context, *CallRequest) (*metadata.CallToolResult, error) {
			panic("bad tool")
		}, errorBody("1", -32603, "Internal error"), "panic: bad tool"},
		{"nil result", func(context.Context, *CallRequest) (*metadata.CallToolResult, error) {
			return nil, nil
		}, errorBody("1", -32603, "Internal error"), "the tool returned no result"},
		{"invalid content block", func(context.Context, *CallRequest) (*metadata.CallToolResult, error) {
			return &metadata.CallToolResult{Content: []json.RawMessage{json.RawMessage(`{"type":`)}}, nil
		}, errorBody("1", -32603, "Internal error"), "encoding content block 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := startServer(t, nil)
			s.tools.call = tt.call
			r := s.post(t, rpc(1, "tools/call", map[string]any{"name": "x"}), nil)
			require.Equal(t, http.StatusOK, r.status)
			assert.JSONEq(t, tt.want, r.data)
			assert.NotContains(t, r.data, "10.0.0.7", "details stay in the log")
			if tt.log != "" {
				assert.Contains(t, s.logs.String(), tt.log)
			}
		})
	}
}

func TestUnknownMethods(t *testing.T) {
	s := startServer(t, nil)
	for _, method := range []string{"server/discover", "resources/list", "prompts/list", "completion/complete", "x\"<y>"} {
		t.Run(method, func(t *testing.T) {
			r := s.post(t, rpc(9, method, map[string]any{}), nil)
			assert.Equal(t, http.StatusOK, r.status)
			assert.JSONEq(t, errorBody("9", -32601, "Method '"+method+"' is not available."), r.data)
		})
	}
}

// A method name is echoed cut: a client does not get its megabytes back.
func TestUnknownMethodEchoedCut(t *testing.T) {
	s := startServer(t, nil)
	method := strings.Repeat("m", 1<<20)
	r := s.post(t, rpc(9, method, map[string]any{}), nil)
	assert.Equal(t, http.StatusOK, r.status)
	assert.JSONEq(t, errorBody("9", -32601, "Method '"+method[:140]+"…' is not available."), r.data)
}

func TestIDsEchoedVerbatim(t *testing.T) {
	tests := []struct{ name, id string }{
		{"integer", `7`},
		{"zero", `0`},
		{"negative", `-3`},
		{"float", `1.5e3`},
		{"big", `123456789012345678901234567890`},
		{"string", `"abc"`},
		{"empty string", `""`},
		{"escaped string", `"a\"b\u00e9<"`},
	}
	s := startServer(t, nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, method := range []string{"ping", "tools/list", "nope"} {
				r := s.post(t, `{"jsonrpc":"2.0","id":`+tt.id+`,"method":"`+method+`","params":{"name":"echo","arguments":{"text":"t"}}}`, nil)
				require.Equal(t, http.StatusOK, r.status)
				assert.True(t, strings.HasPrefix(r.data, `{"jsonrpc":"2.0","id":`+tt.id+`,`), "got %s", r.data)
			}
			r := s.post(t, `{"jsonrpc":"2.0","id":`+tt.id+`,"method":"tools/call","params":{"name":"echo","arguments":{"text":"t"}}}`, nil)
			assert.Equal(t, `{"jsonrpc":"2.0","id":`+tt.id+`,"result":{"content":[{"type":"text","text":"t"}]}}`, r.data)
		})
	}
}

func TestAppendStringMatchesEncodingJSON(t *testing.T) {
	for _, s := range []string{"", "plain", `q"b\s`, "nl\nret\rtab\tnul\x00bell\x07", "<b>&amp;", "é ü 日本", "bad \xff utf8", "ls\u2028ps\u2029", "\x1f\x7f"} {
		t.Run(s, func(t *testing.T) {
			want, err := metadata.Marshal(s)
			require.NoError(t, err)
			var b strings.Builder
			buf := getBuffer()
			defer putBuffer(buf)
			appendString(buf, s)
			b.Write(buf.Bytes())
			assert.Equal(t, string(want), b.String())
		})
	}
}

// TestSessionTokenIsBounded: a client's clientInfo is cut before it is
// sealed into the token, so that a token always fits the request headers
// the host accepts (a 3 MiB name once made a token the host refused).
func TestSessionTokenIsBounded(t *testing.T) {
	s := startServer(t, nil)
	huge := strings.Repeat("é", 3<<20/2)
	r := s.post(t, rpc(1, "initialize", map[string]any{"protocolVersion": "2025-06-18",
		"clientInfo": map[string]any{"name": huge, "version": strings.Repeat("\"", 64<<10)}}), nil)
	require.Equal(t, http.StatusOK, r.status)
	token := r.header.Get("Mcp-Session-Id")
	assert.Less(t, len(token), 4<<10, "the token stays small")
	m := decodeToken(t, token)
	c := m["c"].(map[string]any)
	assert.Equal(t, strings.Repeat("é", MaxClientInfoBytes/2), c["name"], "cut on a character boundary")
	assert.Equal(t, strings.Repeat("\"", MaxClientInfoBytes), c["version"])

	ping := s.post(t, rpc(2, "ping", nil), map[string]string{"Mcp-Session-Id": token})
	assert.Equal(t, http.StatusOK, ping.status, "the token opens a session")
}
