package backplane

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/funcmcp/funcmcp/host/internal/backoff"
)

// receive polls the instance's queue until ctx is done. Receiver 0 always
// runs, on the pollSchedule: each empty poll doubles the pause from
// HotPause (after messages received, or a message sent) up to HotMaxWait
// within HotWindow of the last message, then up to MaxIdleWait. A full
// batch is followed by the next poll at once. While
// storage fails it waits 200 ms doubling up to MaxRetryWait. The others
// poll beside it only while messages flow (HotWindow).
func (q *Queue) receive(ctx context.Context, n int) {
	failures := 0
	retries := backoff.Doubling{First: 200 * time.Millisecond, Max: q.opts.MaxRetryWait}
	for ctx.Err() == nil {
		if n > 0 && !q.hot() {
			select {
			case <-ctx.Done():
				return
			case <-q.kicked():
			}
			continue
		}
		msgs, err := q.dequeue(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			failures++
			retry := retries.Next()
			if n == 0 && (failures == 1 || failures%10 == 0) {
				q.log.Warn("backplane: receiving from storage failed; retrying",
					"queue", q.QueueName(), "connection", q.conn, "failures", failures, "retryIn", retry, "error", err)
			}
			if n == 0 && errors.Is(err, errQueueNotFound) {
				q.bounded(ctx, q.recreate)
			}
			backoff.Sleep(ctx, retry)
			continue
		}
		if failures > 0 {
			if n == 0 {
				q.log.Info("backplane: storage reachable again", "queue", q.QueueName(), "failures", failures)
			}
			failures = 0
			retries.Reset()
		}
		traffic := false
		for _, dm := range msgs {
			traffic = q.handle(ctx, dm) || traffic
		}
		if traffic {
			// Outcomes alone do not: nothing more comes after them
			// unless this instance sends again.
			q.sched.received()
		}
		var wait time.Duration
		switch {
		case len(msgs) == batchSize:
			continue // more may wait
		case n > 0:
			continue // an extra receiver: polls while hot, without back-off
		default:
			wait = q.sched.next(q.waiting.count() > 0)
		}
		// A message sent meanwhile (a kick) may bring the next poll
		// forward, never put it off: kicks may come faster than polls.
		until := time.Now().Add(wait)
		for q.pause(ctx, time.Until(until)) {
			if sooner := time.Now().Add(q.sched.next(true)); sooner.Before(until) {
				until = sooner
			}
		}
	}
}

// dequeue receives the next batch of this instance's queue, within the
// outcome timeout: a storage that does not answer never holds the loop.
func (q *Queue) dequeue(ctx context.Context) ([]queued, error) {
	dctx, cancel := context.WithTimeout(ctx, q.opts.OutcomeTimeout)
	defer cancel()
	return q.queues.Dequeue(dctx, q.QueueName(), batchSize, max(q.opts.VisibilityTimeout, time.Second))
}

// bounded runs f on the receive loop within the outcome timeout.
func (q *Queue) bounded(ctx context.Context, f func(context.Context)) {
	bctx, cancel := context.WithTimeout(ctx, q.opts.OutcomeTimeout)
	defer cancel()
	f(bctx)
}

// handle acts on one received message: an outcome goes to the sender
// waiting for it, a broadcast to OnBroadcast, a client message to its
// stream (its outcome back to its sender); an undecodable one is logged
// and deleted. It reports whether it was a client message or a broadcast
// within a burst: traffic that more is likely to follow.
func (q *Queue) handle(ctx context.Context, dm queued) bool {
	msgID, pop := dm.ID, dm.Pop
	del := func() {
		q.async(func(ctx context.Context) {
			if err := q.queues.DeleteMessage(ctx, q.QueueName(), msgID, pop); err != nil && ctx.Err() == nil {
				q.log.Warn("backplane: deleting a handled message failed; its copy will be dropped",
					"queue", q.QueueName(), "messageId", msgID, "error", err)
			}
		})
	}
	env, err := decodeEnvelope(dm.Text)
	if err != nil {
		q.log.Error("backplane: dropping a message that does not decode", "queue", q.QueueName(), "messageId", msgID, "error", err)
		del()
		return false
	}
	if env.isOutcome() {
		// Not deleted: an outcome lives less long than the visibility
		// timeout, so it expires before it could be received again.
		out, _ := parseOutcome(env.Outcome)
		q.waiting.resolve(env.ID, out)
		return false
	}
	if env.isBroadcast() {
		// Traffic as a client message is only within a burst (a task's
		// states): the next is found within HotMaxWait. A lone one (a
		// timer's change, every instance's once a minute) costs its
		// receive and delete, not a second of fast polls.
		q.takeBroadcast(ctx, env, del)
		return env.Burst
	}
	q.touch()
	m := env.message()
	if m.ID == "" {
		m.ID = msgID
	}
	finish := del
	if env.Blob != "" {
		finish = func() {
			del()
			q.async(func(ctx context.Context) { q.deleteBlob(ctx, q.id, env.Blob) })
		}
		if !q.in.known(m.ID) {
			body, err := q.readBlob(ctx, q.QueueName(), env.Blob, maxBlobBytes)
			if err != nil {
				q.log.Error("backplane: the body of a large message cannot be read; its sender is told the stream is full",
					"queue", q.QueueName(), "blob", env.Blob, "client", m.ClientID, "error", err)
				finish()
				q.sendOutcome(env.From, m.ID, Full)
				return true
			}
			m.Body = body
		}
	}
	out, answer := q.in.offer(ctx, m, finish)
	if answer {
		q.sendOutcome(env.From, m.ID, out)
	}
	return true
}

// outcomeTTL is how long an outcome message lives: as long as its sender
// waits for it, and less than the visibility timeout, so that the
// receiver need not delete it (a storage request per message).
func (q *Queue) outcomeTTL() time.Duration {
	return max(time.Second, min(q.opts.OutcomeTimeout+5*time.Second, q.opts.VisibilityTimeout-time.Second))
}

// sendOutcome tells instance to (when someone waits there) what became of
// message id.
func (q *Queue) sendOutcome(to, id string, out Outcome) {
	if to == "" || !ValidInstanceID(to) {
		return
	}
	if to == q.id {
		q.waiting.resolve(id, out)
		return
	}
	q.async(func(ctx context.Context) {
		text, err := encodeQueueText(&envelope{ID: id, Outcome: out.String()})
		if err != nil {
			return
		}
		if err := q.queues.Enqueue(ctx, QueuePrefix+to, text, q.outcomeTTL()); err != nil && ctx.Err() == nil {
			q.log.Warn("backplane: telling the sender what became of a message failed", "to", to, "id", id, "outcome", out, "error", err)
		}
	})
}

// readBlob reads a blob of container, of at most limit bytes, within the
// outcome timeout (it runs on the receive loop).
func (q *Queue) readBlob(ctx context.Context, container, name string, limit int64) ([]byte, error) {
	if q.blobs == nil {
		return nil, errors.New("the connection has no blob endpoint")
	}
	rctx, cancel := context.WithTimeout(ctx, q.opts.OutcomeTimeout)
	defer cancel()
	data, err := q.blobs.Download(rctx, container, name, limit)
	if errors.Is(err, errTooLarge) {
		return nil, fmt.Errorf("the blob is larger than %d bytes", limit)
	}
	return data, err
}

// deleteBlob deletes a message blob of instance owner's container.
func (q *Queue) deleteBlob(ctx context.Context, owner, name string) {
	if q.blobs == nil {
		return
	}
	if err := q.blobs.DeleteBlob(ctx, QueuePrefix+owner, name); err != nil && ctx.Err() == nil &&
		!errors.Is(err, errBlobNotFound) && !errors.Is(err, errContainerNotFound) {
		q.log.Warn("backplane: deleting a message blob failed; the cleanup removes it later", "container", QueuePrefix+owner, "blob", name, "error", err)
	}
}
