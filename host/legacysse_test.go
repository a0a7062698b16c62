package host

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/host/internal/backplane"
	"github.com/funcmcp/funcmcp/host/internal/instances"
	"github.com/funcmcp/funcmcp/internal/testutil"
	"github.com/funcmcp/funcmcp/metadata"
)

const testSessionKey = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"

// serveTestHost runs a host over root against workerURL on a free port until the
// test ends, and returns its base URL.
func serveTestHost(t testing.TB, root, workerURL string, opts *Options) (*Host, string) {
	t.Helper()
	o := Options{}
	if opts != nil {
		o = *opts
	}
	o.Addr = "127.0.0.1:0"
	h, _ := newTestHost(t, root, workerURL, &o)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			assert.NoError(t, err)
		case <-time.After(20 * time.Second):
			t.Error("the host did not stop within 20s")
		}
	})
	select {
	case <-h.Ready():
	case err := <-done:
		t.Fatalf("the host stopped: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("the host was not ready within 20s")
	}
	return h, strings.TrimSuffix(h.Endpoint(), MCPPath)
}

// postMessage POSTs a JSON-RPC message to a message URL.
func postMessage(t testing.TB, url, body string) (int, string) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestLegacySSEAcrossHosts streams from one host and posts to another in
// the same process (the in-memory backplane): the call runs on the stream's
// host and its reply arrives on the stream.
func TestLegacySSEAcrossHosts(t *testing.T) {
	t.Setenv("WEBSITE_AUTH_ENCRYPTION_KEY", testSessionKey)
	fw := newFakeWorker(t)
	root := weatherApp(t, `{"version":"2.0"}`)
	_, a := serveTestHost(t, root, fw.srv.URL, nil)
	_, b := serveTestHost(t, root, fw.srv.URL, nil)

	st, err := testutil.OpenSSE(t.Context(), a+SSEPath, http.Header{"X-Test": {"abc"}})
	require.NoError(t, err)
	defer st.Close()
	onB := testutil.OnHost(st.Endpoint, b)
	code, body := postMessage(t, onB, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05","clientInfo":{"name":"c","version":"1"}}}`)
	require.Equal(t, http.StatusAccepted, code, body)
	ev, err := st.Next(10 * time.Second)
	require.NoError(t, err)
	assert.Contains(t, ev.Data, `"protocolVersion":"2024-11-05"`)

	code, body = postMessage(t, onB, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_weather","arguments":{"city":"Oslo"}}}`)
	require.Equal(t, http.StatusAccepted, code, body)
	ev, err = st.Next(10 * time.Second)
	require.NoError(t, err)
	var reply struct {
		ID     int                     `json:"id"`
		Result metadata.CallToolResult `json:"result"`
	}
	require.NoError(t, json.Unmarshal([]byte(ev.Data), &reply), ev.Data)
	assert.Equal(t, 2, reply.ID)
	assert.JSONEq(t, `{"city":"Oslo","temp":21.5}`, string(reply.Result.StructuredContent))

	reqs := fw.requests()
	require.NotEmpty(t, reqs)
	var inv metadata.InvocationRequest
	require.NoError(t, json.Unmarshal(reqs[len(reqs)-1].Body, &inv))
	tc, err := metadata.ToolContextFromRequest(&inv, metadata.TriggerBindingName)
	require.NoError(t, err)
	require.NotNil(t, tc.Transport)
	assert.Equal(t, metadata.TransportSSE, tc.Transport.Name)
	v, _ := tc.Transport.Header("X-Test")
	assert.Equal(t, "abc", v)
}

// TestForwardedResponseNobodyWaitsFor: a client's response forwarded to
// the instance named in its request id, where no call waits for it, can
// never be delivered: that instance reports it gone (and deletes it), and
// the sender takes that for no error. A malformed one is gone there too;
// the sender does not forward it (nor a made-up id) at all.
func TestForwardedResponseNobodyWaitsFor(t *testing.T) {
	t.Setenv("WEBSITE_AUTH_ENCRYPTION_KEY", testSessionKey)
	t.Setenv(SettingBackplane, BackplaneMemory)
	root := weatherApp(t, `{"version":"2.0"}`)
	a, _ := serveTestHost(t, root, "http://127.0.0.1:1", nil)
	b, _ := serveTestHost(t, root, "http://127.0.0.1:1", nil)
	const scope = "session:nobody"
	asked := a.legacy.RequestID(scope, time.Now().Add(time.Minute))
	for _, tc := range []struct{ name, body string }{
		{"a result", `{"jsonrpc":"2.0","id":"` + asked + `","result":{"action":"accept"}}`},
		{"a made-up id", `{"jsonrpc":"2.0","id":"` + a.legacy.InstanceID() + `~nobody","result":{"action":"accept"}}`},
		{"not a response", `{"jsonrpc":"2.0","id":1,"method":"ping"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := a.legacy.Deliver(t.Context(), backplane.Message{ID: "m-" + tc.name, ClientID: instances.ResponsePrefix + scope, Body: []byte(tc.body)})
			assert.Equal(t, backplane.Gone, out)
			assert.NoError(t, b.legacy.ForwardResponse(t.Context(), a.legacy.InstanceID(), scope, []byte(tc.body)))
			_, err := b.legacy.CheckResponse(a.legacy.InstanceID(), scope, []byte(tc.body))
			assert.ErrorIs(t, err, instances.ErrNotARequest, "never, or not twice")
		})
	}
}

// TestLegacySSEFunctionKeys: with keys enforced, the stream needs a key and
// the key it was opened with is copied into the message URL.
func TestLegacySSEFunctionKeys(t *testing.T) {
	root := weatherApp(t, `{"version":"2.0"}`)
	_, base := serveTestHost(t, root, newFakeWorker(t).srv.URL, &Options{SystemKey: "sys-key/1"})

	resp, err := http.Get(base + SSEPath)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, "a stream without a key")

	for _, tc := range []struct {
		name  string
		query string
		hdr   http.Header
	}{
		{"code query", "?code=sys-key%2F1", nil},
		{"x-functions-key header", "", http.Header{"X-Functions-Key": {"sys-key/1"}}},
		// The header is the key checked; a stale code beside it must not
		// end up in the message URL, where it would be refused.
		{"header beside a wrong code", "?code=stale", http.Header{"X-Functions-Key": {"sys-key/1"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, err := testutil.OpenSSE(t.Context(), base+SSEPath+tc.query, tc.hdr)
			require.NoError(t, err)
			defer st.Close()
			assert.Contains(t, st.Endpoint, "&code=sys-key%2F1")
			code, body := postMessage(t, st.Endpoint, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
			require.Equal(t, http.StatusAccepted, code, body)
			ev, err := st.Next(10 * time.Second)
			require.NoError(t, err)
			assert.JSONEq(t, `{"jsonrpc":"2.0","id":1,"result":{}}`, ev.Data)

			noKey := strings.Replace(st.Endpoint, "&code=sys-key%2F1", "", 1)
			code, _ = postMessage(t, noKey, `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
			assert.Equal(t, http.StatusUnauthorized, code, "a message without the key")
		})
	}
}

func TestBackplaneSettings(t *testing.T) {
	root := weatherApp(t, `{"version":"2.0"}`)
	t.Run("unknown kind", func(t *testing.T) {
		t.Setenv(SettingBackplane, "carrier-pigeons")
		_, err := New(&Options{ScriptRoot: root, WorkerURL: "http://127.0.0.1:1", Output: io.Discard})
		require.Error(t, err)
		assert.Contains(t, err.Error(), SettingBackplane)
		assert.Contains(t, err.Error(), "carrier-pigeons")
	})
	t.Run("queues without a connection", func(t *testing.T) {
		t.Setenv(SettingBackplane, BackplaneAzureQueues)
		t.Setenv(SettingStorage, "")
		_, err := New(&Options{ScriptRoot: root, WorkerURL: "http://127.0.0.1:1", Output: io.Discard})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "AzureWebJobsStorage is not set")
	})
	t.Run("queues with an unsupported identity setting", func(t *testing.T) {
		t.Setenv(SettingBackplane, BackplaneAzureQueues)
		t.Setenv(SettingStorage, "")
		t.Setenv(SettingStorage+"__accountName", "myaccount")
		t.Setenv(SettingStorage+"__clientSecret", "hush")
		_, err := New(&Options{ScriptRoot: root, WorkerURL: "http://127.0.0.1:1", Output: io.Discard})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "AzureWebJobsStorage__clientSecret (from environment AzureWebJobsStorage__clientSecret) is not supported by funchost")
		assert.NotContains(t, err.Error(), "hush")
	})
	t.Run("redis without a connection", func(t *testing.T) {
		t.Setenv(SettingBackplane, BackplaneRedis)
		_, err := New(&Options{ScriptRoot: root, WorkerURL: "http://127.0.0.1:1", Output: io.Discard})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "connection FUNCMCP_REDIS is not set")
	})
	t.Run("a heartbeat that is not a duration", func(t *testing.T) {
		t.Setenv(SettingBackplane, BackplaneRedis)
		t.Setenv(SettingHeartbeat, "often")
		_, err := New(&Options{ScriptRoot: root, WorkerURL: "http://127.0.0.1:1", Output: io.Discard})
		require.Error(t, err)
		assert.Contains(t, err.Error(), `reading FUNCMCP_BACKPLANE_HEARTBEAT from environment FUNCMCP_BACKPLANE_HEARTBEAT: "often" is not a duration`)
	})
	t.Run("queues on unreachable storage", func(t *testing.T) {
		t.Setenv(SettingBackplane, BackplaneAzureQueues)
		t.Setenv(SettingStorage, "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey="+testutil.AzuriteAccountKey+";QueueEndpoint=http://127.0.0.1:1/devstoreaccount1")
		h, err := New(&Options{ScriptRoot: root, WorkerURL: "http://127.0.0.1:1", Output: io.Discard, Addr: "127.0.0.1:0"})
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		defer cancel()
		err = h.Run(ctx)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "with connection AzureWebJobsStorage (http://127.0.0.1:1/devstoreaccount1")
		assert.NotContains(t, err.Error(), testutil.AzuriteAccountKey)
	})
}

// BenchmarkLegacySSEPing_CrossInstance measures one legacy SSE message
// crossing instances: a ping POSTed to host B whose stream is on host A,
// from the POST until its reply is read from A's stream. Two hosts in one
// process, no worker involved (ping). "same" POSTs to A itself (no
// backplane), memory is the in-process backplane, azurequeues goes through
// Azurite's queues on loopback and redis through a redis-server on
// loopback. Reports p50/p99 of the round trip and messages per second:
// "sequential" has one message in flight at a time, back to back; "think"
// one at a time with a pause of 50-500 ms between them (the receiving
// instance is not polling without pause when a message comes); "parallel"
// one per goroutine, each on its own stream.
func BenchmarkLegacySSEPing_CrossInstance(b *testing.B) {
	for _, kind := range []string{"same", BackplaneMemory, BackplaneAzureQueues, BackplaneRedis} {
		b.Run(kind, func(b *testing.B) {
			b.Setenv("WEBSITE_AUTH_ENCRYPTION_KEY", testSessionKey)
			switch kind {
			case "same":
				b.Setenv(SettingBackplane, BackplaneMemory)
			case BackplaneAzureQueues:
				b.Setenv(SettingBackplane, kind)
				root, err := filepath.Abs("..")
				require.NoError(b, err)
				az := testutil.StartAzurite(b, root)
				b.Setenv(SettingStorage, az.ConnectionString())
			case BackplaneRedis:
				b.Setenv(SettingBackplane, kind)
				srv := testutil.StartRedis(b, testutil.RedisOptions{})
				b.Setenv(SettingRedis, srv.Addr())
			default:
				b.Setenv(SettingBackplane, kind)
			}
			app := weatherApp(b, `{"version":"2.0"}`)
			_, hostA := serveTestHost(b, app, "http://127.0.0.1:1", nil)
			hostB := hostA
			if kind != "same" {
				_, hostB = serveTestHost(b, app, "http://127.0.0.1:1", nil)
			}
			b.Run("sequential", func(b *testing.B) { benchPings(b, hostA, hostB, false, false) })
			b.Run("think", func(b *testing.B) { benchPings(b, hostA, hostB, false, true) })
			b.Run("parallel", func(b *testing.B) { benchPings(b, hostA, hostB, true, false) })
		})
	}
}

func benchPings(b *testing.B, hostA, hostB string, parallel, think bool) {
	var mu sync.Mutex
	var lat []time.Duration
	// one sends a ping on msgURL and reads its reply from st. It reports
	// problems as errors: with RunParallel it runs off the benchmark's
	// goroutine.
	one := func(st *testutil.SSEStream, msgURL string, id int) error {
		start := time.Now()
		resp, err := http.Post(msgURL, "application/json", strings.NewReader(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, id)))
		if err != nil {
			return err
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusAccepted {
			return fmt.Errorf("POST: %d %s", resp.StatusCode, body)
		}
		ev, err := st.Next(30 * time.Second)
		if err != nil {
			return err
		}
		d := time.Since(start)
		if want := fmt.Sprintf(`"id":%d,`, id); !strings.Contains(ev.Data, want) {
			return fmt.Errorf("reply %s, want id %d", ev.Data, id)
		}
		mu.Lock()
		lat = append(lat, d)
		mu.Unlock()
		return nil
	}
	open := func() (*testutil.SSEStream, string, error) {
		st, err := testutil.OpenSSE(context.Background(), hostA+SSEPath, nil)
		if err != nil {
			return nil, "", err
		}
		return st, testutil.OnHost(st.Endpoint, hostB), nil
	}
	start := time.Now()
	if parallel {
		b.SetParallelism(4)
		b.RunParallel(func(pb *testing.PB) {
			st, msgURL, err := open()
			if err != nil {
				b.Error(err)
				return
			}
			defer st.Close()
			for i := 0; pb.Next(); i++ {
				if err := one(st, msgURL, i); err != nil {
					b.Error(err)
					return
				}
			}
		})
	} else {
		st, msgURL, err := open()
		require.NoError(b, err)
		defer st.Close()
		for i := 0; b.Loop(); i++ {
			if think {
				pause := 50*time.Millisecond + rand.N(450*time.Millisecond)
				time.Sleep(pause)
			}
			require.NoError(b, one(st, msgURL, i))
		}
	}
	elapsed := time.Since(start)
	if len(lat) == 0 {
		return
	}
	if think {
		// One message at a time with pauses between: the rate it could
		// sustain is one over the mean round trip.
		elapsed = 0
		for _, d := range lat {
			elapsed += d
		}
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[min(len(lat)-1, len(lat)*99/100)].Microseconds()), "p99-µs")
	b.ReportMetric(float64(len(lat))/elapsed.Seconds(), "msgs/s")
}
