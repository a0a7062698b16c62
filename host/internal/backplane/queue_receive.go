package backplane

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue/v2"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue/v2/queueerror"

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
	vis := int32(max(q.opts.VisibilityTimeout/time.Second, 1))
	batch := int32(batchSize)
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
		resp, err := q.own.DequeueMessages(ctx, &azqueue.DequeueMessagesOptions{NumberOfMessages: &batch, VisibilityTimeout: &vis})
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			failures++
			retry := retries.Next()
			if n == 0 && (failures == 1 || failures%10 == 0) {
				q.log.Warn("backplane: receiving from storage failed; retrying",
					"queue", q.QueueName(), "connection", q.conn, "failures", failures, "retryIn", retry, "error", shortError(err))
			}
			if n == 0 && queueerror.HasCode(err, queueerror.QueueNotFound) {
				q.recreate(ctx)
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
		clientMessages := false
		for _, dm := range resp.Messages {
			clientMessages = q.handle(ctx, dm) || clientMessages
		}
		if clientMessages {
			// Outcomes alone do not: nothing more comes after them
			// unless this instance sends again.
			q.sched.received()
		}
		var wait time.Duration
		switch {
		case len(resp.Messages) == int(batch):
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

// handle acts on one received message: an outcome goes to the sender
// waiting for it, a client message to its stream (its outcome back to its
// sender); an undecodable one is logged and deleted. It reports whether
// it was a client message.
func (q *Queue) handle(ctx context.Context, dm *azqueue.DequeuedMessage) bool {
	if dm == nil || dm.MessageID == nil || dm.PopReceipt == nil {
		return false
	}
	msgID, pop := *dm.MessageID, *dm.PopReceipt
	del := func() {
		q.async(func(ctx context.Context) {
			if err := q.del(ctx, msgID, pop); err != nil && ctx.Err() == nil {
				q.log.Warn("backplane: deleting a handled message failed; its copy will be dropped",
					"queue", q.QueueName(), "messageId", msgID, "error", shortError(err))
			}
		})
	}
	var text string
	if dm.MessageText != nil {
		text = *dm.MessageText
	}
	env, err := decodeEnvelope(text)
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
			body, err := q.readBlob(ctx, env.Blob)
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
		ttl := int32(q.outcomeTTL() / time.Second)
		c := q.svc.NewQueueClient(QueuePrefix + to)
		if _, err := c.EnqueueMessage(ctx, text, &azqueue.EnqueueMessageOptions{TimeToLive: &ttl}); err != nil && ctx.Err() == nil {
			q.log.Warn("backplane: telling the sender what became of a message failed", "to", to, "id", id, "outcome", out, "error", shortError(err))
		}
	})
}

func (q *Queue) readBlob(ctx context.Context, name string) ([]byte, error) {
	resp, err := q.blobs.DownloadStream(ctx, q.QueueName(), name, nil)
	if err != nil {
		return nil, shortError(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBlobBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxBlobBytes {
		return nil, fmt.Errorf("the blob is larger than %d bytes", maxBlobBytes)
	}
	return data, nil
}

// deleteBlob deletes a message blob of instance owner's container.
func (q *Queue) deleteBlob(ctx context.Context, owner, name string) {
	if q.blobs == nil {
		return
	}
	if _, err := q.blobs.DeleteBlob(ctx, QueuePrefix+owner, name, nil); err != nil && ctx.Err() == nil &&
		!hasCode(err, string(bloberror.BlobNotFound)) && !hasCode(err, string(bloberror.ContainerNotFound)) {
		q.log.Warn("backplane: deleting a message blob failed; the cleanup removes it later", "container", QueuePrefix+owner, "blob", name, "error", shortError(err))
	}
}
