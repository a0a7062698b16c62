package backplane

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/internal/testutil"
)

// The tests of this file run the queue backplane on memStore: what it does
// with full inboxes, dead owners, large messages, order, a storage that
// stops answering and broadcasts, without Azurite and in step with the
// test. queue_test.go and faults_test.go run it on Azurite.

// newFakeQueue returns the backplane of instance id on st (with blobs
// unless noBlobs).
func newFakeQueue(t *testing.T, id string, st *memStore, o *QueueOptions, noBlobs ...bool) *Queue {
	t.Helper()
	var opts QueueOptions
	if o != nil {
		opts = *o
	}
	if opts.OutcomeTimeout == 0 {
		opts.OutcomeTimeout = time.Minute
	}
	opts.withDefaults()
	require.True(t, ValidInstanceID(id))
	var blobs blobStore = memBlobs{st}
	if len(noBlobs) > 0 && noBlobs[0] {
		blobs = nil
	}
	return newQueue(id, "AzureWebJobsStorage", memQueues{st}, blobs, opts)
}

// startFake starts q with s and stops it when the test ends.
func startFake(t *testing.T, q *Queue, s *streams) {
	t.Helper()
	require.NoError(t, q.Start(t.Context(), s.deliver))
	t.Cleanup(func() { _ = q.Stop(context.WithoutCancel(t.Context())) })
}

// eventually waits, polling, until cond holds, for at most within.
func eventually(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %s: %s", within, what)
		}
		select {
		case <-t.Context().Done():
			t.Fatal(t.Context().Err())
		case <-time.After(time.Millisecond):
		}
	}
}

// setBeat writes a heartbeat at time at into instance id's queue.
func setBeat(t *testing.T, st *memStore, id string, at time.Time) {
	t.Helper()
	require.NoError(t, memQueues{st}.SetMetadata(t.Context(), QueuePrefix+id, beatMetadata(at)))
}

func TestFakeQueueBackplane(t *testing.T) {
	st := newMemStore()
	a := newFakeQueue(t, "confa", st, nil)
	b := newFakeQueue(t, "confb", st, nil)
	testBackplane(t, a, b, "confa", func() { a.halt() }, func(t *testing.T) {
		setBeat(t, st, "confa", time.Now().Add(-(DeadBeats+1)*a.opts.Heartbeat))
		b.peers.Clear() // its heartbeat is read again
	})
}

// A message a full inbox refused stays in the queue, held, until its
// stream took it; then it is deleted, and the rest keep their order.
func TestFakeQueueFullInboxHoldsInOrder(t *testing.T) {
	st := newMemStore()
	a := newFakeQueue(t, "fulla", st, nil)
	b := newFakeQueue(t, "fullb", st, nil)
	sa := newStreams("client1")
	sa.setRoom("client1", 0)
	startFake(t, a, sa)
	startFake(t, b, newStreams())
	for i := range 20 {
		out, err := b.Send(t.Context(), "fulla", msg(i))
		require.NoError(t, err)
		require.Equal(t, Taken, out, "held for the stream")
	}
	assert.Equal(t, 20, st.count(a.QueueName()), "held, not deleted")
	assert.Equal(t, 20, a.in.heldCount())
	sa.setRoom("client1", 5)
	sa.waitFor(t, "client1", 5, 10*time.Second)
	sa.setRoom("client1", -1)
	got := sa.waitFor(t, "client1", 20, 10*time.Second)
	assert.Equal(t, wantIDs(0, 20), ids(got))
	eventually(t, 10*time.Second, "the messages taken are deleted", func() bool { return st.count(a.QueueName()) == 0 })
}

// A full inbox whose holding is full too refuses: the sender hears Full
// and the message is deleted.
func TestFakeQueueHoldFullRefuses(t *testing.T) {
	st := newMemStore()
	a := newFakeQueue(t, "holda", st, &QueueOptions{Hold: HoldOptions{PerStream: 2}})
	b := newFakeQueue(t, "holdb", st, nil)
	sa := newStreams("client1")
	sa.setRoom("client1", 0)
	startFake(t, a, sa)
	startFake(t, b, newStreams())
	for i := range 2 {
		out, err := b.Send(t.Context(), "holda", msg(i))
		require.NoError(t, err)
		require.Equal(t, Taken, out)
	}
	out, err := b.Send(t.Context(), "holda", msg(2))
	require.NoError(t, err)
	assert.Equal(t, Full, out)
	eventually(t, 10*time.Second, "the refused message is deleted", func() bool { return st.count(a.QueueName()) == 2 })
}

// An owner whose heartbeat is late may be paused: unsure. Later it is
// dead; a swept owner (its queue gone) is gone too; while this instance's
// own queue is gone as well, storage lost them all: unsure, and the queue
// is made again.
func TestFakeQueueDeadOwner(t *testing.T) {
	st := newMemStore()
	const beat = time.Second
	a := newFakeQueue(t, "deada", st, &QueueOptions{Heartbeat: beat})
	b := newFakeQueue(t, "deadb", st, &QueueOptions{Heartbeat: beat})
	startFake(t, a, newStreams("client1"))
	startFake(t, b, newStreams())
	out, err := b.Send(t.Context(), "deada", msg(1))
	require.NoError(t, err)
	require.Equal(t, Taken, out)
	a.halt()

	setBeat(t, st, "deada", time.Now().Add(-(StaleBeats+1)*beat))
	b.peers.Clear()
	_, err = b.Send(t.Context(), "deada", msg(2))
	assert.ErrorIs(t, err, ErrUnsure)
	assert.NotErrorIs(t, err, ErrUnknownInstance, "late, maybe paused: not gone yet")

	setBeat(t, st, "deada", time.Now().Add(-(DeadBeats+1)*beat))
	_, err = b.Send(t.Context(), "deada", msg(3))
	var gone *InstanceGoneError
	require.ErrorAs(t, err, &gone)
	assert.False(t, gone.LastSeen.IsZero())

	require.NoError(t, memQueues{st}.Delete(t.Context(), a.QueueName()))
	_, err = b.Send(t.Context(), "deada", msg(4))
	assert.ErrorIs(t, err, ErrUnknownInstance, "swept: gone")

	require.NoError(t, memQueues{st}.Delete(t.Context(), b.QueueName()))
	_, err = b.Send(t.Context(), "deada", msg(5))
	assert.ErrorIs(t, err, ErrUnsure, "storage lost every queue: cannot tell")
	eventually(t, 10*time.Second, "the lost queue is made again", func() bool { return st.hasQueue(b.QueueName()) })
}

// Storage restarted empty: this instance's heartbeat makes its queue again
// (marking the loss first) just while a Send reads it to judge a peer whose
// queue is missing. The peer may be alive and making its own queue: the
// sender cannot tell, it does not call it gone. (On Azurite this
// interleaving made TestQueueStorageRestartedEmpty fail now and then.)
func TestFakeQueueRestartedEmptyWhileJudgingAPeer(t *testing.T) {
	st := newMemStore()
	a := newFakeQueue(t, "racea", st, nil)
	b := newFakeQueue(t, "raceb", st, nil)
	startFake(t, a, newStreams("client1"))
	startFake(t, b, newStreams())
	out, err := b.Send(t.Context(), "racea", msg(1))
	require.NoError(t, err)
	require.Equal(t, Taken, out)

	// The restart: every queue and container gone.
	require.NoError(t, memQueues{st}.Delete(t.Context(), a.QueueName()))
	require.NoError(t, memQueues{st}.Delete(t.Context(), b.QueueName()))
	b.peers.Clear()
	var remade atomic.Bool
	st.setHook(func(ctx context.Context, op, name string) error {
		if op == "metadata" && name == b.QueueName() && remade.CompareAndSwap(false, true) {
			b.recreate(ctx) // b's heartbeat, between missing's two reads
		}
		return nil
	})
	_, err = b.Send(t.Context(), "racea", msg(2))
	require.True(t, remade.Load(), "the send read its own queue")
	assert.ErrorIs(t, err, ErrUnsure)
	assert.NotErrorIs(t, err, ErrUnknownInstance, "a live instance called gone")
}

// A large message crosses as a blob of the receiver's container, deleted
// once taken; a lost container is made again; a blob that cannot be read
// makes the stream Full (the sender may send again); without a blob
// endpoint the sender says so.
func TestFakeQueueBlobOverflow(t *testing.T) {
	st := newMemStore()
	a := newFakeQueue(t, "bloba", st, nil)
	b := newFakeQueue(t, "blobb", st, nil)
	sa := newStreams("client1")
	startFake(t, a, sa)
	startFake(t, b, newStreams())

	out, err := b.Send(t.Context(), "bloba", largeMessage(1))
	require.NoError(t, err)
	require.Equal(t, Taken, out)
	got := sa.snapshot("client1")
	require.Len(t, got, 1)
	assert.JSONEq(t, string(largeMessage(1).Body), string(got[0].Body))
	eventually(t, 10*time.Second, "the blob is deleted once taken", func() bool { return len(st.blobNames(a.QueueName())) == 0 })
	for _, text := range st.texts(a.QueueName()) {
		assert.Less(t, len(text), maxQueueText)
	}

	require.NoError(t, memBlobs{st}.DeleteContainer(t.Context(), a.QueueName()))
	out, err = b.Send(t.Context(), "bloba", largeMessage(2))
	require.NoError(t, err)
	assert.Equal(t, Taken, out, "the lost container is made again")

	st.setHook(func(_ context.Context, op, _ string) error {
		if op == "download" {
			return errInjected
		}
		return nil
	})
	out, err = b.Send(t.Context(), "bloba", largeMessage(3))
	require.NoError(t, err)
	assert.Equal(t, Full, out, "an unreadable body: sent again later")
	st.setHook(nil)

	c := newFakeQueue(t, "blobc", st, nil, true)
	startFake(t, c, newStreams())
	_, err = c.Send(t.Context(), "bloba", largeMessage(4))
	assert.ErrorContains(t, err, "has no blob endpoint")
	assert.Len(t, sa.snapshot("client1"), 2)
}

// A message delivered again (its delete failed and its lease ran out) is
// deleted without a second delivery.
func TestFakeQueueDropsADuplicateDelivery(t *testing.T) {
	st := newMemStore()
	a := newFakeQueue(t, "dupa", st, nil)
	var deletes atomic.Int32
	st.setHook(func(_ context.Context, op, _ string) error {
		if op == "deleteMessage" && deletes.Add(1) == 1 {
			return errInjected
		}
		return nil
	})
	sa := newStreams("client1")
	startFake(t, a, sa)
	text, err := encodeQueueText(&envelope{ID: "m1", ClientID: "client1", Message: msg(1).Body})
	require.NoError(t, err)
	require.NoError(t, memQueues{st}.Enqueue(t.Context(), a.QueueName(), text, time.Hour))
	sa.waitFor(t, "client1", 1, 10*time.Second)
	eventually(t, 10*time.Second, "the first delete", func() bool { return deletes.Load() == 1 })
	st.advance(a.opts.VisibilityTimeout + time.Second) // the lease runs out
	a.kick()
	eventually(t, 10*time.Second, "the copy is deleted", func() bool { return st.count(a.QueueName()) == 0 })
	assert.Len(t, sa.snapshot("client1"), 1, "a redelivered message was delivered twice")
}

// An undecodable message is logged and deleted; the next one is taken.
func TestFakeQueueDropsAnUndecodableMessage(t *testing.T) {
	st := newMemStore()
	logs := &testutil.SyncBuffer{}
	a := newFakeQueue(t, "undeca", st, &QueueOptions{Logger: slog.New(slog.NewTextHandler(logs, nil))})
	b := newFakeQueue(t, "undecb", st, nil)
	sa := newStreams("client1")
	startFake(t, a, sa)
	startFake(t, b, newStreams())
	require.NoError(t, memQueues{st}.Enqueue(t.Context(), a.QueueName(), "this is not a backplane message", time.Hour))
	out, err := b.Send(t.Context(), "undeca", msg(7))
	require.NoError(t, err)
	assert.Equal(t, Taken, out)
	eventually(t, 10*time.Second, "the undecodable message is deleted", func() bool { return st.count(a.QueueName()) == 0 })
	assert.Contains(t, logs.String(), "does not decode")
	assert.Equal(t, []string{"m7"}, ids(sa.snapshot("client1")))
}

// deadlines records the storage calls made without a deadline, and
// holds every call of the ops named until its context ends.
type deadlines struct {
	mu      sync.Mutex
	without []string
	hold    map[string]bool
	only    map[string]bool // nil: every op is watched
	held    atomic.Int32
}

func (d *deadlines) hook(ctx context.Context, op, name string) error {
	if _, ok := ctx.Deadline(); !ok && (d.only == nil || d.only[op]) {
		d.mu.Lock()
		d.without = append(d.without, op+" "+name)
		d.mu.Unlock()
	}
	d.mu.Lock()
	hold := d.hold[op]
	d.mu.Unlock()
	if hold {
		d.held.Add(1)
		<-ctx.Done()
		return ctx.Err()
	}
	return nil
}

func (d *deadlines) missing() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.without...)
}

// The deletes and outcomes run off the receive loop; when their workers
// and buffer are full, a job runs on the loop, within the outcome
// timeout: storage that holds every delete slows the loop, never stops it.
func TestFakeQueueHeldDeletesDoNotStopTheReceiveLoop(t *testing.T) {
	st := newMemStore()
	d := &deadlines{hold: map[string]bool{"deleteMessage": true}, only: map[string]bool{"deleteMessage": true, "dequeue": true}}
	st.setHook(d.hook)
	a := newFakeQueue(t, "slowdeletes", st, &QueueOptions{OutcomeTimeout: 200 * time.Millisecond})
	a.jobCap = 1
	sa := newStreams("client1")
	startFake(t, a, sa)
	const n = 16 // more than the 8 workers and the buffer
	for i := range n {
		text, err := encodeQueueText(&envelope{ID: fmt.Sprintf("m%d", i), ClientID: "client1", Message: msg(i).Body})
		require.NoError(t, err)
		require.NoError(t, memQueues{st}.Enqueue(t.Context(), a.QueueName(), text, time.Hour))
	}
	sa.waitFor(t, "client1", n, 30*time.Second)
	assert.Greater(t, d.held.Load(), int32(asyncWorkers), "some deletes ran on the loop")
	assert.Empty(t, d.missing(), "a storage call without a deadline")
}

// A receive that storage never answers ends with the outcome timeout: the
// loop polls again and takes what comes next.
func TestFakeQueueHeldReceiveDoesNotStopTheLoop(t *testing.T) {
	st := newMemStore()
	var held atomic.Bool
	st.setHook(func(ctx context.Context, op, _ string) error {
		if op == "dequeue" && held.CompareAndSwap(false, true) {
			<-ctx.Done() // the first receive: storage that never answers
			return ctx.Err()
		}
		return nil
	})
	a := newFakeQueue(t, "heldrecv", st, &QueueOptions{OutcomeTimeout: 200 * time.Millisecond})
	sa := newStreams("client1")
	startFake(t, a, sa)
	eventually(t, 10*time.Second, "the first receive", held.Load)
	text, err := encodeQueueText(&envelope{ID: "m1", ClientID: "client1", Message: msg(1).Body})
	require.NoError(t, err)
	require.NoError(t, memQueues{st}.Enqueue(t.Context(), a.QueueName(), text, time.Hour))
	sa.waitFor(t, "client1", 1, 10*time.Second)
}

// Every storage call the backplane makes has a deadline, whoever makes
// it: sends, receives, large messages, heartbeats, the cleanup and
// broadcasts.
func TestFakeQueueEveryStorageCallHasADeadline(t *testing.T) {
	st := newMemStore()
	d := &deadlines{}
	st.setHook(d.hook)
	// Short, for a cleanup pass soon; long enough that a loaded machine
	// does not take an instance for dead (RemoveBeats).
	const beat = 100 * time.Millisecond
	got := make(chan []byte, 4)
	a := newFakeQueue(t, "deadlinea", st, &QueueOptions{Heartbeat: beat, OutcomeTimeout: 5 * time.Second,
		OnBroadcast: func(w []byte) { got <- w }})
	b := newFakeQueue(t, "deadlineb", st, &QueueOptions{Heartbeat: beat, OutcomeTimeout: 5 * time.Second})
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	sa := newStreams("client1")
	require.NoError(t, a.Start(ctx, sa.deliver))
	require.NoError(t, b.Start(ctx, newStreams().deliver))
	for i, m := range []Message{msg(1), largeMessage(2)} {
		out, err := b.Send(ctx, "deadlinea", m)
		require.NoError(t, err, "message %d", i)
		require.Equal(t, Taken, out)
	}
	require.NoError(t, b.Broadcast(ctx, []byte("change")))
	require.NoError(t, b.Broadcast(ctx, []byte(strings.Repeat("c", MaxBroadcast))))
	for range 2 {
		select {
		case <-got:
		case <-time.After(10 * time.Second):
			t.Fatal("a broadcast did not arrive")
		}
	}
	var sweeps atomic.Int32
	st.setHook(func(ctx context.Context, op, name string) error {
		if op == "listBlobs" {
			sweeps.Add(1)
		}
		return d.hook(ctx, op, name)
	})
	eventually(t, 30*time.Second, "a cleanup pass", func() bool { return sweeps.Load() > 0 })
	require.NoError(t, b.Stop(ctx))
	require.NoError(t, a.Stop(ctx))
	assert.Empty(t, d.missing(), "storage calls without a deadline")
}

// The cleanup removes the queue and container of an instance long dead,
// and the blobs of its own container older than the message time to
// live; a live instance's queue and a queue without a heartbeat stay.
func TestFakeQueueSweep(t *testing.T) {
	st := newMemStore()
	const beat = 100 * time.Millisecond
	dead := newFakeQueue(t, "deadone", st, &QueueOptions{Heartbeat: beat})
	live := newFakeQueue(t, "liveone", st, &QueueOptions{Heartbeat: beat})
	require.NoError(t, dead.Start(t.Context(), newStreams().deliver))
	startFake(t, live, newStreams())
	dead.halt()
	require.NoError(t, memQueues{st}.Create(t.Context(), QueuePrefix+"notours", nil))
	require.NoError(t, memBlobs{st}.Upload(t.Context(), live.QueueName(), "leftover", []byte("x")))

	live.sweep(t.Context(), time.Now())
	assert.True(t, st.hasQueue(dead.QueueName()), "a recent heartbeat: kept")
	assert.Equal(t, []string{"leftover"}, st.blobNames(live.QueueName()), "a recent blob: kept")

	setBeat(t, st, "deadone", time.Now().Add(-(RemoveBeats+1)*beat))
	live.sweep(t.Context(), time.Now().Add(live.opts.MessageTTL+time.Minute))
	assert.False(t, st.hasQueue(dead.QueueName()), "the dead instance's queue")
	assert.False(t, st.hasContainer(dead.QueueName()), "the dead instance's container")
	assert.True(t, st.hasQueue(live.QueueName()), "its own queue stays")
	assert.True(t, st.hasQueue(QueuePrefix+"notours"), "a queue without a heartbeat is not funchost's")
	assert.Empty(t, st.blobNames(live.QueueName()), "a blob older than the message time to live")
}

// A broadcast reaches every other live instance once, not its sender nor
// an instance found dead; a large one travels as one blob; one over
// MaxBroadcast is refused.
func TestFakeQueueBroadcast(t *testing.T) {
	st := newMemStore()
	recv := map[string]*received{}
	q := map[string]*Queue{}
	for _, id := range []string{"casta", "castb", "castc", "castdead"} {
		recv[id] = newReceived()
		q[id] = newFakeQueue(t, id, st, &QueueOptions{OnBroadcast: recv[id].add})
		startFake(t, q[id], newStreams())
	}
	q["castdead"].halt()
	setBeat(t, st, "castdead", time.Now().Add(-(DeadBeats+1)*q["castdead"].opts.Heartbeat))

	require.NoError(t, q["casta"].Broadcast(t.Context(), []byte("one")))
	large := []byte(strings.Repeat("L", MaxBroadcast))
	require.NoError(t, q["casta"].Broadcast(t.Context(), large))
	for _, id := range []string{"castb", "castc"} {
		got := recv[id].wait(t, 2)
		assert.Equal(t, "one", string(got[0]))
		assert.Equal(t, large, got[1])
	}
	assert.Equal(t, []string{"blob"}, blobKinds(st.blobNames(q["casta"].QueueName())), "a large broadcast is stored once, by its sender")
	assert.Empty(t, recv["casta"].all(), "not to the sender")
	assert.Zero(t, st.count(q["castdead"].QueueName()), "not to a dead instance")
	eventually(t, 10*time.Second, "the broadcasts are deleted", func() bool {
		return st.count(q["castb"].QueueName()) == 0 && st.count(q["castc"].QueueName()) == 0
	})

	err := q["casta"].Broadcast(t.Context(), make([]byte, MaxBroadcast+1))
	assert.ErrorIs(t, err, ErrBroadcastTooLarge)
	assert.ErrorIs(t, q["casta"].Broadcast(t.Context(), nil), ErrBroadcastTooLarge)
}

func blobKinds(names []string) []string {
	out := make([]string, len(names))
	for i := range names {
		out[i] = "blob"
	}
	return out
}

// A broadcast delivered again (its delete failed, its lease ran out)
// reaches OnBroadcast once.
func TestFakeQueueBroadcastAtMostOnce(t *testing.T) {
	st := newMemStore()
	var deletes atomic.Int32
	st.setHook(func(_ context.Context, op, name string) error {
		if op == "deleteMessage" && name == QueuePrefix+"onceb" && deletes.Add(1) == 1 {
			return errInjected
		}
		return nil
	})
	rb := newReceived()
	a := newFakeQueue(t, "oncea", st, nil)
	b := newFakeQueue(t, "onceb", st, &QueueOptions{OnBroadcast: rb.add})
	startFake(t, a, newStreams())
	startFake(t, b, newStreams())
	require.NoError(t, a.Broadcast(t.Context(), []byte("once")))
	rb.wait(t, 1)
	eventually(t, 10*time.Second, "the first delete", func() bool { return deletes.Load() == 1 })
	st.advance(b.opts.VisibilityTimeout + time.Second)
	b.kick()
	eventually(t, 10*time.Second, "the copy is deleted", func() bool { return st.count(b.QueueName()) == 0 })
	assert.Len(t, rb.all(), 1)
}

// An instance whose queue storage does not answer does not hold up the
// broadcast to the others: they get it, and Broadcast returns within its
// outcome timeout saying how many were missed. An OnBroadcast that stalls
// does not hold up its instance's receive loop.
func TestFakeQueueBroadcastStalledInstance(t *testing.T) {
	st := newMemStore()
	var stallC atomic.Bool
	stallC.Store(true)
	st.setHook(func(ctx context.Context, op, name string) error {
		if op == "enqueue" && name == QueuePrefix+"stallc" && stallC.Load() {
			<-ctx.Done()
			return ctx.Err()
		}
		return nil
	})
	rb := newReceived()
	release := make(chan struct{})
	defer close(release)
	var stalled atomic.Int32
	a := newFakeQueue(t, "stalla", st, &QueueOptions{OutcomeTimeout: 300 * time.Millisecond})
	b := newFakeQueue(t, "stallb", st, &QueueOptions{OnBroadcast: rb.add})
	c := newFakeQueue(t, "stallc", st, nil)
	d := newFakeQueue(t, "stalld", st, &QueueOptions{OnBroadcast: func([]byte) { stalled.Add(1); <-release }})
	sd := newStreams("client1")
	for _, q := range []*Queue{a, b, c} {
		startFake(t, q, newStreams())
	}
	startFake(t, d, sd)
	err := a.Broadcast(t.Context(), []byte("x"))
	var be *BroadcastError
	require.ErrorAs(t, err, &be)
	assert.Equal(t, 1, be.Missed)
	assert.Equal(t, 3, be.Of)
	rb.wait(t, 1)

	stallC.Store(false)
	for range broadcastBuffer + 10 {
		_ = a.Broadcast(t.Context(), []byte("y"))
	}
	out, err := b.Send(t.Context(), "stalld", msg(1))
	require.NoError(t, err)
	assert.Equal(t, Taken, out, "the receive loop goes on while OnBroadcast stalls")
	assert.Equal(t, int32(1), stalled.Load())
	assert.Positive(t, d.bcasts.dropped.Load(), "beyond the buffer, broadcasts are dropped")
}

// received collects what OnBroadcast gets.
type received struct {
	mu   sync.Mutex
	got  [][]byte
	more chan struct{}
}

func newReceived() *received { return &received{more: make(chan struct{}, 1)} }

func (r *received) add(w []byte) {
	r.mu.Lock()
	r.got = append(r.got, w)
	r.mu.Unlock()
	select {
	case r.more <- struct{}{}:
	default:
	}
}

func (r *received) all() [][]byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([][]byte(nil), r.got...)
}

// wait waits (bounded) until n broadcasts arrived.
func (r *received) wait(t testing.TB, n int) [][]byte {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		if got := r.all(); len(got) >= n {
			return got
		}
		select {
		case <-r.more:
		case <-deadline:
			t.Fatalf("%d broadcasts arrived, want %d", len(r.all()), n)
		}
	}
}

// sendDeadline watches the storage calls of one Send: the first call
// carries the Send's deadline, and a later call whose context has no
// deadline, or a later one, would hold the POST waiting for the Send past
// its deadline. Such a call is recorded and fails at once; the ops in
// pause hold until their context ends, as a storage that stopped
// answering.
type sendDeadline struct {
	pause map[string]bool

	mu      sync.Mutex
	end     time.Time // the first call's deadline
	escaped []string
}

func (s *sendDeadline) hook(ctx context.Context, op, name string) error {
	d, ok := ctx.Deadline()
	s.mu.Lock()
	if s.end.IsZero() && ok {
		s.end = d
	}
	escaped := !ok || d.After(s.end)
	if escaped {
		s.escaped = append(s.escaped, op+" "+name)
	}
	s.mu.Unlock()
	if escaped {
		return errInjected
	}
	if s.pause[op] {
		<-ctx.Done()
		return ctx.Err()
	}
	return nil
}

func (s *sendDeadline) escapes() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.escaped...)
}

// A Send and every storage call it makes end by its deadline, whatever
// storage does meanwhile: a store that stops answering right after a large
// message's body was stored (the body stays: the message may have reached
// the queue, and its owner deletes it once read, its cleanup otherwise),
// and a storage that lost every queue (this instance's queue is made again
// off the Send). The sender is not started: every storage call made while
// the Send runs is the Send's, and no worker is free to take a job from it.
func TestFakeQueueSendEndsByItsDeadline(t *testing.T) {
	cases := []struct {
		name   string
		owner  bool // the owner's queue and container exist
		pause  string
		m      Message
		want   error
		remain []string // the blobs left in the owner's container
	}{
		{name: "store paused after a large body was stored", owner: true, pause: "enqueue", m: largeMessage(1),
			want: ErrNoOutcome, remain: []string{largeMessage(1).ID}},
		{name: "storage lost every queue", m: msg(2), want: ErrUnsure},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := newMemStore()
			if tc.owner {
				require.NoError(t, memQueues{st}.Create(t.Context(), QueuePrefix+"deadowner", beatMetadata(time.Now())))
				require.NoError(t, memBlobs{st}.CreateContainer(t.Context(), QueuePrefix+"deadowner"))
			}
			b := newFakeQueue(t, "deadsender", st, &QueueOptions{OutcomeTimeout: 300 * time.Millisecond})
			watch := &sendDeadline{pause: map[string]bool{tc.pause: true}}
			st.setHook(watch.hook)
			_, err := b.Send(t.Context(), "deadowner", tc.m)
			st.setHook(nil)
			require.ErrorIs(t, err, tc.want)
			assert.Empty(t, watch.escapes(), "storage calls of the Send that outlive its deadline")
			if tc.owner {
				assert.Equal(t, tc.remain, st.blobNames(QueuePrefix+"deadowner"))
			}
		})
	}
}

// A broadcast that follows another of its sender within HotWindow says so,
// and its receiver takes it as traffic (it polls fast for the rest of the
// burst, a task's states); a lone one (a timer's change) is not traffic.
func TestFakeQueueBroadcastMarksBursts(t *testing.T) {
	st := newMemStore()
	a := newFakeQueue(t, "bursta", st, &QueueOptions{HotWindow: time.Hour})
	b := newFakeQueue(t, "burstb", st, nil)
	require.NoError(t, memQueues{st}.Create(t.Context(), b.QueueName(), beatMetadata(time.Now())))
	require.NoError(t, a.Broadcast(t.Context(), []byte("lone")))
	require.NoError(t, a.Broadcast(t.Context(), []byte("burst")))
	msgs, err := memQueues{st}.Dequeue(t.Context(), b.QueueName(), batchSize, time.Minute)
	require.NoError(t, err)
	require.Len(t, msgs, 2)
	var traffic []bool
	for _, m := range msgs {
		traffic = append(traffic, b.handle(t.Context(), m))
	}
	assert.Equal(t, []bool{false, true}, traffic, "traffic for the receiver's polling")
}

// opCounter counts storage calls by op.
type opCounter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *opCounter) hook(_ context.Context, op, _ string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[op]++
	return nil
}

func (c *opCounter) counts() (map[string]int, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	total := 0
	for _, v := range c.n {
		total += v
	}
	return maps.Clone(c.n), total
}

// Idle instances cost storage what their timers cost, and a change
// broadcast what its messages cost: three instances that each broadcast a
// change at the same moment once a minute (the sample's clock, on every
// instance) make no more requests than their idle polls, heartbeats and
// cleanup passes, plus for each broadcast one listing, an enqueue for
// every other instance and its delete there. A lone broadcast does not
// switch its receivers into fast polling. Time runs ten times faster than
// with the defaults (a 200 ms idle poll, a 1.5 s heartbeat, a 6 s minute);
// timers that fire late make fewer requests, never more.
func TestFakeQueueIdleInstancesStayIdle(t *testing.T) {
	const (
		n      = 3
		scale  = 10
		minute = time.Minute / scale
	)
	opts := QueueOptions{
		MaxIdleWait:    DefaultMaxIdleWait / scale,
		HotPause:       DefaultHotPause / scale,
		HotMaxWait:     DefaultHotMaxWait / scale,
		HotWindow:      DefaultHotWindow / scale,
		Heartbeat:      DefaultHeartbeat / scale,
		OutcomeTimeout: 5 * time.Second,
	}
	st := newMemStore()
	qs := make([]*Queue, n)
	recv := make([]*received, n)
	for i := range qs {
		o := opts
		recv[i] = newReceived()
		o.OnBroadcast = recv[i].add
		qs[i] = newFakeQueue(t, fmt.Sprintf("idle%d", i), st, &o)
		startFake(t, qs[i], newStreams())
	}
	// The first polls ramp up from HotPause to the idle pause.
	eventually(t, 30*time.Second, "the polls ramped up to the idle pause", func() bool {
		for _, q := range qs {
			if nextPause(q.sched) < opts.MaxIdleWait {
				return false
			}
		}
		return true
	})

	count := &opCounter{}
	st.setHook(count.hook)
	start := time.Now()
	time.Sleep(minute / 12)
	var wg sync.WaitGroup
	for _, q := range qs {
		wg.Go(func() { assert.NoError(t, q.Broadcast(t.Context(), []byte("the minute"))) })
	}
	wg.Wait()
	for i := range qs {
		recv[i].wait(t, n-1)
	}
	time.Sleep(time.Until(start.Add(minute)))
	byOp, total := count.counts()
	elapsed := time.Since(start)
	st.setHook(nil)

	per := func(every time.Duration) int { return int(elapsed/every) + 1 }
	polls := per(opts.MaxIdleWait)
	beats := per(opts.Heartbeat)
	sweeps := 3 * per(CleanupBeats*opts.Heartbeat/2) // queues, containers, blobs
	casts := 1 + 2*(n-1)                             // a listing; an enqueue and a delete per other instance
	budget := n * (polls + beats + sweeps + casts)
	t.Logf("%d instances, %s (a minute at %dx): %d requests %v, budget %d; %.2f per idle second per instance at the defaults",
		n, elapsed.Round(time.Millisecond), scale, total, byOp, budget, float64(total)/n/(elapsed.Seconds()*scale))
	assert.LessOrEqual(t, total, budget, "requests of idle instances: %v", byOp)
}

// nextPause is the pause s gives after the next empty poll.
func nextPause(s *pollSchedule) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pause
}
