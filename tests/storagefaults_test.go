package tests

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue/v2"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue/v2/queueerror"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/internal/testutil"
)

// forwardDeadline is the documented bound of a POST forwarded to another
// instance: no answer within 10 s gives 503. stallSlack is what a test
// allows beyond it before calling the POST hung (the storage client's own
// per-try timeout is 10 s, its retries two).
const (
	forwardDeadline = 10 * time.Second
	stallSlack      = 5 * time.Second
)

// TestMultiInstanceStorageFaults runs two funchost processes on Azurite
// and puts their storage through what several-instance deployments meet:
// the storage of the instance receiving the POSTs held by a proxy (the
// POST gets 503 within the documented 10 s, not after the storage
// client's retries), and the instance holding the streams paused
// (SIGSTOP) until the other swept it as dead, then resumed: once it runs
// again, its streams take messages again, large ones (blobs) included,
// without a restart.
func TestMultiInstanceStorageFaults(t *testing.T) {
	az := testutil.StartAzurite(t, repoRoot(t))
	qp := testutil.StartHoldProxy(t, "127.0.0.1:"+strconv.Itoa(az.Port))
	bp := testutil.StartHoldProxy(t, "127.0.0.1:"+strconv.Itoa(az.BlobPort))
	env := []string{
		"FUNCMCP_BACKPLANE=azurequeues",
		"WEBSITE_AUTH_ENCRYPTION_KEY=" + sharedSessionKey,
		"FUNCMCP_BACKPLANE_HEARTBEAT=" + testHeartbeat.String(),
	}
	viaProxy := fmt.Sprintf("AzureWebJobsStorage=DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=%s;QueueEndpoint=http://%s/devstoreaccount1;BlobEndpoint=http://%s/devstoreaccount1",
		testutil.AzuriteAccountKey, qp.Addr(), bp.Addr())
	app := sample(t)
	a := startHostEnv(t, app, append(env, "AzureWebJobsStorage="+az.ConnectionString())) // holds the streams
	b := startHostEnv(t, app, append(env, viaProxy))                                     // receives their POSTs
	ctx := t.Context()

	t.Run("storage held: 503 within the outcome deadline", func(t *testing.T) {
		c, _ := openClient(t, 1, a, b)
		code, body, err := postTo(ctx, c.post, pingMessage(1))
		require.NoError(t, err)
		require.Equal(t, http.StatusAccepted, code, body)
		_, err = c.stream.Next(clientTimeout)
		require.NoError(t, err)

		qp.Hold()
		bp.Hold()
		defer func() { qp.Release(); bp.Release() }()
		for i := range 3 {
			start := time.Now()
			code, body, err := postTo(ctx, c.post, pingMessage(10+i))
			took := time.Since(start)
			require.NoError(t, err)
			assert.Equal(t, http.StatusServiceUnavailable, code, body)
			assert.Less(t, took, forwardDeadline+stallSlack, "POST %d: %d after %s", i, code, took)
			t.Logf("held storage: POST %d answered %d after %s", i, code, took.Round(10*time.Millisecond))
		}
	})

	t.Run("an owner paused until swept, then resumed", func(t *testing.T) {
		c, _ := openClient(t, 2, a, b)
		large := func(id int) string {
			return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping","params":{"pad":"%s"}}`, id, strings.Repeat("p", 100<<10))
		}
		code, body, err := postTo(ctx, c.post, large(1))
		require.NoError(t, err)
		require.Equal(t, http.StatusAccepted, code, body)
		_, err = c.stream.Next(clientTimeout)
		require.NoError(t, err)

		id := a.instanceID(t)
		require.NoError(t, syscall.Kill(a.cmd.Process.Pid, syscall.SIGSTOP))
		resumed := false
		defer func() {
			if !resumed {
				_ = syscall.Kill(a.cmd.Process.Pid, syscall.SIGCONT)
			}
		}()
		require.EventuallyWithT(t, func(ct *assert.CollectT) {
			assert.True(ct, queueGone(t, az, id), "the paused instance's queue is swept")
		}, time.Minute, 100*time.Millisecond)
		require.NoError(t, syscall.Kill(a.cmd.Process.Pid, syscall.SIGCONT))
		resumed = true

		// Once it runs again, messages are taken, large ones included;
		// none after the first is refused.
		next := 100
		require.EventuallyWithT(t, func(ct *assert.CollectT) {
			next++
			code, body, err := postTo(ctx, c.post, large(next))
			if assert.NoError(ct, err) {
				assert.Equal(ct, http.StatusAccepted, code, body)
			}
		}, time.Minute, 200*time.Millisecond)
		for i := range 5 {
			code, body, err := postTo(ctx, c.post, large(1000+i))
			require.NoError(t, err)
			assert.Equal(t, http.StatusAccepted, code, body)
		}
		got := map[int]bool{}
		for !got[1004] {
			ev, err := c.stream.Next(clientTimeout)
			require.NoError(t, err, "the replies to the large messages")
			n, err := replyID(ev.Data)
			require.NoError(t, err)
			got[n] = true
		}
	})
}

// queueGone reports whether the queue of an instance is gone from az.
func queueGone(t *testing.T, az *testutil.Azurite, id string) bool {
	svc, err := azqueue.NewServiceClientFromConnectionString(az.ConnectionString(), nil)
	if err != nil {
		return false
	}
	_, err = svc.NewQueueClient("mcp-backplane-"+id).GetProperties(t.Context(), nil)
	return queueerror.HasCode(err, queueerror.QueueNotFound)
}

// TestMultiInstanceKilledOwnerBounds: after its owner is killed, a
// stream's POSTs through the other instance get 503 (retry) while the
// owner is merely late, then 400 (gone) for good; never 202. The times
// are logged for docs/several-instances.md (here with a 1 s heartbeat:
// 400 from six heartbeats).
func TestMultiInstanceKilledOwnerBounds(t *testing.T) {
	for _, kind := range backplanes {
		t.Run(kind, func(t *testing.T) {
			f := startFleet(t, kind)
			env := append(append([]string{}, f.env...), "FUNCMCP_BACKPLANE_HEARTBEAT=1s")
			app := sample(t)
			a := startHostEnv(t, app, env)
			b := startHostEnv(t, app, env)
			c, _ := openClient(t, 1, a, b)
			code, body, err := postTo(t.Context(), c.post, pingMessage(1))
			require.NoError(t, err)
			require.Equal(t, http.StatusAccepted, code, body)
			a.kill(t)
			killed := time.Now()
			n503 := 0
			for i := 0; ; i++ {
				code, body, err := postTo(t.Context(), c.post, pingMessage(10+i))
				require.NoError(t, err)
				took := time.Since(killed)
				require.Contains(t, []int{http.StatusServiceUnavailable, http.StatusBadRequest}, code, body)
				if code == http.StatusServiceUnavailable {
					n503++
				}
				if code == http.StatusBadRequest {
					t.Logf("%s, heartbeat 1s: %d POSTs got 503, then 400 %s after the kill",
						kind, n503, took.Round(10*time.Millisecond))
					break
				}
				require.Less(t, took, 2*time.Minute, "no 400 yet")
				time.Sleep(100 * time.Millisecond)
			}
			for i := range 3 {
				code, body, err := postTo(t.Context(), c.post, pingMessage(100+i))
				require.NoError(t, err)
				assert.Equal(t, http.StatusBadRequest, code, body)
			}
		})
	}
}
