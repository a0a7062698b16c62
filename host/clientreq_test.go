package host

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/internal/testutil"
	"github.com/funcmcp/funcmcp/metadata"
)

// askClient posts one request notification the way the worker SDK does and
// returns the status and body (reported with t.Errorf on failure: it runs on
// the worker's goroutine).
func askClient(t testing.TB, offer http.Header, body string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, offer.Get(metadata.HeaderNotifyURL), strings.NewReader(body))
	if !assert.NoError(t, err) {
		return 0, ""
	}
	req.Header.Set("Authorization", "Bearer "+offer.Get(metadata.HeaderNotifyToken))
	resp, err := http.DefaultClient.Do(req)
	if !assert.NoError(t, err, "posting a request") {
		return 0, ""
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data)
}

// TestClientAnswerAcrossHosts: a call on host A asks its client; the
// client's answer POSTed to host B reaches the call on A through the
// backplane, in memory and through Azure Storage Queues (Azurite).
func TestClientAnswerAcrossHosts(t *testing.T) {
	for _, kind := range []string{BackplaneMemory, BackplaneAzureQueues} {
		t.Run(kind, func(t *testing.T) {
			t.Setenv("WEBSITE_AUTH_ENCRYPTION_KEY", testSessionKey)
			t.Setenv(SettingBackplane, kind)
			if kind == BackplaneAzureQueues {
				root, err := filepath.Abs("..")
				require.NoError(t, err)
				az := testutil.StartAzurite(t, root)
				t.Setenv(SettingStorage, az.ConnectionString())
			}
			app := t.TempDir()
			writeFile(t, app, HostFile, `{"version":"2.0"}`)
			writeTool(t, app, "work", &metadata.ToolOptions{ToolName: "work", Description: "Asks the user.", Properties: []metadata.ToolProperty{}})
			nw := newNotifyWorker(t)
			replies := make(chan string, 1)
			nw.script = func(t testing.TB, offer http.Header) {
				assert.Equal(t, metadata.InputModeStream, offer.Get(metadata.HeaderInputMode))
				status, body := askClient(t, offer, `{"type":"request","key":"elicitation-1","method":"elicitation/create","params":{"message":"Sure?","requestedSchema":{"type":"object"}}}`)
				assert.Equal(t, http.StatusOK, status, body)
				replies <- body
			}
			_, a := serveTestHost(t, app, nw.srv.URL, nil)
			_, b := serveTestHost(t, app, nw.srv.URL, nil)

			status, init := rpcOn(t, a, "", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"c","version":"1"}}}`)
			require.Equal(t, http.StatusOK, status)
			session := init.Get("Mcp-Session-Id")
			require.NotEmpty(t, session)

			st := openCallStream(t, a+MCPPath, session, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"work","arguments":{}}}`)
			ev := nextData(t, st)
			var req struct{ ID, Method string }
			require.NoError(t, json.Unmarshal([]byte(ev.Data), &req), ev.Data)
			assert.Equal(t, "elicitation/create", req.Method)

			status, _ = rpcOn(t, b, session, `{"jsonrpc":"2.0","id":"`+req.ID+`","result":{"action":"accept","content":{"ok":true}}}`)
			assert.Equal(t, http.StatusAccepted, status)
			select {
			case body := <-replies:
				assert.JSONEq(t, `{"result":{"action":"accept","content":{"ok":true}}}`, body)
			case <-time.After(30 * time.Second):
				t.Fatal("the answer did not reach the worker")
			}
			assert.Contains(t, nextData(t, st).Data, `"id":1`)
		})
	}
}

// rpcOn posts one message to the MCP endpoint of base with a session.
func rpcOn(t *testing.T, base, session, body string) (int, http.Header) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, base+MCPPath, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, resp.Header
}

// openCallStream posts a request and returns its response stream.
func openCallStream(t *testing.T, url, session, body string) *testutil.SSEStream {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", session)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		require.NoError(t, err)
	}
	require.Equal(t, http.StatusOK, resp.StatusCode)
	st := testutil.ReadSSE(resp, cancel)
	t.Cleanup(st.Close)
	return st
}

// nextData returns the next event of st that carries data (not the
// priming event of a resumable stream).
func nextData(t *testing.T, st *testutil.SSEStream) testutil.SSEEvent {
	t.Helper()
	for {
		ev, err := st.Next(20 * time.Second)
		require.NoError(t, err)
		if ev.Data != "" {
			return ev
		}
	}
}
