package backplane

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue/v2"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/internal/testutil"
)

// The tests of this file put a backplane through the storage faults of
// several-instance deployments, with real Azurite and redis-server: storage
// held by a proxy, restarted empty, an instance's records removed as if it
// had been swept as dead, a heartbeat late.

// stallBound is how long a Send may take beyond its outcome timeout in
// these tests before it counts as hanging: the storage client's own
// per-try timeout (10 s) and retries must not add to the outcome timeout.
const stallBound = 4 * time.Second

// sendAll sends one message to instance to from each of n goroutines and
// returns their errors, or ok false when one of them is still running
// after within.
func sendAll(ctx context.Context, b Backplane, to string, n int, within time.Duration) ([]error, bool) {
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			_, errs[i] = b.Send(ctx, to, Message{ID: fmt.Sprintf("stall%d", i), ClientID: "client1", Body: json.RawMessage(`{}`)})
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
		return errs, true
	case <-time.After(within):
		return nil, false
	}
}

// proxiedStorage is a connection to az whose queue and blob traffic
// passes through proxies the test can hold.
func proxiedStorage(t *testing.T, az *testutil.Azurite) (Storage, *testutil.HoldProxy, *testutil.HoldProxy) {
	qp := testutil.StartHoldProxy(t, "127.0.0.1:"+strconv.Itoa(az.Port))
	bp := testutil.StartHoldProxy(t, "127.0.0.1:"+strconv.Itoa(az.BlobPort))
	cs := fmt.Sprintf("DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=%s;QueueEndpoint=http://%s/devstoreaccount1;BlobEndpoint=http://%s/devstoreaccount1",
		testutil.AzuriteAccountKey, qp.Addr(), bp.Addr())
	return Storage{ConnectionString: cs}, qp, bp
}

// TestQueueStorageHeld: storage that stops answering (held by a proxy)
// does not hold a Send past its outcome timeout, whether the peer's
// heartbeat was read already or must be read first, with several Sends
// at once; none claims the instance is gone.
func TestQueueStorageHeld(t *testing.T) {
	az := testutil.StartAzurite(t, repoRoot(t))
	ctx := t.Context()
	const outcome = 2 * time.Second
	a := newTestQueue(t, "helda", Storage{ConnectionString: az.ConnectionString()}, nil)
	c := newTestQueue(t, "heldc", Storage{ConnectionString: az.ConnectionString()}, nil)
	st, qp, bp := proxiedStorage(t, az)
	b := newTestQueue(t, "heldb", st, &QueueOptions{OutcomeTimeout: outcome})
	for _, q := range []*Queue{a, c, b} {
		require.NoError(t, q.Start(ctx, newStreams("client1").deliver))
		defer func() {
			qp.Release()
			bp.Release()
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
			defer cancel()
			_ = q.Stop(sctx)
		}()
	}
	out, err := b.Send(ctx, "helda", msg(1))
	require.NoError(t, err)
	require.Equal(t, Taken, out)

	qp.Hold()
	bp.Hold()
	for _, to := range []string{"helda", "heldc"} { // heartbeat known, and to be read
		errs, ok := sendAll(ctx, b, to, 4, outcome+stallBound)
		require.True(t, ok, "a Send to %s still runs %s after its outcome timeout of %s", to, stallBound, outcome)
		for _, err := range errs {
			assert.Error(t, err)
			assert.NotErrorIs(t, err, ErrUnknownInstance, "storage that does not answer says nothing of the instance")
		}
	}
	qp.Release()
	bp.Release()
	require.EventuallyWithT(t, func(ct *assert.CollectT) {
		out, err := b.Send(ctx, "heldc", msg(2))
		assert.NoError(ct, err)
		assert.Equal(ct, Taken, out)
	}, 30*time.Second, 100*time.Millisecond)
}

// largeMessage is a message over the 64 KiB of a queue message: it
// crosses as a blob.
func largeMessage(i int) Message {
	return Message{ID: fmt.Sprintf("large%d", i), ClientID: "client1",
		Body: json.RawMessage(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("x", 100<<10) + `"}}`)}
}

// sendUntilTaken sends messages made by mk until one is taken, for at
// most within. Every error is returned, in order.
func sendUntilTaken(t *testing.T, b Backplane, to string, mk func(int) Message, within time.Duration) []error {
	t.Helper()
	var errs []error
	deadline := time.Now().Add(within)
	for i := 0; time.Now().Before(deadline); i++ {
		out, err := b.Send(t.Context(), to, mk(i))
		if err == nil && out == Taken {
			return errs
		}
		if err == nil {
			err = fmt.Errorf("outcome %s", out)
		}
		errs = append(errs, err)
		select {
		case <-t.Context().Done():
			return errs
		case <-time.After(100 * time.Millisecond):
		}
	}
	t.Fatalf("nothing taken within %s: %d errors, the last %v", within, len(errs), errs[len(errs)-1])
	return errs
}

// TestQueueRecreatesWhatWasSwept: the queue and the blob container of a
// live instance are removed, as another instance's sweep removes those of
// an instance paused past RemoveBeats heartbeats. Once it runs again, it
// takes messages again, large ones (blobs) included, with no restart.
func TestQueueRecreatesWhatWasSwept(t *testing.T) {
	az := testutil.StartAzurite(t, repoRoot(t))
	ctx := t.Context()
	st := Storage{ConnectionString: az.ConnectionString()}
	a := newTestQueue(t, "sweptowner", st, &QueueOptions{OutcomeTimeout: 5 * time.Second})
	b := newTestQueue(t, "sweptsender", st, &QueueOptions{OutcomeTimeout: 5 * time.Second})
	require.NoError(t, a.Start(ctx, newStreams("client1").deliver))
	defer a.Stop(context.WithoutCancel(ctx))
	require.NoError(t, b.Start(ctx, newStreams().deliver))
	defer b.Stop(context.WithoutCancel(ctx))
	out, err := b.Send(ctx, "sweptowner", largeMessage(-1))
	require.NoError(t, err)
	require.Equal(t, Taken, out)

	require.NoError(t, b.queues.Delete(ctx, a.QueueName()))
	require.NoError(t, b.blobs.DeleteContainer(ctx, a.QueueName()))

	sendUntilTaken(t, b, "sweptowner", largeMessage, 60*time.Second)
	for i := range 3 {
		out, err := b.Send(ctx, "sweptowner", largeMessage(100+i))
		require.NoError(t, err)
		assert.Equal(t, Taken, out)
	}
}

// TestQueueStorageRestartedEmpty: Azurite restarts without its data while
// two instances run. Their senders never call the other instance gone
// (that would end a live stream for its client): they answer "cannot
// tell" until the instances have made their queues and containers again,
// then messages, large ones too, are taken.
func TestQueueStorageRestartedEmpty(t *testing.T) {
	az := testutil.StartAzurite(t, repoRoot(t))
	ctx := t.Context()
	st := Storage{ConnectionString: az.ConnectionString()}
	o := func() *QueueOptions {
		return &QueueOptions{OutcomeTimeout: 5 * time.Second, MaxRetryWait: 500 * time.Millisecond}
	}
	a := newTestQueue(t, "emptyowner", st, o())
	b := newTestQueue(t, "emptysender", st, o())
	require.NoError(t, a.Start(ctx, newStreams("client1").deliver))
	defer a.Stop(context.WithoutCancel(ctx))
	require.NoError(t, b.Start(ctx, newStreams().deliver))
	defer b.Stop(context.WithoutCancel(ctx))
	out, err := b.Send(ctx, "emptyowner", msg(1))
	require.NoError(t, err)
	require.Equal(t, Taken, out)

	az.Stop()
	az.Start()

	errs := sendUntilTaken(t, b, "emptyowner", func(i int) Message { return msg(10 + i) }, 60*time.Second)
	for _, err := range errs {
		assert.NotErrorIs(t, err, ErrUnknownInstance, "a live instance called gone")
	}
	errs = sendUntilTaken(t, b, "emptyowner", largeMessage, 60*time.Second)
	for _, err := range errs {
		assert.NotErrorIs(t, err, ErrUnknownInstance, "a live instance called gone")
	}
}

// TestQueueLateHeartbeat: an instance whose heartbeat is late by more than
// StaleBeats heartbeats may be paused rather than dead: a sender cannot
// tell (not ErrUnknownInstance); late by more than DeadBeats it is gone.
func TestQueueLateHeartbeat(t *testing.T) {
	az := testutil.StartAzurite(t, repoRoot(t))
	ctx := t.Context()
	st := Storage{ConnectionString: az.ConnectionString()}
	const beat = time.Second
	a := newTestQueue(t, "lateowner", st, &QueueOptions{Heartbeat: beat})
	b := newTestQueue(t, "latesender", st, &QueueOptions{Heartbeat: beat, OutcomeTimeout: 3 * time.Second})
	require.NoError(t, a.Start(ctx, newStreams("client1").deliver))
	require.NoError(t, b.Start(ctx, newStreams().deliver))
	defer b.Stop(context.WithoutCancel(ctx))
	a.halt()
	raw, err := azqueue.NewQueueClientFromConnectionString(az.ConnectionString(), a.QueueName(), nil)
	require.NoError(t, err)

	_, err = raw.SetMetadata(ctx, &azqueue.SetMetadataOptions{Metadata: toPtrs(beatMetadata(time.Now().Add(-(StaleBeats + 1) * beat)))})
	require.NoError(t, err)
	_, err = b.Send(ctx, "lateowner", msg(1))
	require.Error(t, err)
	assert.NotErrorIs(t, err, ErrUnknownInstance, "late, maybe paused: not gone yet")
	assert.ErrorIs(t, err, ErrUnsure)

	_, err = raw.SetMetadata(ctx, &azqueue.SetMetadataOptions{Metadata: toPtrs(beatMetadata(time.Now().Add(-(DeadBeats + 1) * beat)))})
	require.NoError(t, err)
	_, err = b.Send(ctx, "lateowner", msg(2))
	assert.ErrorIs(t, err, ErrUnknownInstance)
}

// TestRedisFaults: Redis held by a proxy, emptied, and an owner's
// heartbeat late.
func TestRedisFaults(t *testing.T) {
	srv := testutil.StartRedis(t, testutil.RedisOptions{})
	ctx := t.Context()
	raw := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer raw.Close()
	const beat = time.Second

	t.Run("held: no Send past its outcome timeout", func(t *testing.T) {
		const outcome = 2 * time.Second
		p := testutil.StartHoldProxy(t, srv.Addr())
		a := newTestRedis(t, "rheldowner", RedisConnection{ConnectionString: srv.Addr()}, &RedisOptions{Heartbeat: beat})
		b := newTestRedis(t, "rheldsender", RedisConnection{ConnectionString: p.Addr()}, &RedisOptions{Heartbeat: beat, OutcomeTimeout: outcome})
		require.NoError(t, a.Start(ctx, newStreams("client1").deliver))
		defer a.Stop(context.WithoutCancel(ctx))
		require.NoError(t, b.Start(ctx, newStreams().deliver))
		defer func() {
			p.Release()
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
			defer cancel()
			_ = b.Stop(sctx)
		}()
		out, err := b.Send(ctx, "rheldowner", msg(1))
		require.NoError(t, err)
		require.Equal(t, Taken, out)
		p.Hold()
		errs, ok := sendAll(ctx, b, "rheldowner", 4, outcome+stallBound)
		require.True(t, ok, "a Send still runs %s after its outcome timeout of %s", stallBound, outcome)
		for _, err := range errs {
			assert.Error(t, err)
			assert.NotErrorIs(t, err, ErrUnknownInstance)
		}
	})

	t.Run("emptied: never gone, then taken", func(t *testing.T) {
		a := newTestRedis(t, "remptyowner", RedisConnection{ConnectionString: srv.Addr()}, &RedisOptions{Heartbeat: beat})
		b := newTestRedis(t, "remptysender", RedisConnection{ConnectionString: srv.Addr()}, &RedisOptions{Heartbeat: beat, OutcomeTimeout: 5 * time.Second})
		require.NoError(t, a.Start(ctx, newStreams("client1").deliver))
		defer a.Stop(context.WithoutCancel(ctx))
		require.NoError(t, b.Start(ctx, newStreams().deliver))
		defer b.Stop(context.WithoutCancel(ctx))
		out, err := b.Send(ctx, "remptyowner", msg(1))
		require.NoError(t, err)
		require.Equal(t, Taken, out)
		require.NoError(t, raw.FlushAll(ctx).Err())
		errs := sendUntilTaken(t, b, "remptyowner", func(i int) Message { return msg(10 + i) }, 30*time.Second)
		for _, err := range errs {
			assert.NotErrorIs(t, err, ErrUnknownInstance, "a live instance called gone")
		}
	})

	t.Run("a late heartbeat: unsure, then gone", func(t *testing.T) {
		a := newTestRedis(t, "rlateowner", RedisConnection{ConnectionString: srv.Addr()}, &RedisOptions{Heartbeat: beat})
		b := newTestRedis(t, "rlatesender", RedisConnection{ConnectionString: srv.Addr()}, &RedisOptions{Heartbeat: beat, OutcomeTimeout: 3 * time.Second})
		require.NoError(t, a.Start(ctx, newStreams("client1").deliver))
		require.NoError(t, b.Start(ctx, newStreams().deliver))
		defer b.Stop(context.WithoutCancel(ctx))
		a.halt()
		late := func(beats time.Duration) {
			ms := time.Now().Add(-beats * beat).UnixMilli()
			require.NoError(t, raw.Set(ctx, redisAlive("rlateowner"), strconv.FormatInt(ms, 10), time.Minute).Err())
		}
		late(StaleBeats + 1)
		_, err := b.Send(ctx, "rlateowner", msg(1))
		require.Error(t, err)
		assert.NotErrorIs(t, err, ErrUnknownInstance, "late, maybe paused: not gone yet")
		assert.ErrorIs(t, err, ErrUnsure)
		late(DeadBeats + 1)
		_, err = b.Send(ctx, "rlateowner", msg(2))
		assert.ErrorIs(t, err, ErrUnknownInstance)
	})
}
