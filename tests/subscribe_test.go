package tests

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// noteURI is the sample's resource that pin_note changes.
const noteURI = "note://pinned"

// streamWatch is an http.RoundTripper that closes opened when a GET is
// answered 200: funchost registers a session's stream before it answers,
// so from then on a change reaches it.
type streamWatch struct {
	opened chan struct{}
	once   sync.Once
}

func (w *streamWatch) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err == nil && r.Method == http.MethodGet && resp.StatusCode == http.StatusOK {
		w.once.Do(func() { close(w.opened) })
	}
	return resp, err
}

// subscribeGoSDK connects the Go SDK client at protocolVersion ("" is
// 2026-07-28) and subscribes to uri: a subscriptions/listen stream on
// 2026-07-28, resources/subscribe and the session's GET stream before. It
// returns once a change would reach the client, and a channel of the URIs
// of the notifications/resources/updated it receives.
func subscribeGoSDK(t *testing.T, endpoint, protocolVersion, uri string) <-chan string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), clientTimeout)
	defer cancel()
	updated := make(chan string, 16)
	client := mcp.NewClient(&mcp.Implementation{Name: "funcmcp-e2e-go-listener", Version: "1.0.0"}, &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) {
			select {
			case updated <- r.Params.URI:
			default:
			}
		},
	})
	watch := &streamWatch{opened: make(chan struct{})}
	legacy := protocolVersion != ""
	var opts *mcp.ClientSessionOptions
	if legacy {
		opts = &mcp.ClientSessionOptions{ProtocolVersion: protocolVersion}
	}
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint:             endpoint,
		HTTPClient:           &http.Client{Transport: watch},
		DisableStandaloneSSE: !legacy,
		MaxRetries:           -1,
	}, opts)
	require.NoError(t, err, "connecting to %s", endpoint)
	t.Cleanup(func() { _ = cs.Close() })
	require.Equal(t, cmpOr(protocolVersion, "2026-07-28"), cs.InitializeResult().ProtocolVersion)
	caps := cs.InitializeResult().Capabilities
	require.NotNil(t, caps.Resources)
	assert.True(t, caps.Resources.Subscribe, "resources.subscribe is advertised")
	// On 2026-07-28 Subscribe returns once the subscriptions/listen POST
	// is answered (its headers: funchost registers the listener before);
	// before, once resources/subscribe was answered, and the session's
	// GET stream, which the SDK opens on its own, is then awaited.
	require.NoError(t, cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}))
	if legacy {
		select {
		case <-watch.opened:
		case <-ctx.Done():
			t.Fatalf("the session's GET stream did not open within %s", clientTimeout)
		}
	}
	return updated
}

// pinNote calls the sample's pin_note, checks it was announced and
// returns what it says of the delivery.
func pinNote(t *testing.T, cs *mcp.ClientSession, text string) (delivery string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), clientTimeout)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "pin_note", Arguments: map[string]any{"text": text}})
	require.NoError(t, err)
	require.False(t, res.IsError, "%+v", res.Content)
	data, err := json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	var note struct {
		Announced bool   `json:"announced"`
		Delivery  string `json:"delivery"`
	}
	require.NoError(t, json.Unmarshal(data, &note))
	require.True(t, note.Announced, "funchost took the change: %s", data)
	return note.Delivery
}

// awaitUpdate waits for the notification of uri on updated.
func awaitUpdate(t *testing.T, updated <-chan string, uri string, h ...*host) {
	t.Helper()
	select {
	case got := <-updated:
		assert.Equal(t, uri, got)
	case <-time.After(clientTimeout):
		var consoles []string
		for _, x := range h {
			consoles = append(consoles, x.console.String())
		}
		t.Fatalf("no notifications/resources/updated for %s within %s\nconsoles:\n%s", uri, clientTimeout, strings.Join(consoles, "\n----\n"))
	}
}

// nodeListener is ts-listen.mjs running in the background.
type nodeListener struct {
	lines  chan string
	exited chan struct{}
	code   int
	stderr syncBuffer // written by the process while the test reads it
}

// startNodeListener starts node ts-listen.mjs with args and returns once
// it printed its ready line.
func startNodeListener(t *testing.T, pkg string, args ...string) *nodeListener {
	t.Helper()
	node, dir := nodeBin(t, pkg)
	ctx, cancel := context.WithTimeout(t.Context(), clientTimeout)
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, node, append([]string{"ts-listen.mjs"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NO_COLOR=1", "FORCE_COLOR=0")
	cmd.WaitDelay = stopTimeout
	n := &nodeListener{lines: make(chan string, 16), exited: make(chan struct{})}
	cmd.Stderr = &n.stderr
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			n.lines <- sc.Text()
		}
		close(n.lines)
	}()
	t.Cleanup(func() {
		cancel()
		<-n.exited
	})
	go func() {
		err := cmd.Wait()
		if err != nil {
			n.code = -1
			if ee, ok := err.(*exec.ExitError); ok {
				n.code = ee.ExitCode()
			}
		}
		close(n.exited)
	}()
	return n
}

// next reads the listener's next line, failing on its end or a timeout.
func (n *nodeListener) next(t *testing.T) map[string]json.RawMessage {
	t.Helper()
	select {
	case line, ok := <-n.lines:
		require.True(t, ok, "ts-listen.mjs ended early; stderr:\n%s", n.stderr.String())
		var m map[string]json.RawMessage
		require.NoError(t, json.Unmarshal([]byte(line), &m), line)
		require.NotContains(t, m, "error", line)
		return m
	case <-time.After(clientTimeout):
		t.Fatalf("ts-listen.mjs said nothing within %s", clientTimeout)
		return nil
	}
}

// TestSampleNoteReachesSubscribedClients: the official clients subscribe
// to the sample's note://pinned on one funchost, each the way its revision
// has (the Go SDK at 2026-07-28 with subscriptions/listen and at 2025-11-25
// with resources/subscribe and the session's GET stream; the TypeScript SDK
// 1.x with resources/subscribe over Streamable HTTP and over legacy SSE;
// client 2.4 with subscriptions/listen); another client calls pin_note,
// and each hears the update.
func TestSampleNoteReachesSubscribedClients(t *testing.T) {
	t.Parallel()
	h := startHost(t, sample(t))
	caller := connectGoSDK(t, h.endpoint, "2025-11-25")

	for _, version := range []string{"", "2025-11-25"} {
		t.Run("go sdk "+cmpOr(version, "2026-07-28"), func(t *testing.T) {
			updated := subscribeGoSDK(t, h.endpoint, version, noteURI)
			pinNote(t, caller, "Go "+cmpOr(version, "listen"))
			awaitUpdate(t, updated, noteURI, h)
		})
	}
	for _, c := range []struct{ name, pkg, mode, url, version string }{
		{"typescript 1.x 2025-11-25", tsClientPackages[tsClientV1], "legacy", h.endpoint, "2025-11-25"},
		{"typescript 1.x legacy SSE", tsClientPackages[tsClientV1], "legacy-sse", h.endpoint + "/sse", ""},
		{"typescript 2.4 2026-07-28", tsClientPackages[tsClientV2Auto], "listen", h.endpoint, "2026-07-28"},
	} {
		t.Run(c.name, func(t *testing.T) {
			n := startNodeListener(t, c.pkg, c.mode, c.url, noteURI)
			ready := n.next(t)
			var r struct {
				ProtocolVersion *string `json:"protocolVersion"`
			}
			require.NoError(t, json.Unmarshal(ready["ready"], &r), "%s", ready)
			if c.version != "" { // the SSE transport does not say
				require.NotNil(t, r.ProtocolVersion, "%s", ready)
				assert.Equal(t, c.version, *r.ProtocolVersion)
			}
			pinNote(t, caller, "TypeScript "+c.mode)
			got := n.next(t)
			assert.JSONEq(t, `"`+noteURI+`"`, string(got["updated"]))
			<-n.exited
			assert.Zero(t, n.code, "stderr:\n%s", n.stderr.String())
		})
	}
}

// TestMultiInstanceNoteReachesListenersOnAnotherInstance: two funchost
// instances over the sample share a backplane (each kind); Go SDK clients
// subscribe to note://pinned on instance A (a subscriptions/listen stream
// at 2026-07-28, resources/subscribe and the GET stream at 2025-11-25),
// pin_note is called on instance B, and the update reaches both through
// the backplane's relay.
func TestMultiInstanceNoteReachesListenersOnAnotherInstance(t *testing.T) {
	for _, kind := range backplanes {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			f := startFleet(t, kind)
			app := sample(t)
			a, b := startHostEnv(t, app, f.env), startHostEnv(t, app, f.env)
			listen := subscribeGoSDK(t, a.endpoint, "", noteURI)
			session := subscribeGoSDK(t, a.endpoint, "2025-11-25", noteURI)
			assert.Equal(t, "sent", pinNote(t, connectGoSDK(t, b.endpoint, "2025-11-25"), "Pinned on B"),
				"the backplane took the change for the other instance")
			awaitUpdate(t, listen, noteURI, a, b)
			awaitUpdate(t, session, noteURI, a, b)
		})
	}
}
