package host

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/host/internal/notify"
	"github.com/funcmcp/funcmcp/host/internal/owner"
	"github.com/funcmcp/funcmcp/internal/testutil"
	"github.com/funcmcp/funcmcp/metadata"
)

// noteURI is the resource of changesApp.
const noteURI = "note://today"

// changesApp is an app with a tool and a resource, served by a fake
// worker through a host on 127.0.0.1; the test publishes the changes.
func changesApp(t *testing.T, opts *Options) (*Host, *httptest.Server) {
	t.Helper()
	root := t.TempDir()
	writeFile(t, root, HostFile, `{"version":"2.0"}`)
	writeTool(t, root, "get_weather", &metadata.ToolOptions{ToolName: "get_weather", Description: "Weather.", Properties: cityProperty})
	res, err := metadata.NewResourceFunction("note", &metadata.ResourceOptions{URI: noteURI, Name: "note", MimeType: "text/plain"})
	require.NoError(t, err)
	require.NoError(t, metadata.WriteFunction(root, res))
	h, _ := newTestHost(t, root, newFakeWorker(t).srv.URL, opts)
	srv := httptest.NewServer(h.Handler())
	t.Cleanup(srv.Close)
	t.Cleanup(h.changes.EndListeners) // before the server closes: the streams end
	return h, srv
}

// waitListeners waits (bounded) until n listeners are open.
func waitListeners(t *testing.T, h *Host, n int) {
	t.Helper()
	require.Eventually(t, func() bool { return h.changes.Listeners() >= n }, 10*time.Second, 5*time.Millisecond,
		"the client's stream did not open")
}

// TestGoSDKHearsResourceUpdates: the official Go SDK client subscribes
// to a resource (resources/subscribe on 2025-11-25, over Streamable HTTP
// and over the legacy SSE transport; subscriptions/listen on 2026-07-28)
// and hears the change the host publishes.
func TestGoSDKHearsResourceUpdates(t *testing.T) {
	for _, tc := range []struct {
		name    string
		version string // "" negotiates (2026-07-28)
		sse     bool
	}{{"2026-07-28 listen", "", false}, {"2025-11-25 GET stream", "2025-11-25", false}, {"legacy SSE", "", true}} {
		t.Run(tc.name, func(t *testing.T) {
			h, srv := changesApp(t, nil)
			ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
			defer cancel()
			updated := make(chan string, 4)
			client := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "0"}, &sdk.ClientOptions{
				ResourceUpdatedHandler: func(_ context.Context, r *sdk.ResourceUpdatedNotificationRequest) { updated <- r.Params.URI },
			})
			var transport sdk.Transport = &sdk.StreamableClientTransport{Endpoint: srv.URL + MCPPath, MaxRetries: -1}
			if tc.sse {
				transport = &sdk.SSEClientTransport{Endpoint: srv.URL + SSEPath}
			}
			var opts *sdk.ClientSessionOptions
			if tc.version != "" {
				opts = &sdk.ClientSessionOptions{ProtocolVersion: tc.version}
			}
			cs, err := client.Connect(ctx, transport, opts)
			require.NoError(t, err)
			defer cs.Close()
			caps := cs.InitializeResult().Capabilities
			require.NotNil(t, caps.Resources)
			assert.True(t, caps.Resources.Subscribe, "subscribe is advertised")
			assert.True(t, caps.Resources.ListChanged)
			require.NoError(t, cs.Subscribe(ctx, &sdk.SubscribeParams{URI: noteURI}))
			waitListeners(t, h, 1)

			h.changes.Publish(notify.Change{Kind: notify.ResourceUpdated, URI: "note://other"})
			h.changes.Publish(notify.Change{Kind: notify.ResourceUpdated, URI: noteURI})
			select {
			case uri := <-updated:
				assert.Equal(t, noteURI, uri, "only the resource subscribed to")
			case <-ctx.Done():
				t.Fatal("no notifications/resources/updated arrived")
			}
		})
	}
}

// runListener starts tests/node/ts-listen.mjs and returns a reader of its
// lines.
func runListener(t *testing.T, pkg string, args ...string) (*bufio.Scanner, *exec.Cmd, *strings.Builder) {
	t.Helper()
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	node, dir := testutil.RequireNodePackages(t, root, pkg)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, node, append([]string{"ts-listen.mjs"}, args...)...)
	cmd.Dir = dir
	cmd.WaitDelay = 5 * time.Second
	stderr := &strings.Builder{}
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Wait() })
	return bufio.NewScanner(out), cmd, stderr
}

// nextLine reads one JSON line of the script.
func nextLine(t *testing.T, sc *bufio.Scanner, stderr *strings.Builder) map[string]json.RawMessage {
	t.Helper()
	require.True(t, sc.Scan(), "the client ended early; stderr:\n%s", stderr)
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(sc.Bytes(), &m), sc.Text())
	require.NotContains(t, m, "error", sc.Text())
	return m
}

// TestTypeScriptClientsHearResourceUpdates: the official TypeScript
// clients (SDK 1.x at 2025-11-25 over Streamable HTTP and legacy SSE,
// client 2.x at 2026-07-28 with subscriptions/listen) subscribe to a
// resource and hear the change the host publishes.
func TestTypeScriptClientsHearResourceUpdates(t *testing.T) {
	for _, tc := range []struct{ mode, pkg, path string }{
		{"legacy", "@modelcontextprotocol/sdk", MCPPath},
		{"legacy-sse", "@modelcontextprotocol/sdk", SSEPath},
		{"listen", "@modelcontextprotocol/client", MCPPath},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			h, srv := changesApp(t, nil)
			sc, cmd, stderr := runListener(t, tc.pkg, tc.mode, srv.URL+tc.path, noteURI)
			ready := nextLine(t, sc, stderr)
			require.Contains(t, ready, "ready")
			t.Logf("%s: %s", tc.mode, ready["ready"])
			waitListeners(t, h, 1)
			h.changes.Publish(notify.Change{Kind: notify.ResourceUpdated, URI: noteURI})
			got := nextLine(t, sc, stderr)
			assert.JSONEq(t, `"`+noteURI+`"`, string(got["updated"]))
			require.NoError(t, cmd.Wait(), stderr.String())
		})
	}
}

// rss reads this process's resident memory from /proc (bytes; 0 when it
// cannot).
func rss() int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// TestSlowAndVanishedListenersAreEnded: listeners whose clients stop
// reading (real TCP connections that never read) fall behind and are
// ended, their queues dropped and their places given back; listeners
// whose clients vanished (the connection reset) end at the next write.
// Afterwards no listener, goroutine or queued change is left. The memory
// figures (RSS from /proc) are logged for the report.
func TestSlowAndVanishedListenersAreEnded(t *testing.T) {
	const slow, vanished = 40, 20
	limits := notify.Limits{Listeners: owner.Limit{PerOwner: 1000, Global: 1000}, Queue: 16}
	h, srv := changesApp(t, &Options{listenLimits: &limits, listenWriteTimeout: time.Second, listenKeepAlive: time.Hour})
	uri := "note://" + strings.Repeat("x", 4000) // 4 KB a notification: socket buffers fill sooner
	body := `{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"notifications":{"resourceSubscriptions":["` + uri + `"]},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	addr := strings.TrimPrefix(srv.URL, "http://")
	goroutines := runtime.NumGoroutine()
	heap0, rss0 := heapInUse(), rss()
	var conns []*net.TCPConn
	for i := range slow + vanished {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		tc := c.(*net.TCPConn)
		require.NoError(t, tc.SetReadBuffer(4096)) // a client that reads nothing, with a small window
		conns = append(conns, tc)
		t.Cleanup(func() { _ = c.Close() })
		_, err = fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"+
			"MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: subscriptions/listen\r\nContent-Length: %d\r\n\r\n%s", MCPPath, addr, len(body), body)
		require.NoError(t, err)
		_ = i
	}
	// Clients that read everything, to pace the changes: they keep up.
	const fast = 4
	var heard [fast]atomic.Int64
	var readers []net.Conn
	for i := range fast {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		readers = append(readers, c)
		t.Cleanup(func() { _ = c.Close() })
		_, err = fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"+
			"MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: subscriptions/listen\r\nContent-Length: %d\r\n\r\n%s", MCPPath, addr, len(body), body)
		require.NoError(t, err)
		go func() {
			sc := bufio.NewScanner(c)
			sc.Buffer(make([]byte, 64<<10), 64<<10)
			for sc.Scan() {
				if strings.HasPrefix(sc.Text(), "data: ") {
					heard[i].Add(1)
				}
			}
		}()
	}
	waitListeners(t, h, slow+vanished+fast)
	rssOpen := rss()
	for _, c := range conns[slow:] {
		_ = c.SetLinger(0) // vanish: the connection is reset
		_ = c.Close()
	}
	published := 0
	for h.changes.Listeners() > fast && published < 20000 {
		h.changes.Publish(notify.Change{Kind: notify.ResourceUpdated, URI: uri})
		published++
		deadline := time.Now().Add(10 * time.Second)
		for i := range fast {
			for heard[i].Load() < int64(published)+1 { // the acknowledgement, then each change
				require.True(t, time.Now().Before(deadline), "a reading client fell behind")
				time.Sleep(time.Millisecond)
			}
		}
	}
	require.Equal(t, fast, h.changes.Listeners(), "after %d changes every listener that does not read fell behind or lost its client", published)
	assert.Equal(t, int64(fast), h.changes.Counted(), "their places are given back")
	rssPeak := rss()
	for _, c := range conns[:slow] {
		_ = c.Close()
	}
	h.changes.EndListeners() // the reading clients' streams end too
	for _, c := range readers {
		_ = c.Close()
	}
	// The streams' goroutines end (a writer blocked on a full socket at
	// its write deadline at the latest).
	require.Eventually(t, func() bool { return runtime.NumGoroutine() <= goroutines+5 }, 20*time.Second, 20*time.Millisecond,
		"the streams' goroutines end (%d now, %d before)", runtime.NumGoroutine(), goroutines)
	heap1 := heapInUse()
	debug.FreeOSMemory()
	t.Logf("%d slow and %d vanished listeners (and %d reading), %d changes of 4 KB published until all had ended: heap in use %d KB before, %d KB after; "+
		"RSS %d KB before, %d KB with the listeners open, %d KB at the end of publishing, %d KB after",
		slow, vanished, fast, published, heap0>>10, heap1>>10, rss0>>10, rssOpen>>10, rssPeak>>10, rss()>>10)
	assert.Less(t, heap1, heap0+8<<20, "no queued change is left behind")
}

// TestSubscribedSessionsSetting: FUNCMCP_SUBSCRIBED_SESSIONS_PER_CLIENT,
// which the refusal names, sets the bound on one client's legacy sessions
// with resource subscriptions; a value that is not a positive whole
// number stops the host at start, naming the setting.
func TestSubscribedSessionsSetting(t *testing.T) {
	t.Setenv(SettingSubscribedSessionsPerClient, "1")
	_, srv := changesApp(t, nil)
	const initialize = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`
	subscribe := `{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":"` + noteURI + `"}}`
	first, second := initSession(t, srv.URL, initialize), initSession(t, srv.URL, initialize)
	_, body := rpcSession(t, srv.URL, first, subscribe)
	assert.JSONEq(t, `{"jsonrpc":"2.0","id":1,"result":{}}`, string(body))
	_, body = rpcSession(t, srv.URL, second, subscribe)
	assert.Contains(t, string(body), "(the limit is 1); "+SettingSubscribedSessionsPerClient+" changes it")

	t.Setenv(SettingSubscribedSessionsPerClient, "many")
	root := weatherApp(t, `{"version":"2.0","customHandler":{"description":{"defaultExecutablePath":"handler"}}}`)
	_, err := New(&Options{ScriptRoot: root, Output: io.Discard})
	require.Error(t, err)
	assert.Contains(t, err.Error(), SettingSubscribedSessionsPerClient)
}
