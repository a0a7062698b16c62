package backplane

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/internal/testutil"
)

func repoRoot(t testing.TB) string {
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	require.NoError(t, err)
	return root
}

// collector records what a backplane delivers.
type collector struct {
	mu   sync.Mutex
	msgs []Message
	more chan struct{}
}

func newCollector() *collector { return &collector{more: make(chan struct{}, 1)} }

func (c *collector) deliver(_ context.Context, m Message) {
	c.mu.Lock()
	c.msgs = append(c.msgs, m)
	c.mu.Unlock()
	select {
	case c.more <- struct{}{}:
	default:
	}
}

func (c *collector) snapshot() []Message {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Message(nil), c.msgs...)
}

// waitFor waits (bounded) until n messages arrived.
func (c *collector) waitFor(t *testing.T, n int, within time.Duration) []Message {
	t.Helper()
	deadline := time.After(within)
	for {
		if got := c.snapshot(); len(got) >= n {
			return got
		}
		select {
		case <-c.more:
		case <-deadline:
			t.Fatalf("got %d messages within %s, want %d", len(c.snapshot()), within, n)
		}
	}
}

func newTestQueue(t *testing.T, id, conn string, o *QueueOptions) *Queue {
	t.Helper()
	if o == nil {
		o = &QueueOptions{}
	}
	o.ConnectionName = "AzureWebJobsStorage"
	q, err := NewQueue(id, conn, o)
	require.NoError(t, err)
	return q
}

func msg(i int) Message {
	return Message{ID: fmt.Sprintf("m%d", i), ClientID: "client1", Body: json.RawMessage(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, i))}
}

func TestQueueDeliversInOrderAndStopDeletesTheQueue(t *testing.T) {
	az := testutil.StartAzurite(t, repoRoot(t))
	ctx := t.Context()
	a := newTestQueue(t, "instancea", az.ConnectionString(), nil)
	b := newTestQueue(t, "instanceb", az.ConnectionString(), nil)
	got := newCollector()
	require.NoError(t, a.Start(ctx, got.deliver))
	require.NoError(t, b.Start(ctx, func(context.Context, Message) { t.Error("b received a message") }))

	const n = 100
	for i := range n {
		require.NoError(t, b.Send(ctx, "instancea", msg(i)))
	}
	msgs := got.waitFor(t, n, 30*time.Second)
	require.Len(t, msgs, n)
	for i, m := range msgs {
		assert.Equal(t, msg(i).ID, m.ID)
		assert.JSONEq(t, string(msg(i).Body), string(m.Body))
		assert.Equal(t, "client1", m.ClientID)
	}

	require.NoError(t, a.Stop(ctx))
	err := b.Send(ctx, "instancea", msg(n))
	require.ErrorIs(t, err, ErrUnknownInstance, "the queue of a stopped instance is deleted")
	_, kept := b.clients.Load("instancea")
	assert.False(t, kept, "the client of a gone instance is forgotten: instances come and go for as long as b runs")
	require.NoError(t, b.Stop(ctx))
}

func TestQueueDropsADuplicateDelivery(t *testing.T) {
	az := testutil.StartAzurite(t, repoRoot(t))
	ctx := t.Context()
	a := newTestQueue(t, "instancea", az.ConnectionString(), &QueueOptions{VisibilityTimeout: time.Second, MaxIdleWait: 200 * time.Millisecond})
	var deletes atomic.Int32
	realDel := a.del
	a.del = func(ctx context.Context, id, pop string) error {
		if deletes.Add(1) == 1 {
			return errors.New("injected: storage lost the delete")
		}
		return realDel(ctx, id, pop)
	}
	got := newCollector()
	require.NoError(t, a.Start(ctx, got.deliver))
	defer a.Stop(context.WithoutCancel(ctx))
	require.NoError(t, a.Send(ctx, "instancea", msg(1)))

	got.waitFor(t, 1, 10*time.Second)
	// The undeleted copy comes back after the visibility timeout; it must be
	// deleted without a second delivery.
	deadline := time.Now().Add(10 * time.Second)
	for deletes.Load() < 2 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	require.GreaterOrEqual(t, deletes.Load(), int32(2), "the message did not come back")
	assert.Len(t, got.snapshot(), 1, "a redelivered message was delivered twice")
}

func TestQueueDropsAnUndecodableMessage(t *testing.T) {
	az := testutil.StartAzurite(t, repoRoot(t))
	ctx := t.Context()
	logs := &testutil.SyncBuffer{}
	a := newTestQueue(t, "instancea", az.ConnectionString(), &QueueOptions{Logger: slog.New(slog.NewTextHandler(logs, nil))})
	got := newCollector()
	require.NoError(t, a.Start(ctx, got.deliver))
	defer a.Stop(context.WithoutCancel(ctx))

	raw, err := azqueue.NewQueueClientFromConnectionString(az.ConnectionString(), a.QueueName(), nil)
	require.NoError(t, err)
	_, err = raw.EnqueueMessage(ctx, "this is not a backplane message", nil)
	require.NoError(t, err)
	require.NoError(t, a.Send(ctx, "instancea", msg(7)))

	msgs := got.waitFor(t, 1, 10*time.Second)
	assert.Equal(t, "m7", msgs[0].ID)
	deadline := time.Now().Add(10 * time.Second)
	for {
		peek, err := raw.PeekMessages(ctx, nil)
		require.NoError(t, err)
		if len(peek.Messages) == 0 {
			break
		}
		require.True(t, time.Now().Before(deadline), "the undecodable message stayed in the queue")
		time.Sleep(100 * time.Millisecond)
	}
	assert.Contains(t, logs.String(), "does not decode")
	assert.Len(t, got.snapshot(), 1)
}

func TestQueueStartFailsNamingTheConnection(t *testing.T) {
	// Storage on a port that refuses connections (held, not listening).
	port := testutil.ReservePort(t)
	conn := fmt.Sprintf("DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=%s;QueueEndpoint=http://%s/devstoreaccount1",
		testutil.AzuriteAccountKey, port.Addr())
	q := newTestQueue(t, "instancea", conn, nil)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	err := q.Start(ctx, func(context.Context, Message) {})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "AzureWebJobsStorage")
	assert.Contains(t, err.Error(), "mcp-backplane-instancea")
	assert.NotContains(t, err.Error(), testutil.AzuriteAccountKey)
}

func TestQueueRecoversWhenStorageReturns(t *testing.T) {
	az := testutil.StartAzurite(t, repoRoot(t))
	ctx := t.Context()
	logs := &testutil.SyncBuffer{}
	a := newTestQueue(t, "instancea", az.ConnectionString(), &QueueOptions{
		Logger: slog.New(slog.NewTextHandler(logs, nil)), MaxRetryWait: 500 * time.Millisecond,
	})
	got := newCollector()
	require.NoError(t, a.Start(ctx, got.deliver))
	defer a.Stop(context.WithoutCancel(ctx))
	require.NoError(t, a.Send(ctx, "instancea", msg(1)))
	got.waitFor(t, 1, 10*time.Second)

	az.Stop()
	// The receive loop notices before storage comes back.
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Contains(c, logs.String(), "receiving from storage failed; retrying")
	}, 20*time.Second, 20*time.Millisecond)
	az.Start() // in memory: an empty account, the queue is gone

	// The loop recreates its queue; until it has, a send finds none.
	deadline := time.Now().Add(20 * time.Second)
	for {
		err := a.Send(ctx, "instancea", msg(2))
		if err == nil {
			break
		}
		require.True(t, time.Now().Before(deadline), "sending never worked again: %v", err)
		time.Sleep(200 * time.Millisecond)
	}
	msgs := got.waitFor(t, 2, 20*time.Second)
	assert.Equal(t, "m2", msgs[1].ID)
	assert.Contains(t, logs.String(), "retrying")
	assert.Contains(t, logs.String(), "reachable again")
}

func TestNewQueueConnections(t *testing.T) {
	q, err := NewQueue("inst1", "UseDevelopmentStorage=true", nil)
	require.NoError(t, err)
	assert.Equal(t, "http://127.0.0.1:10001/devstoreaccount1/", q.account, "the storage emulator's defaults")
	assert.Equal(t, "mcp-backplane-inst1", q.QueueName())

	_, err = NewQueue("inst1", "", &QueueOptions{ConnectionName: "AzureWebJobsStorage"})
	assert.ErrorContains(t, err, "connection AzureWebJobsStorage is not set")
	_, err = NewQueue("inst1", "AccountName=x", &QueueOptions{ConnectionName: "AzureWebJobsStorage"})
	assert.ErrorContains(t, err, "connection AzureWebJobsStorage")
	_, err = NewQueue("Not-Valid", DevelopmentStorage, nil)
	assert.ErrorContains(t, err, "instance id")
}
