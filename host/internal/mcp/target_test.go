package mcp

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/host/internal/owner"
)

// TestExchangeTarget: what a link reads of what a request names: the
// method when the endpoint knows it, the kind, the client's text and the
// app's own name for it (Server.Known), "" when the app has none.
func TestExchangeTarget(t *testing.T) {
	srv := serverOf(newFakeTools())
	srv.Known = func(kind TargetKind, name string) (string, bool) {
		switch {
		case kind == TargetTool && name == "echo":
			return "echo", true
		case kind == TargetPrompt && strings.EqualFold(name, "greeting"):
			return "greeting", true
		case kind == TargetResource && strings.HasPrefix(name, "notes://"):
			return "notes://{id}", true
		}
		return "", false
	}
	var got []Target
	record := func(next MethodHandler) MethodHandler {
		return func(x *Exchange) {
			tg := x.Target()
			// What the app found is read below, apart.
			tg.Scoped, tg.Resolved = false, nil
			got = append(got, tg)
			next(x)
		}
	}
	h := NewHandler(srv, &Options{Sealer: testSealer, Middleware: []Middleware{record}})
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"nope"}}`,
		`{"jsonrpc":"2.0","id":3,"method":"prompts/get","params":{"name":"Greeting"}}`,
		`{"jsonrpc":"2.0","id":4,"method":"resources/read","params":{"uri":"notes://7"}}`,
		`{"jsonrpc":"2.0","id":5,"method":"resources/subscribe","params":{"uri":"file:///x"}}`,
		`{"jsonrpc":"2.0","id":6,"method":"tools/list","params":{"name":"echo"}}`,
		`{"jsonrpc":"2.0","id":7,"method":"made/up","params":{"name":"echo"}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`,
		`{"jsonrpc":"2.0","method":"notifications/made_up"}`,
	} {
		req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body))
		req.Header.Set("Accept", acceptBoth)
		h.ServeHTTP(httptest.NewRecorder(), req)
	}
	assert.Equal(t, []Target{
		{Method: "tools/call", Kind: TargetTool, Name: "echo", Known: "echo"},
		{Method: "tools/call", Kind: TargetTool, Name: "nope"},
		{Method: "prompts/get", Kind: TargetPrompt, Name: "Greeting", Known: "greeting"},
		{Method: "resources/read", Kind: TargetResource, Name: "notes://7", Known: "notes://{id}"},
		{Method: "resources/subscribe", Kind: TargetResource, Name: "file:///x"},
		{Method: "tools/list"},
		{},
		{Method: "notifications/cancelled"},
		{},
	}, got)
}

// TestTargetResolvedOnce: what a request names is looked up once per
// exchange, however many links and steps read it (the rate limit, the
// scopes, telemetry, the Mcp-Param-* check, the task declaration, the
// call); the call gets what was found.
func TestTargetResolvedOnce(t *testing.T) {
	ft := newFakeTools()
	srv := serverOf(ft)
	lookups := 0
	entry := &struct{ name string }{"echo"}
	srv.Resolve = func(kind TargetKind, name string) *Resolved {
		lookups++
		if kind == TargetTool && name == "echo" {
			return &Resolved{Known: "echo", RequiredScopes: []string{"s"}, Entry: entry}
		}
		return nil
	}
	read := func(next MethodHandler) MethodHandler {
		return func(x *Exchange) {
			for range 3 {
				tg := x.Target()
				assert.Equal(t, []string{"s"}, tg.RequiredScopes())
			}
			next(x)
		}
	}
	hs := httptest.NewServer(NewHandler(srv, &Options{Sealer: testSealer, Middleware: []Middleware{read, read}}))
	t.Cleanup(hs.Close)
	s := &testServer{Server: hs, tools: ft}
	r := s.post(t, rpc(1, methodToolsCall, map[string]any{"name": "echo", "arguments": map[string]any{"text": "x"}}), map[string]string{headerProtocolVersion: "2025-11-25"})
	require.Equal(t, http.StatusOK, r.status, r.body)
	assert.Equal(t, 1, lookups, "one lookup for a legacy call")
	call := ft.lastCall(t)
	require.NotNil(t, call.Tool)
	assert.Same(t, entry, call.Tool.Entry, "the call gets what was found")
	assert.Equal(t, owner.ID("addr:127.0.0.1"), call.Owner, "and its owner, a typed field")

	r = s.post(t, rpc(2, methodToolsCall, map[string]any{"name": "echo", "arguments": map[string]any{"text": "x"}, "_meta": modernMeta(ModernVersion)}),
		modernHeaders(methodToolsCall, "echo"))
	require.Equal(t, http.StatusOK, r.status, r.body)
	assert.Equal(t, 2, lookups, "one lookup for a 2026-07-28 call")
}
