package backplane

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/internal/testutil"
)

func newTestQueue(t *testing.T, id string, s Storage, o *QueueOptions) *Queue {
	t.Helper()
	if o == nil {
		o = &QueueOptions{}
	}
	if o.OutcomeTimeout == 0 {
		o.OutcomeTimeout = time.Minute
	}
	s.Name = "AzureWebJobsStorage"
	q, err := NewQueue(id, s, o)
	require.NoError(t, err)
	return q
}

// TestQueue runs the tests of the Azure Storage Queue backplane that can
// share one Azurite (each its own instance ids).
func TestQueue(t *testing.T) {
	az := testutil.StartAzurite(t, repoRoot(t))
	for _, tc := range []struct {
		name string
		test func(t *testing.T, az *testutil.Azurite)
	}{
		{"what every backplane does", testQueueBackplane},
		{"Stop deletes the queue and container", testQueueStopDeletesTheQueueAndContainer},
		{"a large message travels as a blob", testQueueLargeMessageTravelsAsABlob},
		{"an undecodable message is dropped", testQueueDropsAnUndecodableMessage},
		{"the cleanup removes dead instances", testQueueCleanupRemovesDeadInstances},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.test(t, az) })
	}
}

func testQueueBackplane(t *testing.T, az *testutil.Azurite) {
	st := Storage{ConnectionString: az.ConnectionString()}
	opts := func() *QueueOptions { return &QueueOptions{Heartbeat: 200 * time.Millisecond} }
	a := newTestQueue(t, "confa", st, opts())
	b := newTestQueue(t, "confb", st, opts())
	testBackplane(t, a, b, "confa", func() { a.halt() }, func(t *testing.T) {
		// Three heartbeats go by without one from a.
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			_, err := b.alive(t.Context(), "confa")
			assert.ErrorIs(c, err, ErrUnknownInstance)
		}, 20*time.Second, 50*time.Millisecond)
	})
}

func testQueueStopDeletesTheQueueAndContainer(t *testing.T, az *testutil.Azurite) {
	ctx := t.Context()
	st := Storage{ConnectionString: az.ConnectionString()}
	a := newTestQueue(t, "stopa", st, nil)
	require.NoError(t, a.Start(ctx, newStreams().deliver))
	_, err := a.queues.Metadata(ctx, a.QueueName())
	require.NoError(t, err, "Start creates the queue")
	require.NoError(t, a.Stop(ctx))
	_, err = a.queues.Metadata(ctx, a.QueueName())
	assert.ErrorIs(t, err, errQueueNotFound, "Stop deletes the queue")
	blobs, err := azblob.NewClientFromConnectionString(az.ConnectionString(), nil)
	require.NoError(t, err)
	_, err = blobs.ServiceClient().NewContainerClient(a.QueueName()).GetProperties(ctx, nil)
	assert.Error(t, err, "Stop deletes the container")
}

// testQueueLargeMessageTravelsAsABlob: a body too large for a queue
// message (64 KiB of base64) crosses in a blob of the receiver's
// container, deleted once the stream took it.
func testQueueLargeMessageTravelsAsABlob(t *testing.T, az *testutil.Azurite) {
	ctx := t.Context()
	st := Storage{ConnectionString: az.ConnectionString()}
	a := newTestQueue(t, "largea", st, nil)
	b := newTestQueue(t, "largeb", st, nil)
	sa := newStreams("client1")
	require.NoError(t, a.Start(ctx, sa.deliver))
	defer a.Stop(context.WithoutCancel(ctx))
	require.NoError(t, b.Start(ctx, newStreams().deliver))
	defer b.Stop(context.WithoutCancel(ctx))

	for _, size := range []int{40 << 10, 49 << 10, 1 << 20, 4 << 20} {
		body := json.RawMessage(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("x", size) + `"}}`)
		m := Message{ID: fmt.Sprintf("big%d", size), ClientID: "client1", Body: body}
		out, err := b.Send(ctx, "largea", m)
		require.NoError(t, err, "%d bytes", size)
		require.Equal(t, Taken, out)
		got := sa.snapshot("client1")
		require.NotEmpty(t, got)
		assert.True(t, bytes.Equal(body, got[len(got)-1].Body), "%d bytes arrive whole", size)
	}
	blobs, err := azblob.NewClientFromConnectionString(az.ConnectionString(), nil)
	require.NoError(t, err)
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		pager := blobs.NewListBlobsFlatPager(a.QueueName(), nil)
		page, err := pager.NextPage(ctx)
		if assert.NoError(c, err) {
			assert.Empty(c, page.Segment.BlobItems, "each blob is deleted once its message was taken")
		}
	}, 10*time.Second, 20*time.Millisecond)
}

func testQueueDropsAnUndecodableMessage(t *testing.T, az *testutil.Azurite) {
	ctx := t.Context()
	logs := &testutil.SyncBuffer{}
	st := Storage{ConnectionString: az.ConnectionString()}
	a := newTestQueue(t, "undeca", st, &QueueOptions{Logger: slog.New(slog.NewTextHandler(logs, nil))})
	b := newTestQueue(t, "undecb", st, nil)
	sa := newStreams("client1")
	require.NoError(t, a.Start(ctx, sa.deliver))
	defer a.Stop(context.WithoutCancel(ctx))
	require.NoError(t, b.Start(ctx, newStreams().deliver))
	defer b.Stop(context.WithoutCancel(ctx))

	raw, err := azqueue.NewQueueClientFromConnectionString(az.ConnectionString(), a.QueueName(), nil)
	require.NoError(t, err)
	_, err = raw.EnqueueMessage(ctx, "this is not a backplane message", nil)
	require.NoError(t, err)
	out, err := b.Send(ctx, "undeca", msg(7))
	require.NoError(t, err)
	assert.Equal(t, Taken, out)
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		peek, err := raw.PeekMessages(ctx, nil)
		if assert.NoError(c, err) {
			assert.Empty(c, peek.Messages, "the undecodable message stayed in the queue")
		}
	}, 10*time.Second, 20*time.Millisecond)
	assert.Contains(t, logs.String(), "does not decode")
	assert.Equal(t, []string{"m7"}, ids(sa.snapshot("client1")))
}

func TestQueueStartFailsNamingTheConnection(t *testing.T) {
	// Storage on a port that refuses connections (held, not listening).
	port := testutil.ReservePort(t)
	conn := fmt.Sprintf("DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=%s;QueueEndpoint=http://%s/devstoreaccount1",
		testutil.AzuriteAccountKey, port.Addr())
	q := newTestQueue(t, "instancea", Storage{ConnectionString: conn}, nil)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	err := q.Start(ctx, newStreams().deliver)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "AzureWebJobsStorage")
	assert.Contains(t, err.Error(), "mcp-backplane-instancea")
	assert.NotContains(t, err.Error(), testutil.AzuriteAccountKey)
}

func TestQueueRecoversWhenStorageReturns(t *testing.T) {
	az := testutil.StartAzurite(t, repoRoot(t))
	ctx := t.Context()
	logs := &testutil.SyncBuffer{}
	a := newTestQueue(t, "instancea", Storage{ConnectionString: az.ConnectionString()}, &QueueOptions{
		Logger: slog.New(slog.NewTextHandler(logs, nil)), MaxRetryWait: 500 * time.Millisecond,
	})
	sa := newStreams("client1")
	require.NoError(t, a.Start(ctx, sa.deliver))
	defer a.Stop(context.WithoutCancel(ctx))
	out, err := a.Send(ctx, "instancea", msg(1))
	require.NoError(t, err)
	require.Equal(t, Taken, out)

	az.Stop()
	// The receive loop notices before storage comes back.
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Contains(c, logs.String(), "receiving from storage failed; retrying")
	}, 20*time.Second, 20*time.Millisecond)
	az.Start() // in memory: an empty account, the queue is gone

	// The loop recreates its queue; until it has, a send finds none.
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		a.peers.Clear()
		_, err := a.Send(ctx, "instancea", msg(2))
		assert.NoError(c, err)
	}, 30*time.Second, 100*time.Millisecond)
	got := sa.waitFor(t, "client1", 2, 20*time.Second)
	assert.Equal(t, "m2", got[1].ID)
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Contains(c, logs.String(), "reachable again")
	}, 20*time.Second, 20*time.Millisecond)
}

// testQueueCleanupRemovesDeadInstances: the queue and container of an
// instance whose heartbeat is long stale are removed by any other
// instance; a live one's, and a queue that is not funchost's, stay.
func testQueueCleanupRemovesDeadInstances(t *testing.T, az *testutil.Azurite) {
	ctx := t.Context()
	st := Storage{ConnectionString: az.ConnectionString()}
	beat := 100 * time.Millisecond
	dead := newTestQueue(t, "deadone", st, &QueueOptions{Heartbeat: beat})
	live := newTestQueue(t, "liveone", st, &QueueOptions{Heartbeat: beat})
	require.NoError(t, dead.Start(ctx, newStreams().deliver))
	require.NoError(t, live.Start(ctx, newStreams().deliver))
	defer live.Stop(context.WithoutCancel(ctx))
	foreign, err := azqueue.NewQueueClientFromConnectionString(az.ConnectionString(), QueuePrefix+"notours", nil)
	require.NoError(t, err)
	_, err = foreign.Create(ctx, nil)
	require.NoError(t, err)
	dead.halt()

	// Before RemoveBeats heartbeats nothing goes; after, the dead one does.
	live.sweep(ctx, time.Now())
	_, err = dead.queues.Metadata(ctx, dead.QueueName())
	require.NoError(t, err, "a recent heartbeat: kept")
	live.sweep(ctx, time.Now().Add(RemoveBeats*beat+time.Minute))
	_, err = dead.queues.Metadata(ctx, dead.QueueName())
	assert.ErrorIs(t, err, errQueueNotFound, "the dead instance's queue")
	_, err = live.queues.Metadata(ctx, live.QueueName())
	assert.NoError(t, err, "its own queue stays")
	_, err = foreign.GetProperties(ctx, nil)
	assert.NoError(t, err, "a queue without a heartbeat is not funchost's: it stays")
	containers, err := live.blobs.ListContainers(ctx, dead.QueueName())
	require.NoError(t, err)
	assert.Empty(t, containers, "the dead instance's container is gone")
}

// TestQueueIdleRequests counts the storage requests of an idle instance
// over its schedule: polls at MaxIdleWait, a heartbeat each Heartbeat and
// three listings each cleanup. The defaults stay below the 0.67/s of the
// poll-only schedule (1.5 s) they replace.
func TestQueueIdleRequests(t *testing.T) {
	var o QueueOptions
	o.withDefaults()
	perSecond := 1/o.MaxIdleWait.Seconds() + 1/o.Heartbeat.Seconds() + 3/(CleanupBeats*o.Heartbeat).Seconds()
	assert.LessOrEqual(t, perSecond, 0.67)
	t.Logf("idle storage requests per instance: %.3f/s", perSecond)
}

// tokenCredential hands out a fixed token.
type tokenCredential struct {
	token string
	calls atomic.Int32
}

func (c *tokenCredential) GetToken(_ context.Context, o policy.TokenRequestOptions) (azcore.AccessToken, error) {
	c.calls.Add(1)
	return azcore.AccessToken{Token: c.token, ExpiresOn: time.Now().Add(time.Hour)}, nil
}

// TestQueueWithATokenOverHTTPS: an identity-based connection (service URLs
// and a token credential) against Azurite over HTTPS with OAuth: queues,
// blobs and the heartbeat all work with the token; a token for another
// audience is refused.
func TestQueueWithATokenOverHTTPS(t *testing.T) {
	cert := testutil.NewTestCert(t)
	az := testutil.StartAzuriteWith(t, repoRoot(t), testutil.AzuriteOptions{CertFile: cert.CertFile, KeyFile: cert.KeyFile, OAuth: true})
	ctx := t.Context()
	transport := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: cert.Pool}}}
	counted := newCountingTransport(transport)
	cred := &tokenCredential{token: testutil.EntraJWT("https://storage.azure.com")}
	st := Storage{QueueURL: az.QueueURL(), BlobURL: az.BlobURL(), Credential: cred, Transport: counted}
	a := newTestQueue(t, "instancea", st, nil)
	b := newTestQueue(t, "instanceb", st, nil)
	sa := newStreams("client1")
	require.NoError(t, a.Start(ctx, sa.deliver))
	defer a.Stop(context.WithoutCancel(ctx))
	require.NoError(t, b.Start(ctx, newStreams().deliver))
	defer b.Stop(context.WithoutCancel(ctx))
	for _, body := range []json.RawMessage{msg(1).Body, json.RawMessage(`"` + strings.Repeat("y", 1<<20) + `"`)} {
		out, err := b.Send(ctx, "instancea", Message{ID: fmt.Sprint(len(body)), ClientID: "client1", Body: body})
		require.NoError(t, err)
		require.Equal(t, Taken, out)
	}
	assert.Len(t, sa.snapshot("client1"), 2)
	assert.Positive(t, cred.calls.Load())
	assert.Positive(t, counted.total.Load())

	wrong := newTestQueue(t, "instancec", Storage{QueueURL: az.QueueURL(), Credential: &tokenCredential{token: testutil.EntraJWT("https://vault.azure.net")}, Transport: transport}, nil)
	err := wrong.Start(ctx, newStreams().deliver)
	require.Error(t, err, "Azurite checks the token's audience")
	assert.Contains(t, err.Error(), "403")

	_, err = NewQueue("instanced", Storage{QueueURL: strings.Replace(az.QueueURL(), "https", "http", 1), Credential: cred}, nil)
	assert.ErrorContains(t, err, "a token is sent only over TLS")
}

func TestNewQueueConnections(t *testing.T) {
	q, err := NewQueue("inst1", Storage{ConnectionString: "UseDevelopmentStorage=true"}, nil)
	require.NoError(t, err)
	assert.Equal(t, "http://127.0.0.1:10001/devstoreaccount1/", q.account, "the storage emulator's defaults")
	assert.Equal(t, "mcp-backplane-inst1", q.QueueName())
	assert.True(t, q.LargeMessages())

	q, err = NewQueue("inst1", Storage{ConnectionString: "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=" + testutil.AzuriteAccountKey + ";QueueEndpoint=http://127.0.0.1:1/devstoreaccount1"}, nil)
	require.NoError(t, err)
	assert.False(t, q.LargeMessages(), "a queue endpoint alone: no blobs")

	_, err = NewQueue("inst1", Storage{Name: "AzureWebJobsStorage"}, nil)
	assert.ErrorContains(t, err, "connection AzureWebJobsStorage is not set")
	_, err = NewQueue("inst1", Storage{Name: "AzureWebJobsStorage", ConnectionString: "AccountName=x"}, nil)
	assert.ErrorContains(t, err, "connection AzureWebJobsStorage")
	_, err = NewQueue("Not-Valid", Storage{ConnectionString: DevelopmentStorage}, nil)
	assert.ErrorContains(t, err, "instance id")
}

// BenchmarkQueueIdleRequests counts, through the client's transport, the
// storage requests of an instance left idle with the default options:
// after one message, past the fast polling and the back-off ramp, over a
// minute. Not under -short.
func BenchmarkQueueIdleRequests(b *testing.B) {
	if testing.Short() {
		b.Skip("takes a minute and a half")
	}
	az := testutil.StartAzurite(b, repoRoot(b))
	ctx := b.Context()
	counted := newCountingTransport(nil)
	q, err := NewQueue("idleone", Storage{Name: "AzureWebJobsStorage", ConnectionString: az.ConnectionString(), Transport: counted}, nil)
	require.NoError(b, err)
	sa := newStreams("client1")
	require.NoError(b, q.Start(ctx, sa.deliver))
	defer q.Stop(context.WithoutCancel(ctx))
	_, err = q.Send(ctx, "idleone", msg(1))
	require.NoError(b, err)
	var o QueueOptions
	o.withDefaults()
	warm := o.HotWindow + 25*time.Second // past the ramp of 100 ms steps to MaxIdleWait
	const window = time.Minute
	for b.Loop() {
		time.Sleep(warm)
		before, kinds := counted.total.Load(), counted.counts()
		time.Sleep(window)
		n := counted.total.Load() - before
		b.ReportMetric(float64(n)/window.Seconds(), "requests/s")
		after := counted.counts()
		for k, v := range after {
			b.Logf("%s: %d in %s", k, v-kinds[k], window)
		}
	}
}
