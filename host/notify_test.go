package host

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/metadata"
)

// notifyWorker is a custom handler whose one function, "work", runs a
// scripted use of the notification channel the host offers it, then answers
// "done". The script runs on the worker's goroutine: it reports problems
// with t.Errorf (assert), never by ending the test.
type notifyWorker struct {
	srv    *httptest.Server
	mu     sync.Mutex
	header http.Header // the last invocation's request headers
	script func(t testing.TB, offer http.Header)
}

func newNotifyWorker(t testing.TB) *notifyWorker {
	t.Helper()
	nw := &notifyWorker{}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(http.ResponseWriter, *http.Request) {})
	mux.HandleFunc("POST /work", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		nw.mu.Lock()
		nw.header = r.Header.Clone()
		script := nw.script
		nw.mu.Unlock()
		if script != nil {
			script(t, r.Header)
		}
		rv, _ := json.Marshal(`{"type":"text","content":"{\"type\":\"text\",\"text\":\"done\"}"}`)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(metadata.InvocationResponse{Outputs: map[string]json.RawMessage{}, Logs: []string{}, ReturnValue: rv})
	})
	nw.srv = httptest.NewServer(mux)
	t.Cleanup(nw.srv.Close)
	return nw
}

func (nw *notifyWorker) lastHeader() http.Header {
	nw.mu.Lock()
	defer nw.mu.Unlock()
	return nw.header
}

// notifyHost serves an app with the tool "work" against a notifyWorker.
func notifyHost(t testing.TB) (*Host, *httptest.Server, *notifyWorker) {
	t.Helper()
	root := t.TempDir()
	writeFile(t, root, HostFile, `{"version":"2.0"}`)
	writeTool(t, root, "work", &metadata.ToolOptions{ToolName: "work", Description: "Works a while.", Properties: []metadata.ToolProperty{}})
	nw := newNotifyWorker(t)
	h, _ := newTestHost(t, root, nw.srv.URL, nil)
	srv := httptest.NewServer(h.Handler())
	t.Cleanup(srv.Close)
	return h, srv, nw
}

// postNotification sends one notification the way the worker SDK does and
// returns the status (0 when the request failed, reported with t.Errorf:
// it runs on the worker's goroutine).
func postNotification(t testing.TB, target, token, body string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, strings.NewReader(body))
	if !assert.NoError(t, err) {
		return 0
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if !assert.NoError(t, err, "posting a notification") {
		return 0
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return resp.StatusCode
}

// callStream posts a tools/call of "work" with _meta and returns the data of
// every SSE event of the reply.
func callStream(t testing.TB, srv *httptest.Server, meta string, headers map[string]string) []string {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"work","arguments":{}` + meta + `}}`
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+MCPPath, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(raw))
	var events []string
	for _, ev := range strings.Split(strings.TrimSuffix(string(raw), "\n\n"), "\n\n") {
		if strings.HasPrefix(ev, "id: ") {
			if strings.HasSuffix(ev, "\ndata: ") {
				continue // the priming event of a resumable stream
			}
			_, ev, _ = strings.Cut(ev, "\n")
		}
		data, ok := strings.CutPrefix(ev, "event: message\ndata: ")
		require.True(t, ok, "event %q", ev)
		events = append(events, data)
	}
	return events
}

func TestWorkerProgressReachesTheClientBeforeTheResult(t *testing.T) {
	_, srv, nw := notifyHost(t)
	statuses := make(chan []int, 1)
	nw.script = func(t testing.TB, offer http.Header) {
		target, token := offer.Get(metadata.HeaderNotifyURL), offer.Get(metadata.HeaderNotifyToken)
		statuses <- []int{
			postNotification(t, target, token, `{"type":"progress","progress":1,"total":2,"message":"half"}`),
			postNotification(t, target, token, `{"type":"log","level":"info","data":"not asked for"}`),
			postNotification(t, target, token, `{"type":"progress","progress":2,"total":2}`)}
	}
	events := callStream(t, srv, `,"_meta":{"progressToken":"p-9"}`, nil)
	require.Len(t, events, 3)
	assert.JSONEq(t, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p-9","progress":1,"total":2,"message":"half"}}`, events[0])
	assert.JSONEq(t, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p-9","progress":2,"total":2}}`, events[1])
	assert.JSONEq(t, `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"done"}]}}`, events[2])
	assert.Equal(t, []int{http.StatusNoContent, http.StatusNoContent, http.StatusNoContent}, <-statuses, "a filtered log is accepted and dropped")

	offer := nw.lastHeader()
	u, err := url.Parse(offer.Get(metadata.HeaderNotifyURL))
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.1", u.Hostname(), "the channel listens on loopback only")
	assert.Len(t, offer.Get(metadata.HeaderNotifyToken), 43, "32 random bytes, base64url")
	assert.Equal(t, "true", offer.Get(metadata.HeaderNotifyProgress))
	assert.Empty(t, offer.Get(metadata.HeaderNotifyLogLevel), "the client set no log level")
}

func TestWorkerLogsFollowTheSessionLevel(t *testing.T) {
	_, srv, nw := notifyHost(t)
	nw.script = func(t testing.TB, offer http.Header) {
		target, token := offer.Get(metadata.HeaderNotifyURL), offer.Get(metadata.HeaderNotifyToken)
		if target == "" {
			return
		}
		postNotification(t, target, token, `{"type":"log","level":"debug","logger":"work","data":"too low"}`)
		postNotification(t, target, token, `{"type":"log","level":"warning","logger":"work","data":{"disk":"low"}}`)
	}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+MCPPath, strings.NewReader(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_ = resp.Body.Close()
	session := map[string]string{"Mcp-Session-Id": resp.Header.Get("Mcp-Session-Id")}
	require.NotEmpty(t, session["Mcp-Session-Id"])

	events := callStream(t, srv, "", session)
	require.Len(t, events, 1, "no level set: no log")
	assert.Empty(t, nw.lastHeader().Get(metadata.HeaderNotifyLogLevel), "no log wanted")

	req, err = http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+MCPPath, strings.NewReader(`{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"info"}}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Mcp-Session-Id", session["Mcp-Session-Id"])
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)

	events = callStream(t, srv, "", session)
	require.Len(t, events, 2)
	assert.JSONEq(t, `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"warning","logger":"work","data":{"disk":"low"}}}`, events[0])
	assert.Equal(t, "info", nw.lastHeader().Get(metadata.HeaderNotifyLogLevel))
	assert.Empty(t, nw.lastHeader().Get(metadata.HeaderNotifyProgress))
}
