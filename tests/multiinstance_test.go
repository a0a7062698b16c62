package tests

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/internal/testutil"
)

// sharedSessionKey is the WEBSITE_AUTH_ENCRYPTION_KEY both instances use,
// so that each opens the other's tokens.
const sharedSessionKey = "7f3a9c1e5b2d4f6a8c0e1b3d5f7a9c2e4b6d8f0a1c3e5b7d9f2a4c6e8b0d1f3a"

// queueHostsEnv is the environment of instances sharing Azurite's queues.
func queueHostsEnv(az *testutil.Azurite) []string {
	return []string{
		"FUNCMCP_BACKPLANE=azurequeues",
		"AzureWebJobsStorage=" + az.ConnectionString(),
		"WEBSITE_AUTH_ENCRYPTION_KEY=" + sharedSessionKey,
	}
}

var postClient = &http.Client{Timeout: 30 * time.Second}

// postTo POSTs a JSON-RPC message; a transport error (the instance is gone)
// is returned as err.
func postTo(ctx context.Context, url, body string) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := postClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), nil
}

// sseClient is one legacy SSE client: its stream on one instance, its POSTs
// to another.
type sseClient struct {
	n      int
	stream *testutil.SSEStream
	post   string // the message URL on the instance receiving the POSTs
}

func callMessage(client, id int) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"mortgage_payment","arguments":{"principal":%d,"annual_rate_percent":5,"years":10}}}`,
		id, 1000*(client+1)+id)
}

// expectReply reads the next event and checks it is the reply to request
// id of client c.
func (c *sseClient) expectReply(id int) error {
	ev, err := c.stream.Next(60 * time.Second)
	if err != nil {
		return fmt.Errorf("client %d, reply %d: %w", c.n, id, err)
	}
	var reply struct {
		ID     int `json:"id"`
		Result struct {
			IsError           bool           `json:"isError"`
			StructuredContent map[string]any `json:"structuredContent"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(ev.Data), &reply); err != nil {
		return fmt.Errorf("client %d: reply %q: %w", c.n, ev.Data, err)
	}
	if reply.ID != id {
		return fmt.Errorf("client %d: got the reply to %d, want %d (out of order or twice): %s", c.n, reply.ID, id, ev.Data)
	}
	if reply.Result.IsError || reply.Result.StructuredContent["months"] != float64(120) {
		return fmt.Errorf("client %d: reply %d is not the tool's result: %s", c.n, id, ev.Data)
	}
	return nil
}

// noMoreEvents checks that nothing but keep-alives arrives for a while.
func (c *sseClient) noMoreEvents(d time.Duration) error {
	if ev, err := c.stream.Next(d); err == nil {
		return fmt.Errorf("client %d: an extra event after the last reply: %s %s", c.n, ev.Name, ev.Data)
	}
	return nil
}

// runClients runs f for every client at once and returns their errors.
func runClients(clients []*sseClient, f func(c *sseClient) error) error {
	var wg sync.WaitGroup
	errs := make([]error, len(clients))
	for i, c := range clients {
		wg.Go(func() { errs[i] = f(c) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// TestMultiInstanceLegacySSE runs two funchost instances over one app,
// sharing work through Azurite's queues: legacy SSE streams on one instance
// and their POSTs on the other, in both directions, many clients at once.
// Every reply must arrive exactly once and in order. Then the instance
// receiving the POSTs of the first group is killed mid-run: its clients move
// their POSTs to the survivor (as a load balancer would), and nothing is
// lost for them.
func TestMultiInstanceLegacySSE(t *testing.T) {
	az := testutil.StartAzurite(t, repoRoot(t))
	app := sample(t)
	env := queueHostsEnv(az)
	a := startHostEnv(t, app, env)
	b := startHostEnv(t, app, env)
	ctx := t.Context()

	const perGroup = 12
	const burst = 8
	var groupA, groupB []*sseClient // streams on A (POSTs to B), streams on B (POSTs to A)
	for i := range 2 * perGroup {
		streamOn, postOn := a, b
		if i >= perGroup {
			streamOn, postOn = b, a
		}
		st, err := testutil.OpenSSE(ctx, streamOn.base+endpointPath+"/sse", nil)
		require.NoError(t, err)
		t.Cleanup(st.Close)
		c := &sseClient{n: i, stream: st, post: testutil.OnHost(st.Endpoint, postOn.base)}
		if i < perGroup {
			groupA = append(groupA, c)
		} else {
			groupB = append(groupB, c)
		}
	}
	all := append(append([]*sseClient{}, groupA...), groupB...)

	// Phase 1: each client initializes, then sends a burst of calls without
	// waiting, then reads the replies.
	err := runClients(all, func(c *sseClient) error {
		code, body, err := postTo(ctx, c.post, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}`)
		if err != nil || code != http.StatusAccepted {
			return fmt.Errorf("client %d: initialize: %d %s %v", c.n, code, body, err)
		}
		ev, err := c.stream.Next(60 * time.Second)
		if err != nil || !strings.Contains(ev.Data, `"id":0,`) {
			return fmt.Errorf("client %d: initialize reply %q: %v", c.n, ev.Data, err)
		}
		if code, body, err := postTo(ctx, c.post, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); err != nil || code != http.StatusAccepted {
			return fmt.Errorf("client %d: initialized: %d %s %v", c.n, code, body, err)
		}
		for id := 1; id <= burst; id++ {
			if code, body, err := postTo(ctx, c.post, callMessage(c.n, id)); err != nil || code != http.StatusAccepted {
				return fmt.Errorf("client %d: POST %d: %d %s %v", c.n, id, code, body, err)
			}
		}
		for id := 1; id <= burst; id++ {
			if err := c.expectReply(id); err != nil {
				return err
			}
		}
		return c.noMoreEvents(time.Second)
	})
	require.NoError(t, err, "phase 1\nhost A:\n%s\nhost B:\n%s", a.console.String(), b.console.String())

	// Phase 2: the clients streaming from A keep calling, one call at a time,
	// POSTing to B; B is killed once every client made a few calls. A POST
	// that fails goes to A instead (sent again: A runs a request once).
	const calls = 12
	const killAfter = 3
	var made, inFlight, inFlightAtKill atomic.Int32 // inFlight: accepted by B, reply not yet read
	killed := make(chan struct{})
	go func() {
		defer close(killed)
		deadline := time.Now().Add(2 * time.Minute)
		for made.Load() < perGroup*killAfter && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		inFlightAtKill.Store(inFlight.Load())
		b.kill(t)
	}()
	var movedPosts atomic.Int32
	err = runClients(groupA, func(c *sseClient) error {
		target := c.post
		for i := 1; i <= calls; i++ {
			id := burst + i
			code, body, err := postTo(ctx, target, callMessage(c.n, id))
			if err != nil && target == c.post {
				movedPosts.Add(1)
				target = testutil.OnHost(c.post, a.base)
				code, body, err = postTo(ctx, target, callMessage(c.n, id))
			}
			if err != nil || code != http.StatusAccepted {
				return fmt.Errorf("client %d: POST %d: %d %s %v", c.n, id, code, body, err)
			}
			viaB := target == c.post
			if viaB {
				inFlight.Add(1)
			}
			err = c.expectReply(id)
			if viaB {
				inFlight.Add(-1)
			}
			if err != nil {
				return err
			}
			made.Add(1)
		}
		return c.noMoreEvents(2 * time.Second)
	})
	<-killed
	require.NoError(t, err, "phase 2\nhost A:\n%s\nhost B:\n%s", a.console.String(), b.console.String())
	assert.Positive(t, movedPosts.Load(), "B was killed while its clients still posted")
	t.Logf("B killed with %d messages accepted and not yet answered; %d clients moved their POSTs to A", inFlightAtKill.Load(), movedPosts.Load())

	// The streams held by the killed instance ended.
	for _, c := range groupB {
		_, err := c.stream.Next(10 * time.Second)
		assert.Error(t, err, "client %d's stream on the killed instance", c.n)
	}
}

// TestMultiInstanceStreamableHTTP: Streamable HTTP needs no backplane; a
// session begun on one instance goes on on the other, which opens the
// shared-key token.
func TestMultiInstanceStreamableHTTP(t *testing.T) {
	az := testutil.StartAzurite(t, repoRoot(t))
	app := sample(t)
	a := startHostEnv(t, app, queueHostsEnv(az))
	b := startHostEnv(t, app, queueHostsEnv(az))
	ctx := t.Context()

	post := func(endpoint, session, body string) (*http.Response, string) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		resp, err := postClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		return resp, string(data)
	}
	resp, body := post(a.endpoint, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}`)
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	session := resp.Header.Get("Mcp-Session-Id")
	require.NotEmpty(t, session)

	resp, body = post(b.endpoint, session, callMessage(0, 2))
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	assert.Contains(t, body, `"months":120`)
	resp, body = post(b.endpoint, session+"x", callMessage(0, 3))
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "a changed token: %s", body)
}

// TestInspectorCLILegacySSE lists and calls tools with the MCP Inspector
// CLI over the legacy SSE transport (TypeScript SDK SSEClientTransport).
func TestInspectorCLILegacySSE(t *testing.T) {
	t.Parallel()
	node, dir := nodeBin(t, "@modelcontextprotocol/inspector-cli")
	app := sample(t)
	h := startHost(t, app)
	sseURL := h.endpoint + "/sse"
	build := filepath.Join(dir, filepath.FromSlash(inspectorBuild))

	code, stdout, stderr := runNode(t, node, build, "index.js", sseURL, "--transport", "sse", "--method", "tools/list")
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	var listed struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	require.NoError(t, json.Unmarshal([]byte(jsonPart(stdout)), &listed), stdout)
	assert.Len(t, listed.Tools, len(sampleTools))

	st := sampleTools[0]
	args := []string{"index.js", sseURL, "--transport", "sse", "--method", "tools/call", "--tool-name", st.name}
	for _, a := range st.inspectorArgs {
		args = append(args, "--tool-arg", a)
	}
	code, stdout, stderr = runNode(t, node, build, args...)
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	checkSampleResult(t, st, readOutputSchemas(t, app)[st.name], json.RawMessage(jsonPart(stdout)))
}
