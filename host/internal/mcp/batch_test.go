package mcp

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// session opens a session at version with initialize and returns its token.
func (s *testServer) session(t *testing.T, version string) string {
	t.Helper()
	r := s.post(t, rpc(0, "initialize", map[string]any{"protocolVersion": version}), nil)
	require.Equal(t, http.StatusOK, r.status, r.body)
	require.Contains(t, r.data, `"protocolVersion":"`+version+`"`)
	token := r.header.Get("Mcp-Session-Id")
	require.NotEmpty(t, token)
	return token
}

func TestBatches(t *testing.T) {
	s := startServer(t, nil)
	echo := func(id any, text string) string {
		return rpc(id, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": text}})
	}
	batch := `[` + echo(1, "a") + `,` + rpc(nil, "notifications/initialized", nil) + `, ` + rpc("p", "ping", nil) + `,` + echo(3, "c") + `]`
	want := `[{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"a"}]}},` +
		`{"jsonrpc":"2.0","id":"p","result":{}},` +
		`{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"c"}]}}]`

	t.Run("accepted on a 2025-03-26 session", func(t *testing.T) {
		token := s.session(t, "2025-03-26")
		for _, accept := range []string{"application/json", acceptBoth} {
			r := s.post(t, batch, map[string]string{"Mcp-Session-Id": token, "Accept": accept})
			require.Equal(t, http.StatusOK, r.status, r.body)
			assert.Equal(t, accept == acceptBoth, r.sse)
			assert.Equal(t, want, r.data, "replies in order, notifications left out")
		}
		assert.Equal(t, "2025-03-26", s.tools.lastCall(t).ProtocolVersion)
	})

	t.Run("accepted without session or header", func(t *testing.T) {
		r := s.post(t, batch, map[string]string{"Accept": "application/json"})
		require.Equal(t, http.StatusOK, r.status, r.body)
		assert.Equal(t, want, r.data)
	})

	t.Run("notifications only", func(t *testing.T) {
		r := s.post(t, `[`+rpc(nil, "notifications/initialized", nil)+`,{"jsonrpc":"2.0","id":9,"result":{}}]`, nil)
		assert.Equal(t, http.StatusAccepted, r.status)
		assert.Empty(t, r.body)
	})

	t.Run("bad elements answered in place", func(t *testing.T) {
		r := s.post(t, `[`+rpc(1, "initialize", map[string]any{"protocolVersion": "2025-03-26"})+`,5,`+
			rpc(2, "tools/list", map[string]any{"_meta": modernMeta(ModernVersion)})+`,`+rpc(3, "nope", nil)+`]`,
			map[string]string{"Accept": "application/json"})
		require.Equal(t, http.StatusOK, r.status, r.body)
		assert.JSONEq(t, `[`+errorBody("1", CodeInvalidRequest, "Invalid Request: initialize must not be part of a JSON-RPC batch")+`,`+
			errorBody("null", CodeInvalidRequest, "Invalid Request: the message must be a JSON object")+`,`+
			errorBody("2", CodeInvalidRequest, "Invalid Request: 2026-07-28 requests cannot be batched")+`,`+
			errorBody("3", CodeMethodNotFound, "Method 'nope' is not available.")+`]`, r.data)
		assert.Empty(t, r.header.Get("Mcp-Session-Id"))
	})

	t.Run("refused after 2025-03-26", func(t *testing.T) {
		for _, v := range []string{"2024-11-05", "2025-06-18", "2025-11-25"} {
			token := s.session(t, v)
			for _, h := range []map[string]string{{"Mcp-Session-Id": token}, {"MCP-Protocol-Version": v}} {
				r := s.post(t, batch, h)
				assert.Equal(t, http.StatusBadRequest, r.status, v)
				assert.JSONEq(t, errorBody("null", CodeInvalidRequest, "Invalid Request: JSON-RPC batches are accepted only in protocol version 2025-03-26, not in "+v+"."), r.body)
			}
		}
	})

	t.Run("refused for modern clients", func(t *testing.T) {
		r := s.post(t, batch, map[string]string{"MCP-Protocol-Version": ModernVersion})
		assert.Equal(t, http.StatusBadRequest, r.status)
		assert.Contains(t, r.body, `"code":-32000`, "2026-07-28 is not a legacy revision: the version header is refused as for any unknown one")
	})

	t.Run("empty batch", func(t *testing.T) {
		r := s.post(t, `[]`, nil)
		assert.Equal(t, http.StatusBadRequest, r.status)
		assert.JSONEq(t, errorBody("null", CodeInvalidRequest, "Invalid Request: an empty batch"), r.body)
	})
}
