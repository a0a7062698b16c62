package backplane

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

// broadcastListEvery is how long a Queue reuses its listing of the live
// instances for broadcasts: an instance started since is reached within
// that time.
const broadcastListEvery = time.Second

// broadcastTTL is how long a broadcast waits in an instance's queue.
const broadcastTTL = time.Minute

// broadcastSenders bounds the enqueues of one broadcast under way at once.
const broadcastSenders = 16

// livePeers is the listing of the live instances broadcasts go to.
type livePeers struct {
	mu  sync.Mutex
	at  time.Time
	ids []string
}

// Broadcast enqueues wire in the queue of every other instance whose
// heartbeat is fresh, all within OutcomeTimeout. A broadcast whose queue
// text would be over 64 KiB is stored once, as a blob of this instance's
// container (removed by its cleanup after MessageTTL), and each queue
// message names it. An instance whose queue is gone, or whose enqueue
// fails, does not hold up the others.
func (q *Queue) Broadcast(ctx context.Context, wire []byte) error {
	if err := checkBroadcast(wire); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, q.opts.OutcomeTimeout)
	defer cancel()
	peers, err := q.livePeers(ctx)
	if err != nil {
		return fmt.Errorf("broadcasting: listing the instances: %w", err)
	}
	if len(peers) == 0 {
		return nil
	}
	env := envelope{ID: newBroadcastID(), From: q.id, Cast: true, Wire: wire, Burst: q.burst()}
	text, err := encodeQueueText(&env)
	if err != nil {
		return err
	}
	if len(text) > maxQueueText {
		if q.blobs == nil {
			return fmt.Errorf("broadcasting: %d bytes need a blob and connection %s has no blob endpoint", len(wire), q.conn)
		}
		if err := q.upload(ctx, q.id, env.ID, wire); err != nil {
			return fmt.Errorf("broadcasting: %w", err)
		}
		env.Wire, env.Blob = nil, env.ID
		if text, err = encodeQueueText(&env); err != nil {
			return err
		}
	}
	// Not traffic for this instance's polling: nothing comes back.
	ttl := min(q.opts.MessageTTL, broadcastTTL)
	errs := make([]error, len(peers))
	slots := make(chan struct{}, broadcastSenders)
	var wg sync.WaitGroup
	for i, id := range peers {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			err := q.queues.Enqueue(ctx, QueuePrefix+id, text, ttl)
			if errors.Is(err, errQueueNotFound) {
				q.forgetPeer(id) // gone, or storage lost it: the next listing says
				return
			}
			if err != nil {
				errs[i] = fmt.Errorf("instance %s: %w", id, err)
			}
		})
	}
	wg.Wait()
	missed, first := 0, error(nil)
	for _, err := range errs {
		if err != nil {
			missed++
			if first == nil {
				first = err
			}
		}
	}
	if missed > 0 {
		return &BroadcastError{Missed: missed, Of: len(peers), Err: first}
	}
	return nil
}

// burst reports whether this broadcast follows another one of this
// instance within HotWindow, and notes it.
func (q *Queue) burst() bool {
	now := time.Now().UnixNano()
	prev := q.lastCast.Swap(now)
	return prev != 0 && time.Duration(now-prev) < q.opts.HotWindow
}

// livePeers lists the other instances whose heartbeat is fresh, reusing
// the last listing for broadcastListEvery.
func (q *Queue) livePeers(ctx context.Context) ([]string, error) {
	q.live.mu.Lock()
	defer q.live.mu.Unlock()
	if !q.live.at.IsZero() && time.Since(q.live.at) < broadcastListEvery {
		return q.live.ids, nil
	}
	items, err := q.queues.List(ctx, QueuePrefix)
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, item := range items {
		id, ok := strings.CutPrefix(item.Name, QueuePrefix)
		if !ok || id == q.id || !ValidInstanceID(id) {
			continue
		}
		if beat, ours := beatOf(item.Metadata); ours && verdict(id, beat, q.opts.Heartbeat) == nil {
			ids = append(ids, id)
		}
	}
	q.live.ids, q.live.at = ids, time.Now()
	return ids, nil
}

// forgetPeer drops an instance from the listing until the next one.
func (q *Queue) forgetPeer(id string) {
	q.live.mu.Lock()
	defer q.live.mu.Unlock()
	q.live.ids = slices.DeleteFunc(slices.Clone(q.live.ids), func(v string) bool { return v == id })
}

// takeBroadcast hands a broadcast received to OnBroadcast (reading its
// blob, within the outcome timeout, unless it is a copy) and deletes it.
func (q *Queue) takeBroadcast(ctx context.Context, env envelope, del func()) {
	defer del()
	if env.From == q.id || q.bcasts.known(env.ID) {
		return
	}
	wire := env.Wire
	if env.Blob != "" {
		var err error
		wire, err = q.readBlob(ctx, QueuePrefix+env.From, env.Blob, MaxBroadcast)
		if err != nil {
			q.log.Warn("backplane: a broadcast stored as a blob cannot be read; it is dropped",
				"queue", q.QueueName(), "from", env.From, "blob", env.Blob, "error", err)
			return
		}
	}
	q.bcasts.offer(env.ID, wire)
}
