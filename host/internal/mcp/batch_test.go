package mcp

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
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

// TestBatchBudgets: a batch is bounded in messages and in the bytes of its
// replies, so that small requests for large replies cost the bound.
func TestBatchBudgets(t *testing.T) {
	budget := len(testToolsList) + 100 // one tools/list reply fits, two do not
	s := startServer(t, &Options{MaxBatchMessages: 5, MaxBatchReplyBytes: budget})
	list := func(id int) string { return rpc(id, "tools/list", nil) }
	join := func(parts ...string) string { return "[" + strings.Join(parts, ",") + "]" }
	plain := map[string]string{"Accept": "application/json"}

	r := s.post(t, join(list(1), list(2), list(3), list(4), list(5), list(6)), plain)
	assert.Equal(t, http.StatusBadRequest, r.status)
	assert.JSONEq(t, errorBody("null", CodeInvalidRequest, "Invalid Request: a JSON-RPC batch may hold at most 5 messages; this one holds 6."), r.body)

	before := len(s.tools.calls)
	echo := rpc(4, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "x"}})
	r = s.post(t, join(list(1), list(2), rpc(nil, "notifications/initialized", nil), list(3), echo), plain)
	require.Equal(t, http.StatusOK, r.status, r.body)
	var replies []map[string]json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(r.body), &replies), r.body)
	require.Len(t, replies, 4, "one reply per request")
	assert.Contains(t, string(replies[0]["result"]), `"tools":`)
	tooLarge := "Batch reply too large: the replies to this batch would exceed " + strconv.Itoa(budget) + " bytes; "
	assert.JSONEq(t, errorBody("2", codeServerError, tooLarge+"send this request on its own."), mustJSONText(t, replies[1]))
	assert.JSONEq(t, errorBody("3", codeServerError, tooLarge+"this request was not run; send it on its own."), mustJSONText(t, replies[2]))
	assert.JSONEq(t, errorBody("4", codeServerError, tooLarge+"this request was not run; send it on its own."), mustJSONText(t, replies[3]))
	assert.Equal(t, before, len(s.tools.calls), "nothing runs once the budget is spent")
	assert.Less(t, len(r.body), budget+3*300, "the reply stays near the budget")
}

func mustJSONText(t *testing.T, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	require.NoError(t, err)
	return string(data)
}
