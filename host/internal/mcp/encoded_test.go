package mcp

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/funcmcp/funcmcp/metadata"
)

// TestEncodedResultIsSpliced: an encoded result is answered as the worker
// encoded it, with resultType, the cache hints and the server info in its
// _meta on 2026-07-28.
func TestEncodedResultIsSpliced(t *testing.T) {
	f := &fakeFunctions{fakeTools: newFakeTools(), lists: fullLists()}
	srv := serverOf(f)
	srv.Functions.ReadResource = func(_ context.Context, req *ReadRequest) (Result[metadata.ReadResourceResult], error) {
		enc, err := EncodedResult([]byte(`{"contents":[{"uri":"test://a","text":"A","extra":[1, 2]}]}`), "contents")
		return Result[metadata.ReadResourceResult]{Encoded: enc}, err
	}
	srv.Functions.GetPrompt = func(_ context.Context, req *PromptRequest) (Result[metadata.GetPromptResult], error) {
		enc, err := EncodedResult([]byte(`{"description":"d","messages":[],"_meta":{"k":1}}`), "messages")
		return Result[metadata.GetPromptResult]{Encoded: enc}, err
	}
	hs := httptest.NewServer(NewHandler(srv, &Options{Logger: slog.New(slog.DiscardHandler), Sealer: testSealer,
		ServerInfo: Implementation{Name: "modern-test", Version: "9.9.9"}}))
	t.Cleanup(hs.Close)
	s := &testServer{Server: hs, tools: f.fakeTools}
	legacy := map[string]string{headerProtocolVersion: "2025-11-25"}

	r := s.post(t, rpc(1, "resources/read", map[string]any{"uri": "test://a"}), legacy)
	assert.JSONEq(t, `{"jsonrpc":"2.0","id":1,"result":{"contents":[{"uri":"test://a","text":"A","extra":[1,2]}]}}`, r.data)
	r = s.post(t, rpc(2, "prompts/get", map[string]any{"name": "greet"}), legacy)
	assert.JSONEq(t, `{"jsonrpc":"2.0","id":2,"result":{"description":"d","messages":[],"_meta":{"k":1}}}`, r.data)

	r = s.post(t, rpc(3, "resources/read", map[string]any{"uri": "test://a", "_meta": modernMeta(ModernVersion)}), modernHeaders("resources/read", "test://a"))
	assert.JSONEq(t, `{"jsonrpc":"2.0","id":3,"result":{"resultType":"complete","ttlMs":0,"cacheScope":"private",`+
		`"contents":[{"uri":"test://a","text":"A","extra":[1,2]}],`+serverInfoMeta+`}}`, r.data)
	r = s.post(t, rpc(4, "prompts/get", map[string]any{"name": "greet", "_meta": modernMeta(ModernVersion)}), modernHeaders("prompts/get", "greet"))
	assert.JSONEq(t, `{"jsonrpc":"2.0","id":4,"result":{"resultType":"complete","description":"d","messages":[],`+
		`"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"modern-test","version":"9.9.9"},"k":1}}}`, r.data)
}
