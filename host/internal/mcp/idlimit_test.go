package mcp

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/metadata"
)

// calls counts the tools/call that reached the fake.
func (f *fakeTools) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.calls)
}

// stringID is a JSON string id whose text (quotes included) is n bytes.
func stringID(n int) string { return `"` + strings.Repeat("i", n-2) + `"` }

// TestLongIDRefusedBeforeAnyWork: a request whose id is over MaxIDBytes of
// JSON text is refused with -32600 and id null before any work (no call):
// the links of the chain see the refusal, decided already, without its id;
// an id of MaxIDBytes is served and echoed.
func TestLongIDRefusedBeforeAnyWork(t *testing.T) {
	var links, refused atomic.Int32
	count := func(next MethodHandler) MethodHandler {
		return func(x *Exchange) {
			links.Add(1)
			if x.Refused() && x.ID() == "" {
				refused.Add(1)
			}
			next(x)
		}
	}
	s := startServer(t, &Options{Middleware: []Middleware{count}})
	call := func(id string) reply {
		return s.post(t, `{"jsonrpc":"2.0","id":`+id+`,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`, nil)
	}

	for _, id := range []string{stringID(MaxIDBytes + 1), "1" + strings.Repeat("0", MaxIDBytes), stringID(1 << 20)} {
		r := call(id)
		assert.Equal(t, http.StatusBadRequest, r.status)
		assert.JSONEq(t, errorBody("null", CodeInvalidRequest, "Invalid Request: the id is longer than 128 bytes"), r.data)
	}
	assert.Equal(t, int32(3), refused.Load(), "each refusal passes the chain, decided, without its id")
	assert.Zero(t, s.tools.count(), "and calls nothing")

	id := stringID(MaxIDBytes)
	r := call(id)
	require.Equal(t, http.StatusOK, r.status, r.body)
	var got struct{ ID json.RawMessage }
	require.NoError(t, json.Unmarshal([]byte(r.data), &got))
	assert.Equal(t, id, string(got.ID))
	assert.Equal(t, int32(4), links.Load())
}

// TestLongIDRefusedInABatch: in a batch, the element with a long id gets
// its -32600 with id null, and the others are answered.
func TestLongIDRefusedInABatch(t *testing.T) {
	s := startServer(t, nil)
	body := `[{"jsonrpc":"2.0","id":` + stringID(MaxIDBytes+1) + `,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}},` +
		`{"jsonrpc":"2.0","id":2,"method":"ping"}]`
	r := s.post(t, body, map[string]string{"Mcp-Protocol-Version": batchVersion})
	require.Equal(t, http.StatusOK, r.status, r.body)
	var replies []json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(r.data), &replies))
	require.Len(t, replies, 2)
	assert.JSONEq(t, errorBody("null", CodeInvalidRequest, "Invalid Request: the id is longer than 128 bytes"), string(replies[0]))
	assert.JSONEq(t, `{"jsonrpc":"2.0","id":2,"result":{}}`, string(replies[1]))
	assert.Zero(t, s.tools.count())
}

// TestLegacySSELongIDRefused: over the legacy SSE transport, the message is
// accepted (202, as every message is) and its -32600 with id null comes on
// the stream; nothing is called, and the id is not remembered as run.
func TestLegacySSELongIDRefused(t *testing.T) {
	s := startSSEServer(t, &LegacySSEOptions{InstanceID: "inst1"})
	called := make(chan string, 2)
	s.tools.mu.Lock()
	s.tools.call = func(_ context.Context, req *CallRequest) (*metadata.CallToolResult, error) {
		called <- req.Name
		return &metadata.CallToolResult{Content: []json.RawMessage{metadata.TextContent("ran")}}, nil
	}
	s.tools.mu.Unlock()
	st := openStream(t, s.URL, "", nil)
	code, _ := post(t, st.Endpoint, `{"jsonrpc":"2.0","id":`+stringID(1<<20)+`,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`)
	require.Equal(t, http.StatusAccepted, code)
	ev := next(t, st)
	assert.JSONEq(t, errorBody("null", CodeInvalidRequest, "Invalid Request: the id is longer than 128 bytes"), ev.Data)
	assert.Empty(t, called)

	code, _ = post(t, st.Endpoint, `{"jsonrpc":"2.0","id":"ok","method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`)
	require.Equal(t, http.StatusAccepted, code)
	ev = next(t, st)
	assert.Equal(t, `"ok"`, gjson(t, ev.Data, "id"))
	assert.Equal(t, "echo", <-called)
}
