package serve_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/internal/testutil"
	"github.com/funcmcp/funcmcp/serve"
	"github.com/funcmcp/funcmcp/worker"
)

var endpoint = regexp.MustCompile(`MCP server endpoint: (http://127\.0\.0\.1:\d+/runtime/webhooks/mcp)`)

// TestServeLogsInBatches: the serve command writes its log as funchost
// does, many lines to a write instead of one system call per line (two
// per tool call: the function's own line and "Executed"), and nothing
// waiting is lost when it returns.
func TestServeLogsInBatches(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "host.json"),
		[]byte(`{"version":"2.0","extensions":{"mcp":{"system":{"webhookAuthorizationLevel":"Anonymous"}}}}`), 0o600))
	t.Chdir(dir)
	app := worker.New(nil)
	app.ConfigureMcpTool("hello").Handle(func(_ context.Context, tc *worker.ToolContext) (*worker.Result, error) {
		tc.Logf("hello from the tool")
		return worker.TextResult("hello"), nil
	})

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	stdout, stderr := &testutil.Writes{}, &testutil.Writes{}
	done := make(chan int, 1)
	go func() { done <- serve.RunArgs(ctx, app, []string{"handler", "serve", "--port", "0"}, stdout, stderr) }()
	var url string
	require.Eventually(t, func() bool {
		_, out := stdout.State()
		m := endpoint.FindStringSubmatch(out)
		if m != nil {
			url = m[1]
		}
		return m != nil
	}, 10*time.Second, 5*time.Millisecond, "the endpoint line")

	writesBefore, before := stderr.State()
	const calls = 30
	for i := range calls {
		body := `{"jsonrpc":"2.0","id":` + strconv.Itoa(i) + `,"method":"tools/call","params":{"name":"hello","arguments":{}}}`
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
	}
	cancel()
	select {
	case code := <-done:
		require.Equal(t, 0, code)
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not return after its context ended")
	}

	n, text := stderr.State()
	logged := strings.TrimPrefix(text, before)
	assert.Equal(t, calls, strings.Count(logged, "hello from the tool"), "every call's own line is written")
	assert.Equal(t, calls, strings.Count(logged, "Executed 'Functions.hello' (Succeeded"), "and its Executed line, the last ones too")
	lines := strings.Count(logged, "\n")
	assert.Less(t, n-writesBefore, lines/2, "%d lines in %d writes: in batches, not one write each", lines, n-writesBefore)
}
