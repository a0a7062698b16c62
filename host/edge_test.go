package host

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/internal/testutil"
	"github.com/funcmcp/funcmcp/metadata"
)

// taskApp writes an app whose tools slow (the fake worker's: it runs
// until cancelled, at most 10 s) and get_weather (it answers at once) run
// as MCP tasks, with the given local.settings.json Values (JSON members,
// "" for none).
func taskApp(t testing.TB, values string) string {
	t.Helper()
	root := t.TempDir()
	writeFile(t, root, HostFile, `{"version":"2.0"}`)
	writeFile(t, root, "local.settings.json", `{"IsEncrypted":false,"Values":{`+values+`}}`)
	writeTool(t, root, "slow", &metadata.ToolOptions{ToolName: "slow", Description: "Runs long.", Properties: []metadata.ToolProperty{},
		Task: &metadata.TaskSupport{Support: metadata.TaskOptional}})
	writeTool(t, root, "get_weather", &metadata.ToolOptions{ToolName: "get_weather", Description: "Weather.", Properties: cityProperty,
		Task: &metadata.TaskSupport{Support: metadata.TaskOptional}})
	return root
}

// startTask makes a 2026-07-28 task call of tool with headers and returns
// the JSON-RPC error message, "" when a task was made.
func startTask(t *testing.T, url, tool string, headers map[string]string) string {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + tool + `","arguments":{"city":"Oslo"},"_meta":{` +
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
		`"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}}}`
	h := map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": tool}
	for k, v := range headers {
		h[k] = v
	}
	resp := bearerPost(t, url, "", body, h)
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(data))
	var reply struct {
		Result struct {
			ResultType string `json:"resultType"`
			TaskID     string `json:"taskId"`
		} `json:"result"`
		Error *struct{ Message string } `json:"error"`
	}
	require.NoError(t, json.Unmarshal(sseData(data), &reply), string(data))
	if reply.Error != nil {
		return reply.Error.Message
	}
	require.Equal(t, "task", reply.Result.ResultType, string(data))
	return ""
}

// TestFreshCredentialsMakeNoNewOwner (issue 39, finding 5): with no
// access tokens asked for, an Authorization header (or a key, or a session
// id) that nothing checks is the client's own choice; a client sending a
// fresh one per request once got a fresh owner each time (192 running
// tasks in 1.4 s, the server's whole task budget). Now they are one owner,
// the client address, and the per-client limits hold.
func TestFreshCredentialsMakeNoNewOwner(t *testing.T) {
	fresh := func(i int) map[string]string {
		return map[string]string{"Authorization": fmt.Sprintf("Bearer random-%d", i), "X-Functions-Key": fmt.Sprintf("key-%d", i),
			"Mcp-Session-Id": fmt.Sprintf("session-%d", i)}
	}
	t.Run("running tasks", func(t *testing.T) {
		h, _ := newTestHost(t, taskApp(t, ""), newFakeWorker(t).srv.URL, &Options{MaxRunningTasksPerClient: 2})
		srv := httptest.NewServer(h.Handler())
		defer srv.Close()
		for i := range 2 {
			require.Empty(t, startTask(t, srv.URL+MCPPath, "slow", fresh(i)))
		}
		for i := 2; i < 5; i++ {
			assert.Contains(t, startTask(t, srv.URL+MCPPath, "slow", fresh(i)), "too many running tasks for this client (the limit is 2)")
		}
		assert.Equal(t, int64(2), h.calls.TasksRunning())
	})
	t.Run("kept tasks", func(t *testing.T) {
		h, _ := newTestHost(t, taskApp(t, `"FUNCMCP_TASK_MAX_KEPT_PER_CLIENT":"3"`), newFakeWorker(t).srv.URL, nil)
		srv := httptest.NewServer(h.Handler())
		defer srv.Close()
		for i := range 3 {
			require.Empty(t, startTask(t, srv.URL+MCPPath, "get_weather", fresh(i)))
		}
		for i := 3; i < 5; i++ {
			assert.Contains(t, startTask(t, srv.URL+MCPPath, "get_weather", fresh(i)), "too many kept tasks for this client (the limit is 3)")
		}
	})
}

// TestTrustedProxiesNameTheClient: behind a front end named in
// FUNCMCP_TRUSTED_PROXIES, the client address of the per-client limits is
// the one X-Forwarded-For gives (the rightmost the front end did not write
// itself); unset, X-Forwarded-For is the client's own word and changes
// nothing.
func TestTrustedProxiesNameTheClient(t *testing.T) {
	xff := func(v string) map[string]string { return map[string]string{"X-Forwarded-For": v} }
	for _, trusted := range []bool{false, true} {
		values := ""
		if trusted {
			values = `"` + SettingTrustedProxies + `":"10.0.0.0/8, 127.0.0.1"`
		}
		h, _ := newTestHost(t, taskApp(t, values), newFakeWorker(t).srv.URL, &Options{MaxRunningTasksPerClient: 1})
		srv := httptest.NewServer(h.Handler())
		require.Empty(t, startTask(t, srv.URL+MCPPath, "slow", xff("198.51.100.1")))
		second := startTask(t, srv.URL+MCPPath, "slow", xff("198.51.100.2"))
		forged := startTask(t, srv.URL+MCPPath, "slow", xff("198.51.100.2, 198.51.100.1"))
		if trusted {
			assert.Empty(t, second, "another client behind the proxy")
			assert.Contains(t, forged, "too many running tasks for this client", "what the client wrote is not believed")
		} else {
			assert.Contains(t, second, "too many running tasks for this client", "X-Forwarded-For from anyone is not believed")
		}
		srv.Close()
	}
}

func TestTrustedProxiesBadSettingFailsNew(t *testing.T) {
	root := taskApp(t, `"`+SettingTrustedProxies+`":"10.0.0.0/8, proxy.internal"`)
	_, err := New(&Options{ScriptRoot: root, WorkerURL: "http://127.0.0.1:1", Logger: slog.New(slog.DiscardHandler), Output: io.Discard})
	require.Error(t, err)
	assert.Contains(t, err.Error(), SettingTrustedProxies)
	assert.Contains(t, err.Error(), `"proxy.internal" is neither an address nor a CIDR range`)
}

// forgedIdentity are identity headers a client sends itself, in every case.
var forgedIdentity = map[string]string{
	"x-ms-client-principal":       "eyJjbGFpbXMiOlt7InR5cCI6InNjcCIsInZhbCI6IkNsYWltcy5SZWFkIn1dfQ==",
	"X-MS-CLIENT-PRINCIPAL-ID":    "mallory",
	"X-Ms-Client-Principal-Name":  "mallory@example.com",
	"X-MS-CLIENT-PRINCIPAL-IDP":   "aad",
	"X-MS-CLIENT-PRINCIPAL-ROLES": "Admin",
	"X-MS-TOKEN-AAD-ACCESS-TOKEN": "forged",
}

// workerHeaders returns the transport headers of the last invocation of
// function the fake worker got.
func workerHeaders(t *testing.T, fw *fakeWorker, function string) map[string]string {
	t.Helper()
	var got *recorded
	for _, r := range fw.requests() {
		if r.Function == function {
			got = &r
		}
	}
	require.NotNil(t, got, "the worker got no %s", function)
	var req metadata.InvocationRequest
	require.NoError(t, json.Unmarshal(got.Body, &req))
	tc, err := metadata.ToolContextFromRequest(&req, metadata.TriggerBindingName)
	require.NoError(t, err)
	return tc.Transport.Properties.Headers.Map()
}

// TestClientIdentityHeadersNeverReachTheWorker (issue 39, finding 6):
// with no access tokens asked for, X-MS-CLIENT-PRINCIPAL… headers a client
// sent reached the tool, which then took mallory for an authenticated
// caller with scp=Claims.Read. funchost drops them always, on the
// Streamable HTTP and legacy SSE paths, as App Service does; only a
// verified token sets them.
func TestClientIdentityHeadersNeverReachTheWorker(t *testing.T) {
	op := testutil.StartOIDC(t)
	for _, tokens := range []bool{false, true} {
		fw := newFakeWorker(t)
		root := weatherApp(t, `{"version":"2.0"}`)
		token := ""
		if tokens {
			root = oauthApp(t, op, "")
			token = op.Token(t, testutil.Claims(op.URL, oauthAudience, "user-7", "user_impersonation", "Weather.Admin"))
		}
		_, base := serveTestHost(t, root, fw.srv.URL, nil)
		check := func(how string) {
			hs := workerHeaders(t, fw, "get_weather")
			for k := range hs {
				assert.False(t, strings.HasPrefix(k, "X-Ms-Token-"), "tokens %v, %s: %s reached the worker", tokens, how, k)
			}
			assert.NotContains(t, hs, "X-Ms-Client-Principal-Roles", "tokens %v, %s", tokens, how)
			if tokens {
				assert.Equal(t, "user-7", hs["X-Ms-Client-Principal-Id"], how)
				return
			}
			for k := range hs {
				assert.False(t, strings.HasPrefix(k, "X-Ms-Client-Principal"), "tokens off, %s: %s reached the worker", how, k)
			}
		}

		resp := bearerPost(t, base+MCPPath, token, callBody(1, "get_weather", `{"city":"Oslo"}`), forgedIdentity)
		body, _ := io.ReadAll(resp.Body)
		require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
		assert.False(t, callResult(t, sseData(body)).IsError, string(body))
		check("Streamable HTTP")

		hdr := http.Header{}
		for k, v := range forgedIdentity {
			hdr.Set(k, v)
		}
		if token != "" {
			hdr.Set("Authorization", "Bearer "+token)
		}
		st, err := testutil.OpenSSE(t.Context(), base+SSEPath, hdr)
		require.NoError(t, err)
		req, err := http.NewRequest(http.MethodPost, st.Endpoint, strings.NewReader(callBody(2, "get_weather", `{"city":"Bergen"}`)))
		require.NoError(t, err)
		req.Header = hdr.Clone()
		req.Header.Set("Content-Type", "application/json")
		r, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		_ = r.Body.Close()
		require.Equal(t, http.StatusAccepted, r.StatusCode)
		ev, err := st.Next(10 * time.Second)
		require.NoError(t, err)
		assert.Contains(t, ev.Data, "Bergen")
		st.Close()
		check("legacy SSE")
	}
}
