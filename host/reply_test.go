package host

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/host/internal/mcp"
	"github.com/funcmcp/funcmcp/metadata"
)

// directWorker answers every invocation with a direct reply of body, and
// records the Accept header it got.
func directWorker(t *testing.T, body string) (*httptest.Server, func() string) {
	var mu sync.Mutex
	var accept string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		mu.Lock()
		accept = r.Header.Get("Accept")
		mu.Unlock()
		w.Header().Set("Content-Type", metadata.MediaTypeDirectResult)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv, func() string { mu.Lock(); defer mu.Unlock(); return accept }
}

func TestDirectReply(t *testing.T) {
	root := weatherApp(t, `{"version":"2.0"}`)
	call := func(t *testing.T, body string) (*metadata.CallToolResult, string, string) {
		srv, accept := directWorker(t, body)
		h, logs := newTestHost(t, root, srv.URL, nil)
		res, err := h.callTool(context.Background(), &mcp.CallRequest{Name: "get_weather", Arguments: map[string]json.RawMessage{"city": json.RawMessage(`"Oslo"`)}})
		require.NoError(t, err)
		return res, logs.String(), accept()
	}

	t.Run("valid result", func(t *testing.T) {
		res, logs, accept := call(t, `{"Logs":["from the worker"],"Result":{"content":[{"type":"text","text":"Oslo"}],"structuredContent":{"city":"Oslo", "temp":21.5}}}`)
		assert.True(t, metadata.AcceptsDirectResult(accept), "the host asks for the direct reply: %q", accept)
		assert.False(t, res.IsError, "%+v", res)
		assert.Equal(t, `{"city":"Oslo", "temp":21.5}`, string(res.StructuredContent), "structuredContent is sent on as the worker wrote it")
		assert.Contains(t, logs, `msg="from the worker"`)
	})
	t.Run("output that breaks the schema, with a forged check", func(t *testing.T) {
		res, logs, _ := call(t, `{"Logs":[],"Result":{"content":[],"structuredContent":{"city":"Oslo","temp":"warm"}},"Checked":"00"}`)
		assert.True(t, res.IsError)
		assert.Contains(t, logs, "does not match its output schema")
	})
	t.Run("not a direct reply", func(t *testing.T) {
		res, logs, _ := call(t, `{"Logs":[],"Result":{"content":[{"type":"text"}]}}`)
		assert.True(t, res.IsError)
		assert.Contains(t, logs, "the direct reply")
	})
}
