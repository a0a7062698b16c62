package tests

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue/v2"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue/v2/queueerror"
	"github.com/redis/go-redis/v9"
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

// testHeartbeat is the instances' heartbeat in these tests: an instance
// silent for three of them is dead, and its queue is removed after ten.
const testHeartbeat = 300 * time.Millisecond

// fleet is a backplane the tests start, with what its instances need.
type fleet struct {
	kind string
	env  []string
	// gone reports whether the queue (or list) of an instance is gone.
	gone func(t *testing.T, instanceID string) bool
	// empty makes the storage lose everything: Azurite restarted empty,
	// or the Redis server's data flushed (as a restart without
	// persistence).
	empty func(t *testing.T)
}

// startFleet starts Azurite or redis-server for a backplane kind. The
// Redis fleet authenticates with Microsoft Entra tokens over TLS, as on
// Azure: each instance's managed identity (App Service's identity
// endpoint, stood in for by the test) hands out the token redis-server's
// ACL user takes as its password.
func startFleet(t testing.TB, kind string) *fleet {
	t.Helper()
	f := &fleet{kind: kind, env: []string{
		"FUNCMCP_BACKPLANE=" + kind,
		"WEBSITE_AUTH_ENCRYPTION_KEY=" + sharedSessionKey,
		"FUNCMCP_BACKPLANE_HEARTBEAT=" + testHeartbeat.String(),
	}}
	switch kind {
	case "azurequeues":
		az := testutil.StartAzurite(t, repoRoot(t))
		f.env = append(f.env, "AzureWebJobsStorage="+az.ConnectionString())
		svc, err := azqueue.NewServiceClientFromConnectionString(az.ConnectionString(), nil)
		require.NoError(t, err)
		f.gone = func(t *testing.T, id string) bool {
			_, err := svc.NewQueueClient("mcp-backplane-"+id).GetProperties(t.Context(), nil)
			return queueerror.HasCode(err, queueerror.QueueNotFound)
		}
		f.empty = func(*testing.T) { az.Stop(); az.Start() }
	case "redis":
		cert := testutil.NewTestCert(t)
		const principal, token = "3f2e1d0c-0000-4000-8000-000000000001", "entra-token-for-redis"
		srv := testutil.StartRedis(t, testutil.RedisOptions{Password: "unused-key", Users: map[string]string{principal: token}, Cert: cert})
		mi := testutil.StartIdentityEndpoint(t, func(string) string { return token })
		f.env = append(f.env, mi.Env()...)
		f.env = append(f.env,
			"SSL_CERT_FILE="+cert.CertFile,
			"FUNCMCP_REDIS__redisHostName="+srv.TLSAddr(),
			"FUNCMCP_REDIS__principalId="+principal,
			"FUNCMCP_REDIS__clientId=7d1c0ffe-0000-4000-8000-000000000002")
		raw := redis.NewClient(&redis.Options{Addr: srv.Addr(), Password: "unused-key"})
		t.Cleanup(func() { _ = raw.Close() })
		f.gone = func(t *testing.T, id string) bool {
			n, err := raw.Exists(t.Context(), "mcp-backplane:{"+id+"}", "mcp-backplane:{"+id+"}:alive").Result()
			return err == nil && n == 0
		}
		f.empty = func(t *testing.T) { require.NoError(t, raw.FlushAll(t.Context()).Err()) }
	default:
		t.Fatalf("no fleet of kind %q", kind)
	}
	return f
}

var instanceLine = regexp.MustCompile(`legacy SSE backplane started"? backplane=\S+ instance=([a-z0-9]+)`)

// instanceID reads the instance id a host logged.
func (h *host) instanceID(t *testing.T) string {
	t.Helper()
	m := instanceLine.FindStringSubmatch(h.console.String())
	require.NotNil(t, m, "no instance id in the console:\n%s", h.console.String())
	return m[1]
}

// backplanes are the kinds every multi-instance test runs on.
var backplanes = []string{"azurequeues", "redis"}

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
	for _, kind := range backplanes {
		t.Run(kind, func(t *testing.T) { testMultiInstanceLegacySSE(t, startFleet(t, kind)) })
	}
}

func testMultiInstanceLegacySSE(t *testing.T, f *fleet) {
	app := sample(t)
	a := startHostEnv(t, app, f.env)
	b := startHostEnv(t, app, f.env)
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
		return sessionPost(ctx, t, endpoint, session, body)
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

// sessionPost POSTs one Streamable HTTP message, with the session's
// Mcp-Session-Id unless session is empty, and returns the answer and its
// body.
func sessionPost(ctx context.Context, t testing.TB, endpoint, session, body string) (*http.Response, string) {
	t.Helper()
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

// openClient opens a legacy SSE stream on streamOn, initializes it through
// streamOn, and returns the client with its POSTs aimed at postOn.
func openClient(t testing.TB, n int, streamOn, postOn *host) (c *sseClient, direct string) {
	t.Helper()
	st, err := testutil.OpenSSE(t.Context(), streamOn.base+endpointPath+"/sse", nil)
	require.NoError(t, err)
	t.Cleanup(st.Close)
	code, body, err := postTo(t.Context(), st.Endpoint, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}`)
	require.NoError(t, err)
	require.Equal(t, http.StatusAccepted, code, body)
	ev, err := st.Next(clientTimeout)
	require.NoError(t, err)
	require.Contains(t, ev.Data, `"id":0,`)
	code, body, err = postTo(t.Context(), st.Endpoint, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	require.NoError(t, err)
	require.Equal(t, http.StatusAccepted, code, body)
	return &sseClient{n: n, stream: st, post: testutil.OnHost(st.Endpoint, postOn.base)}, st.Endpoint
}

// openAskingClient is openClient for a client that can be asked
// (elicitation), on 2025-06-18.
func openAskingClient(t testing.TB, n int, streamOn, postOn *host) (c *sseClient, direct string) {
	t.Helper()
	st, err := testutil.OpenSSE(t.Context(), streamOn.base+endpointPath+"/sse", nil)
	require.NoError(t, err)
	t.Cleanup(st.Close)
	code, body, err := postTo(t.Context(), st.Endpoint, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"elicitation":{}},"clientInfo":{"name":"e2e","version":"1"}}}`)
	require.NoError(t, err)
	require.Equal(t, http.StatusAccepted, code, body)
	ev, err := st.Next(clientTimeout)
	require.NoError(t, err)
	require.Contains(t, ev.Data, `"id":0,`)
	code, body, err = postTo(t.Context(), st.Endpoint, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	require.NoError(t, err)
	require.Equal(t, http.StatusAccepted, code, body)
	return &sseClient{n: n, stream: st, post: testutil.OnHost(st.Endpoint, postOn.base)}, st.Endpoint
}

func pingMessage(id int) string { return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, id) }

// replyID reads the id of a reply.
func replyID(data string) (int, error) {
	var r struct {
		ID    *int            `json:"id"`
		Error json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal([]byte(data), &r); err != nil || r.ID == nil || r.Error != nil {
		return 0, fmt.Errorf("not a successful reply: %s", data)
	}
	return *r.ID, nil
}

// TestMultiInstanceFindings reproduces, on each backplane, what several
// funchost instances sharing one storage account showed (a stream on one
// instance, its POSTs on another), and checks each is fixed: a full inbox
// lost messages that had been answered 202; a request over 48 KiB failed
// across instances only; a killed owner kept accepting; replies came out
// of order when POSTs went to both instances.
func TestMultiInstanceFindings(t *testing.T) {
	for _, kind := range backplanes {
		t.Run(kind, func(t *testing.T) {
			f := startFleet(t, kind)
			app := sample(t)
			a := startHostEnv(t, app, f.env) // holds the streams
			b := startHostEnv(t, app, f.env) // receives their POSTs
			ctx := t.Context()

			// Finding 1: a call that waits for the client's answer
			// (book_days_off asks the user) holds the stream while 300
			// pings come through the other instance, 16 at a time: the
			// inbox (256) overflows, the owner holds the rest in order,
			// and every 202 is answered once the client answers. The
			// stream is held until the test lets it go, whatever the
			// speed of the machine.
			t.Run("full inbox: every 202 is answered", func(t *testing.T) {
				c, direct := openAskingClient(t, 1, a, b)
				code, body, err := postTo(ctx, direct, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"book_days_off","arguments":{"country":"GB","from":"2026-08-04","to":"2026-08-04"}}}`)
				require.NoError(t, err)
				require.Equal(t, http.StatusAccepted, code, body)
				ev, err := c.stream.Next(clientTimeout)
				require.NoError(t, err)
				var ask struct {
					ID     json.RawMessage `json:"id"`
					Method string          `json:"method"`
				}
				require.NoError(t, json.Unmarshal([]byte(ev.Data), &ask))
				require.Equal(t, "elicitation/create", ask.Method, ev.Data)

				const pings, posters = 300, 16
				codes := make([]int, pings)
				var next atomic.Int32
				var wg sync.WaitGroup
				for range posters {
					wg.Go(func() {
						for i := int(next.Add(1)) - 1; i < pings; i = int(next.Add(1)) - 1 {
							code, body, err := postTo(ctx, c.post, pingMessage(1000+i))
							if err != nil {
								body = err.Error()
							}
							codes[i] = code
							if code != http.StatusAccepted {
								t.Logf("ping %d: %d %s", i, code, body)
							}
						}
					})
				}
				wg.Wait()
				// A 202 may come once the backplane took the message, before
				// the owner offered it to the stream (Redis): the owner's line
				// can follow the last 202.
				assert.Eventually(t, func() bool { return strings.Contains(a.console.String(), "holding its messages") },
					10*time.Second, 20*time.Millisecond, "the inbox overflowed: the owner held messages")
				want := map[int]bool{1: true}
				for i, code := range codes {
					assert.Equal(t, http.StatusAccepted, code, "ping %d", i)
					if code == http.StatusAccepted {
						want[1000+i] = true
					}
				}
				answer := `{"jsonrpc":"2.0","id":` + string(ask.ID) + `,"result":{"action":"accept","content":{"confirm":true}}}`
				code, body, err = postTo(ctx, direct, answer)
				require.NoError(t, err)
				require.Equal(t, http.StatusAccepted, code, body)
				got := map[int]bool{}
				for len(got) < len(want) {
					ev, err := c.stream.Next(clientTimeout)
					require.NoError(t, err, "%d of %d answered\nhost A:\n%s", len(got), len(want), a.console.String())
					id, err := replyID(ev.Data)
					require.NoError(t, err)
					assert.True(t, want[id], "a reply to %d, which was not accepted", id)
					assert.False(t, got[id], "a second reply to %d", id)
					got[id] = true
				}
				assert.NoError(t, c.noMoreEvents(time.Second))
			})

			// Finding 2: the owner takes up to 4 MiB; so does the backplane.
			t.Run("a 1 MiB request crosses instances", func(t *testing.T) {
				c, _ := openClient(t, 2, a, b)
				for i, size := range []int{1 << 20, 4<<20 - 1024} {
					msg := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping","params":{"pad":"%s"}}`, i+1, strings.Repeat("p", size))
					code, body, err := postTo(ctx, c.post, msg)
					require.NoError(t, err)
					require.Equal(t, http.StatusAccepted, code, "%d bytes: %s", len(msg), body)
					ev, err := c.stream.Next(clientTimeout)
					require.NoError(t, err)
					id, err := replyID(ev.Data)
					require.NoError(t, err)
					assert.Equal(t, i+1, id)
				}
				code, _, err := postTo(ctx, c.post, fmt.Sprintf(`{"jsonrpc":"2.0","id":9,"method":"ping","params":{"pad":"%s"}}`, strings.Repeat("p", 4<<20)))
				require.NoError(t, err)
				assert.Equal(t, http.StatusRequestEntityTooLarge, code, "beyond the limit, as on the owner")
			})

			// Finding 4: each client POSTs to either instance at random,
			// each POST after the previous one's 202: the replies come in
			// that order.
			t.Run("replies in the order the POSTs were accepted", func(t *testing.T) {
				const clients, perClient = 4, 100
				var viaB, viaA atomic.Int32
				var cs []*sseClient
				direct := map[*sseClient]string{}
				for n := range clients {
					c, d := openClient(t, 10+n, a, b)
					cs = append(cs, c)
					direct[c] = d
				}
				err := runClients(cs, func(c *sseClient) error {
					for id := 1; id <= perClient; id++ {
						target := c.post
						if rand.IntN(2) == 0 {
							target = direct[c]
							viaA.Add(1)
						} else {
							viaB.Add(1)
						}
						code, body, err := postTo(ctx, target, pingMessage(id))
						if err != nil || code != http.StatusAccepted {
							return fmt.Errorf("client %d: POST %d: %d %s %v", c.n, id, code, body, err)
						}
					}
					for id := 1; id <= perClient; id++ {
						ev, err := c.stream.Next(clientTimeout)
						if err != nil {
							return fmt.Errorf("client %d: reply %d: %w", c.n, id, err)
						}
						got, err := replyID(ev.Data)
						if err != nil {
							return err
						}
						if got != id {
							return fmt.Errorf("client %d: reply %d came in place %d", c.n, got, id)
						}
					}
					return c.noMoreEvents(time.Second)
				})
				require.NoError(t, err)
				assert.Positive(t, viaA.Load())
				assert.Positive(t, viaB.Load())
			})

			// Finding 3: a killed owner: its clients' POSTs get 400 from
			// the other instance (at once, or within the liveness window
			// of three heartbeats), and its queue is removed later.
			t.Run("a killed owner: 4xx at once, its queue removed", func(t *testing.T) {
				c, _ := openClient(t, 3, a, b)
				code, body, err := postTo(ctx, c.post, pingMessage(1))
				require.NoError(t, err)
				require.Equal(t, http.StatusAccepted, code, body)
				_, err = c.stream.Next(clientTimeout)
				require.NoError(t, err)
				id := a.instanceID(t)
				require.False(t, f.gone(t, id))
				a.kill(t)
				for i := range 3 {
					code, body, err := postTo(ctx, c.post, pingMessage(2+i))
					require.NoError(t, err)
					assert.Equal(t, http.StatusBadRequest, code, body)
					assert.Contains(t, body, "No active session for client")
				}
				require.EventuallyWithT(t, func(c *assert.CollectT) {
					assert.True(c, f.gone(t, id), "the queue of instance %s", id)
				}, time.Minute, 100*time.Millisecond)
			})
		})
	}
}

// TestMultiInstanceIdentityStorage runs two instances on an
// identity-based AzureWebJobsStorage connection, as Azure recommends:
// __queueServiceUri and __blobServiceUri of an Azurite that takes only
// Microsoft Entra tokens (OAuth, over HTTPS with a certificate the test
// makes), __credential=managedidentity and __clientId of a user-assigned
// identity. funchost's ManagedIdentityCredential asks the identity
// endpoint App Service gives a process (IDENTITY_ENDPOINT and
// IDENTITY_HEADER), stood in for by the test, for storage tokens.
func TestMultiInstanceIdentityStorage(t *testing.T) {
	cert := testutil.NewTestCert(t)
	az := testutil.StartAzuriteWith(t, repoRoot(t), testutil.AzuriteOptions{CertFile: cert.CertFile, KeyFile: cert.KeyFile, OAuth: true})
	mi := testutil.StartIdentityEndpoint(t, testutil.EntraJWT)
	const clientID = "0b1c2d3e-0000-4000-8000-000000000003"
	env := append(mi.Env(),
		"FUNCMCP_BACKPLANE=azurequeues",
		"WEBSITE_AUTH_ENCRYPTION_KEY="+sharedSessionKey,
		"SSL_CERT_FILE="+cert.CertFile,
		"AzureWebJobsStorage__queueServiceUri="+az.QueueURL(),
		"AzureWebJobsStorage__blobServiceUri="+az.BlobURL(),
		"AzureWebJobsStorage__tableServiceUri="+az.TableURL(),
		"AzureWebJobsStorage__credential=managedidentity",
		"AzureWebJobsStorage__clientId="+clientID,
		"FUNCMCP_TASK_STORE=azure")
	app := sample(t)
	a := startHostEnv(t, app, env)
	b := startHostEnv(t, app, env)

	// MCP tasks share the same storage, through the same identity: a task
	// made on A is read on B.
	task := taskClient{endpoint: a.endpoint}.create(t, "simulate_epidemic", map[string]any{"days": 30, "duration_seconds": 1})
	done := taskClient{endpoint: b.endpoint}.await(t, task, "completed")
	assert.Contains(t, string(done.Result["result"]), "structuredContent")
	ctx := t.Context()
	c, _ := openClient(t, 1, a, b)
	msgs := []string{callMessage(1, 1), fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"ping","params":{"pad":"%s"}}`, strings.Repeat("p", 1<<20))}
	for i, m := range msgs {
		code, body, err := postTo(ctx, c.post, m)
		require.NoError(t, err)
		require.Equal(t, http.StatusAccepted, code, body)
		ev, err := c.stream.Next(clientTimeout)
		require.NoError(t, err)
		id, err := replyID(ev.Data)
		require.NoError(t, err)
		assert.Equal(t, i+1, id)
	}
	reqs := mi.Requests()
	require.NotEmpty(t, reqs)
	for _, r := range reqs {
		assert.True(t, r.HeaderOK)
		assert.Equal(t, clientID, r.ClientID, "the user-assigned identity")
		assert.Equal(t, "https://storage.azure.com", r.Resource)
	}

	// A setting funchost does not support stops the start, named.
	bctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	bad := exec.CommandContext(bctx, funchost(t), "start", "--script-root", app, "--port", "0")
	bad.Env = append(append(os.Environ(), env...), "AzureWebJobsStorage__clientSecret=hush")
	out, err := bad.CombinedOutput()
	require.Error(t, err)
	assert.Contains(t, string(out), "AzureWebJobsStorage__clientSecret (from environment AzureWebJobsStorage__clientSecret) is not supported by funchost")
	assert.NotContains(t, string(out), "hush")
}

// BenchmarkMultiInstancePing measures finding 5 with real processes: a
// legacy SSE ping POSTed to one funchost instance whose stream is on
// another, from the POST until the reply is read from the stream, through
// Azurite's queues and through redis-server (over TLS with Entra tokens,
// as startFleet sets it up), beside the same instance ("same": the POST
// goes to the stream's own instance). "sequential" sends one message
// after another; "think" pauses 50-500 ms between them. Reports p50/p99
// of the round trip and msgs/s (one over the mean round trip: one
// message in flight at a time).
func BenchmarkMultiInstancePing(b *testing.B) {
	for _, kind := range append([]string{"same"}, backplanes...) {
		b.Run(kind, func(b *testing.B) {
			env := []string{"WEBSITE_AUTH_ENCRYPTION_KEY=" + sharedSessionKey}
			if kind != "same" {
				env = startFleet(b, kind).env
			}
			app := sample(b)
			owner := startHostEnv(b, app, env)
			other := owner
			if kind != "same" {
				other = startHostEnv(b, app, env)
			}
			c, _ := openClient(b, 1, owner, other)
			st, url := c.stream, c.post
			id := 0
			for _, think := range []bool{false, true} {
				name := "sequential"
				if think {
					name = "think"
				}
				b.Run(name, func(b *testing.B) {
					var lat []time.Duration
					for b.Loop() {
						if think {
							time.Sleep(50*time.Millisecond + rand.N(450*time.Millisecond))
						}
						id++
						start := time.Now()
						code, body, err := postTo(b.Context(), url, pingMessage(id))
						require.NoError(b, err)
						require.Equal(b, http.StatusAccepted, code, body)
						ev, err := st.Next(clientTimeout)
						require.NoError(b, err)
						lat = append(lat, time.Since(start))
						got, err := replyID(ev.Data)
						require.NoError(b, err)
						require.Equal(b, id, got)
					}
					reportLatencies(b, lat)
				})
			}
		})
	}
}

// reportLatencies reports the p50 and p99 of round trips made one at a
// time, and the messages per second that makes.
func reportLatencies(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	var sum time.Duration
	for _, d := range lat {
		sum += d
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[min(len(lat)-1, len(lat)*99/100)].Microseconds()), "p99-µs")
	b.ReportMetric(float64(len(lat))/sum.Seconds(), "msgs/s")
}
