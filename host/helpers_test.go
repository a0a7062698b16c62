package host

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/metadata"

	"github.com/funcmcp/funcmcp/internal/testutil"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// weatherSchema is the output schema of the weather tools.
const weatherSchema = `{"type":"object","properties":{"city":{"type":"string"},"temp":{"type":"number"}},"required":["city","temp"]}`

var cityProperty = []metadata.ToolProperty{{PropertyName: "city", PropertyType: "string", Description: "The city.", IsRequired: true}}

// writeFile writes root/name, creating folders.
func writeFile(t testing.TB, root, name, text string) {
	t.Helper()
	p := filepath.Join(root, name)
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
}

// writeTool writes a function folder for one tool with the worker SDK's layout.
func writeTool(t testing.TB, root, function string, opts *metadata.ToolOptions) {
	t.Helper()
	fn, err := metadata.NewToolFunction(function, opts)
	require.NoError(t, err)
	require.NoError(t, metadata.WriteFunction(root, fn))
}

// weatherApp writes an app with the tools the fake worker knows:
// get_weather (valid output), bad_weather (output that breaks the schema) and
// the failure tools fail500, badjson, slow, crash, notjsonreturn.
func weatherApp(t testing.TB, hostJSON string) string {
	t.Helper()
	root := t.TempDir()
	writeFile(t, root, HostFile, hostJSON)
	writeTool(t, root, "get_weather", &metadata.ToolOptions{ToolName: "get_weather", Title: "Weather", Description: "Current weather in a city.", Properties: cityProperty, OutputSchema: weatherSchema})
	writeTool(t, root, "bad_weather", &metadata.ToolOptions{ToolName: "bad_weather", Description: "Weather with a wrong temperature type.", Properties: cityProperty, OutputSchema: weatherSchema})
	for _, name := range []string{"fail500", "badjson", "slow", "crash", "badenvelope"} {
		writeTool(t, root, name, &metadata.ToolOptions{ToolName: name, Description: "Fails: " + name, Properties: []metadata.ToolProperty{}})
	}
	return root
}

// fakeWorker is a custom handler served by httptest. It records requests.
type fakeWorker struct {
	srv *httptest.Server
	mu  sync.Mutex
	got []recorded
}

type recorded struct {
	Function string
	Header   http.Header
	Body     []byte
}

func envelopeReturn(structured string) json.RawMessage {
	env, _ := json.Marshal(metadata.ToolResult{Type: "text", Content: string(metadata.TextContent(structured)), StructuredContent: &structured})
	rv, _ := json.Marshal(string(env))
	return rv
}

func newFakeWorker(t testing.TB) *fakeWorker {
	t.Helper()
	fw := &fakeWorker{}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) {})
	mux.HandleFunc("POST /{function}", func(w http.ResponseWriter, r *http.Request) {
		fn := r.PathValue("function")
		body, _ := io.ReadAll(r.Body)
		fw.mu.Lock()
		fw.got = append(fw.got, recorded{fn, r.Header.Clone(), body})
		fw.mu.Unlock()
		reply := func(rv json.RawMessage) {
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(metadata.InvocationResponse{Outputs: map[string]json.RawMessage{}, Logs: []string{"handled " + fn}, ReturnValue: rv})
		}
		var req metadata.InvocationRequest
		if err := json.Unmarshal(body, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		tc, err := metadata.ToolContextFromRequest(&req, metadata.TriggerBindingName)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var city string
		_ = json.Unmarshal(tc.Arguments["city"], &city)
		switch fn {
		case "get_weather":
			reply(envelopeReturn(`{"city":` + string(mustJSON(city)) + `,"temp":21.5}`))
		case "bad_weather":
			reply(envelopeReturn(`{"city":` + string(mustJSON(city)) + `,"temp":"warm"}`))
		case "fail500":
			http.Error(w, "boom", http.StatusInternalServerError)
		case "badjson":
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, "this is not json")
		case "badenvelope":
			reply(json.RawMessage(`"{\"type\":\"text\",\"content\":\"not a block\"}"`))
		case "slow":
			select {
			case <-r.Context().Done():
			case <-time.After(10 * time.Second):
			}
		case "crash":
			hj, ok := w.(http.Hijacker)
			if !ok {
				panic("no hijacker")
			}
			conn, _, _ := hj.Hijack()
			_ = conn.Close()
		default:
			http.Error(w, `{"error":"unknown function"}`, http.StatusNotFound)
		}
	})
	fw.srv = httptest.NewServer(mux)
	t.Cleanup(fw.srv.Close)
	return fw
}

func (fw *fakeWorker) requests() []recorded {
	fw.mu.Lock()
	defer fw.mu.Unlock()
	return append([]recorded(nil), fw.got...)
}

func mustJSON(v any) json.RawMessage {
	data, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return data
}

// syncBuffer is a goroutine-safe buffer for process output and logs.
type syncBuffer = testutil.SyncBuffer

// testKey is the system key of the test hosts; rpc sends it.
const testKey = "test-system-key"

// newTestHost loads root against the worker at workerURL, logging into the
// returned buffer.
func newTestHost(t testing.TB, root, workerURL string, opts *Options) (*Host, *syncBuffer) {
	t.Helper()
	logs := &syncBuffer{}
	o := Options{}
	if opts != nil {
		o = *opts
	}
	o.ScriptRoot = root
	o.WorkerURL = workerURL
	anonymous := o.SystemKey == "" && o.MasterKey == ""
	if anonymous {
		o.SystemKey = testKey
	}
	o.Logger = slog.New(slog.NewTextHandler(logs, nil))
	if o.Output == nil {
		o.Output = io.Discard
	}
	h, err := New(&o)
	require.NoError(t, err)
	if anonymous {
		// Tests about other things need no key; TestFunctionKeys and
		// friends pass keys and get them checked.
		h.secrets.Keys = nil
	}
	t.Cleanup(func() { _ = h.Close() })
	return h, logs
}

// rpc posts one JSON-RPC message to the MCP endpoint and returns the HTTP
// status and the body. It must run on the test's goroutine; elsewhere use
// tryRPC.
func rpc(t testing.TB, url, version, body string) (int, []byte) {
	t.Helper()
	status, data, err := tryRPC(url, version, "", body)
	require.NoError(t, err)
	return status, data
}

// rpcTimeout bounds one request of tryRPC.
const rpcTimeout = time.Minute

// tryRPC is rpc for any goroutine: it reports failures instead of ending
// the test. session, when not "", is sent as Mcp-Session-Id.
func tryRPC(url, version, session, body string) (int, []byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), rpcTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+MCPPath, strings.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("X-Functions-Key", testKey)
	if version != "" {
		req.Header.Set("MCP-Protocol-Version", version)
	}
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, err
	}
	return resp.StatusCode, sseData(data), nil
}

// reply is what tryRPC returned, sent back from another goroutine.
type reply struct {
	status int
	body   []byte
	err    error
}

// goRPC runs tryRPC on its own goroutine; the reply arrives on the channel.
func goRPC(url, version, session, body string) <-chan reply {
	ch := make(chan reply, 1)
	go func() {
		status, data, err := tryRPC(url, version, session, body)
		ch <- reply{status, data, err}
	}()
	return ch
}

// await receives a reply within d, failing the test otherwise.
func await(t *testing.T, ch <-chan reply, d time.Duration, what string) reply {
	t.Helper()
	select {
	case r := <-ch:
		require.NoError(t, r.err, what)
		return r
	case <-time.After(d):
		t.Fatalf("%s: no reply within %v", what, d)
		return reply{}
	}
}

// getWithKey GETs url with the function key key.
func getWithKey(url, key string) (*http.Response, error) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("X-Functions-Key", key)
	return http.DefaultClient.Do(req)
}

// sseData returns the data of a single-event SSE body, or body unchanged.
func sseData(body []byte) []byte {
	if !bytes.HasPrefix(body, []byte("event:")) && !bytes.HasPrefix(body, []byte("data:")) {
		return body
	}
	var out []byte
	for _, line := range bytes.Split(body, []byte("\n")) {
		if rest, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			out = append(out, bytes.TrimSpace(rest)...)
		}
	}
	return out
}

// callResult decodes a tools/call reply's result.
func callResult(t testing.TB, body []byte) *metadata.CallToolResult {
	t.Helper()
	var reply struct {
		Result *metadata.CallToolResult `json:"result"`
		Error  json.RawMessage          `json:"error"`
	}
	require.NoError(t, json.Unmarshal(body, &reply), string(body))
	require.NotNil(t, reply.Result, "no result: %s", body)
	return reply.Result
}

func callBody(id int, name string, args string) string {
	if args == "" {
		return `{"jsonrpc":"2.0","id":` + string(mustJSON(id)) + `,"method":"tools/call","params":{"name":` + string(mustJSON(name)) + `}}`
	}
	return `{"jsonrpc":"2.0","id":` + string(mustJSON(id)) + `,"method":"tools/call","params":{"name":` + string(mustJSON(name)) + `,"arguments":` + args + `}}`
}

// goldenCompare compares got with testdata/name, rewriting it with -update.
func goldenCompare(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, got, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "missing golden file; run go test -update")
	assert.Equal(t, string(want), string(got))
}

func newLogger(w io.Writer) *slog.Logger { return slog.New(slog.NewTextHandler(w, nil)) }
