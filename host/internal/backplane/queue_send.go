package backplane

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Send stores m in the queue of instance to (a large body in a blob of its
// container) and waits for its outcome, all within OutcomeTimeout.
func (q *Queue) Send(ctx context.Context, to string, m Message) (Outcome, error) {
	if err := checkSend(to, m); err != nil {
		return 0, err
	}
	sctx, cancel := context.WithTimeout(ctx, q.opts.OutcomeTimeout)
	defer cancel()
	out, err := q.send(sctx, to, m)
	return out, sendError(ctx, sctx, to, err)
}

func (q *Queue) send(ctx context.Context, to string, m Message) (Outcome, error) {
	if _, err := q.alive(ctx, to); err != nil {
		return 0, err
	}
	env := envelope{ID: m.ID, ClientID: m.ClientID, Message: m.Body, From: q.id}
	env.stamp(&m)
	text, err := encodeQueueText(&env)
	if err != nil {
		return 0, err
	}
	blob := ""
	if len(text) > maxQueueText {
		if q.blobs == nil {
			return 0, fmt.Errorf("a message of %d bytes needs a blob and connection %s has no blob endpoint", len(m.Body), q.conn)
		}
		blob = m.ID
		if err := q.upload(ctx, to, blob, m.Body); err != nil {
			return 0, err
		}
		env.Message, env.Blob = nil, blob
		if text, err = encodeQueueText(&env); err != nil {
			return 0, err
		}
	}
	ch := q.waiting.add(m.ID)
	defer q.waiting.remove(m.ID)
	q.touch()
	start := time.Now()
	err = q.queues.Enqueue(ctx, QueuePrefix+to, text, q.opts.MessageTTL)
	q.sched.sent(time.Since(start))
	q.kick() // receiver 0 may be in a long pause: the outcome comes soon
	if err != nil {
		if blob != "" && ctx.Err() == nil {
			// Refused: the body is of no use. (An enqueue cut short by the
			// deadline may have stored the message: its body stays for
			// its owner, who deletes it once read, or its cleanup after
			// MessageTTL.) Off the Send: its POST is answered now.
			q.offload(func(ctx context.Context) { q.deleteBlob(ctx, to, blob) })
		}
		if errors.Is(err, errQueueNotFound) {
			// Gone for good (its id is never reused), or storage lost it:
			// forget it either way, or the map grows with every instance
			// ever seen.
			q.peers.Delete(to)
			return 0, q.missing(ctx, to)
		}
		return 0, err
	}
	return awaitOutcome(ctx, ch, q.opts.Heartbeat, func(ctx context.Context) error {
		_, err := q.alive(ctx, to)
		return err
	})
}

// upload stores the body of a large message in the container of instance
// to. That instance was alive a moment ago: a missing container was lost
// (the instance was swept while paused, or storage restarted empty) and
// is made again.
func (q *Queue) upload(ctx context.Context, to, name string, body []byte) error {
	container := QueuePrefix + to
	err := q.blobs.Upload(ctx, container, name, body)
	if errors.Is(err, errContainerNotFound) {
		if cerr := q.blobs.CreateContainer(ctx, container); cerr != nil && !errors.Is(cerr, errContainerExists) {
			return fmt.Errorf("making the lost container %s again: %w", container, cerr)
		}
		q.log.Info("backplane: made the lost blob container of an instance again", "container", container)
		err = q.blobs.Upload(ctx, container, name, body)
	}
	if err != nil {
		return fmt.Errorf("storing the message body: %w", err)
	}
	return nil
}

// missing judges a peer whose queue is not there: gone, unless storage
// lost this instance's queue too (it was restarted empty), or did a short
// while ago: every live instance is making its queue again then.
func (q *Queue) missing(ctx context.Context, id string) error {
	if q.lost.recent(q.opts.Heartbeat) {
		return &UnsureError{Instance: id}
	}
	_, err := q.queues.Metadata(ctx, q.QueueName())
	switch {
	case err == nil && q.lost.recent(q.opts.Heartbeat):
		// This instance's queue was lost too, and made again while it was
		// read: the heartbeat marks the loss before it makes the queue.
		return &UnsureError{Instance: id}
	case err == nil:
		return &InstanceGoneError{Instance: id}
	case errors.Is(err, errQueueNotFound):
		q.lost.mark()
		// Off the Send, never on it: a job run on the sender's goroutine
		// would hold its POST past the deadline. Dropped when the workers
		// are behind: the next heartbeat or poll makes the queue again.
		q.offload(func(ctx context.Context) { q.recreate(ctx) })
		return &UnsureError{Instance: id}
	}
	return err
}

func encodeQueueText(e *envelope) (string, error) {
	data, err := json.Marshal(e)
	if err != nil {
		return "", fmt.Errorf("encoding the message: %w", err)
	}
	return base64.StdEncoding.EncodeToString(data), nil
}

// alive returns the peer named when its heartbeat is fresh: read from its
// queue's metadata at most once a heartbeat, by one caller at a time; the
// others wait for it no longer than their ctx.
func (q *Queue) alive(ctx context.Context, id string) (*peer, error) {
	v, ok := q.peers.Load(id)
	if !ok {
		v, _ = q.peers.LoadOrStore(id, &peer{lock: make(chan struct{}, 1)})
	}
	p := v.(*peer)
	select {
	case p.lock <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-p.lock }()
	if time.Since(p.checked) < q.opts.Heartbeat {
		return p, nil
	}
	md, err := q.queues.Metadata(ctx, QueuePrefix+id)
	if err != nil {
		if errors.Is(err, errQueueNotFound) {
			q.peers.Delete(id)
			return nil, q.missing(ctx, id)
		}
		return nil, err
	}
	beat, ok := beatOf(md)
	if !ok {
		q.peers.Delete(id)
		return nil, &InstanceGoneError{Instance: id}
	}
	if err := verdict(id, beat, q.opts.Heartbeat); err != nil {
		q.peers.Delete(id)
		return nil, err
	}
	p.checked = time.Now()
	return p, nil
}
