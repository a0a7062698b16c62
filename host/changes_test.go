package host

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/host/internal/notify"
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

			h.publish(notify.Change{Kind: notify.ResourceUpdated, URI: "note://other"})
			h.publish(notify.Change{Kind: notify.ResourceUpdated, URI: noteURI})
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
			h.publish(notify.Change{Kind: notify.ResourceUpdated, URI: noteURI})
			got := nextLine(t, sc, stderr)
			assert.JSONEq(t, `"`+noteURI+`"`, string(got["updated"]))
			require.NoError(t, cmd.Wait(), stderr.String())
		})
	}
}
