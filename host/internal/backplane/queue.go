package backplane

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue/v2"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue/v2/queueerror"

	"github.com/funcmcp/funcmcp/host/internal/backoff"
)

// Defaults of [QueueOptions].
const (
	DefaultVisibilityTimeout = 30 * time.Second
	DefaultMaxIdleWait       = 2 * time.Second
	DefaultMaxRetryWait      = 10 * time.Second
	DefaultMessageTTL        = 10 * time.Minute
	DefaultHotWindow         = time.Second
	DefaultHotMaxWait        = 50 * time.Millisecond
	DefaultHotPause          = 2 * time.Millisecond
	DefaultReceivers         = 1
	DefaultHeartbeat         = 15 * time.Second
	DefaultOutcomeTimeout    = 10 * time.Second
)

// Heartbeat multiples: an instance whose heartbeat is older than
// StaleBeats heartbeats is dead (messages for it are refused at once);
// its queue and container are removed once it is older than RemoveBeats,
// by the cleanup that every instance runs each CleanupBeats.
const (
	StaleBeats   = 3
	DeadBeats    = 6
	RemoveBeats  = 10
	CleanupBeats = 5
)

const (
	batchSize = 32
	// maxQueueText is the largest queue message: 64 KiB of base64 text.
	maxQueueText = 64 << 10
	// maxBlobBytes bounds a message body read back from a blob.
	maxBlobBytes = 64 << 20
	// HeartbeatKey is the queue metadata holding an instance's last
	// heartbeat (Unix milliseconds). Queues without it are not funchost's
	// and are never removed.
	HeartbeatKey = "funcmcpheartbeat"
	asyncWorkers = 8
	jobBuffer    = 4096
)

// QueueOptions configures [NewQueue]. A nil *QueueOptions means defaults.
type QueueOptions struct {
	// VisibilityTimeout is how long a received message stays hidden before
	// it comes back if it was not deleted; default 30s.
	VisibilityTimeout time.Duration
	// MaxIdleWait caps the pause between two empty polls; default 2s.
	MaxIdleWait time.Duration
	// HotPause is the pause after the first empty poll that follows a
	// message received; default 2ms. Each further empty poll waits twice
	// as long, up to HotMaxWait within HotWindow, then up to MaxIdleWait.
	HotPause time.Duration
	// HotWindow is how long after the last message sent or received the
	// pause stays at most HotMaxWait (and the extra receivers, with
	// Receivers > 1, poll); default 1s.
	HotWindow time.Duration
	// HotMaxWait caps the pause within HotWindow; default 50ms.
	HotMaxWait time.Duration
	// Receivers poll at once while messages flow (one otherwise); default
	// 1. More help when a storage request takes much longer than the
	// message rate; against Azurite on loopback they only load the
	// emulator.
	Receivers int
	// MaxRetryWait caps the pause between two failing polls; default 10s.
	MaxRetryWait time.Duration
	// MessageTTL is how long an undelivered message (and the blob of a
	// large one) stays; default 10m.
	MessageTTL time.Duration
	// Heartbeat is how often the instance writes its heartbeat into its
	// queue's metadata; default 15s. See StaleBeats.
	Heartbeat time.Duration
	// OutcomeTimeout bounds the wait for the outcome of a message sent;
	// default 10s.
	OutcomeTimeout time.Duration
	// Hold bounds what is held for streams whose inbox is full.
	Hold HoldOptions
	// Logger receives storage errors and dropped messages; nil discards.
	Logger *slog.Logger
}

func (o *QueueOptions) withDefaults() {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&o.VisibilityTimeout, DefaultVisibilityTimeout)
	def(&o.MaxIdleWait, DefaultMaxIdleWait)
	def(&o.HotWindow, DefaultHotWindow)
	def(&o.HotPause, DefaultHotPause)
	def(&o.HotMaxWait, DefaultHotMaxWait)
	def(&o.MaxRetryWait, DefaultMaxRetryWait)
	def(&o.MessageTTL, DefaultMessageTTL)
	def(&o.Heartbeat, DefaultHeartbeat)
	def(&o.OutcomeTimeout, DefaultOutcomeTimeout)
	if o.Receivers <= 0 {
		o.Receivers = DefaultReceivers
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
}

// Queue is the Azure Storage Queues backplane.
type Queue struct {
	id      string
	conn    string // the connection's name, for messages
	opts    QueueOptions
	svc     *azqueue.ServiceClient
	blobs   *azblob.Client // nil: large messages cannot cross
	own     *azqueue.QueueClient
	account string // the queue service URL without query, for messages
	log     *slog.Logger

	peers   sync.Map // instance id → *peer
	waiting waiters
	lost    lossClock // when storage had lost this instance's queue
	in      *inbound

	sched  *pollSchedule
	active atomic.Int64 // UnixNano of the last message sent or received
	kickMu sync.Mutex
	kickCh chan struct{} // closed to wake idle receivers

	// del deletes a received message; tests replace it to inject faults.
	del func(ctx context.Context, id, pop string) error

	jobsMu sync.RWMutex
	jobs   chan func(context.Context)
	jobCap int             // the jobs waiting for a worker at most; tests lower it
	jobCtx context.Context // ends with the instance; set by Start
	closed bool

	mu      sync.Mutex
	cancel  context.CancelFunc
	loops   sync.WaitGroup
	workers sync.WaitGroup
}

// peer is what a sender knows of another instance.
type peer struct {
	client  *azqueue.QueueClient
	lock    chan struct{} // one slot: held while its heartbeat is read
	checked time.Time     // when its heartbeat was last read
}

// NewQueue returns the backplane of instance id on the storage account s.
// It does not contact storage: Start does.
func NewQueue(id string, s Storage, opts *QueueOptions) (*Queue, error) {
	var o QueueOptions
	if opts != nil {
		o = *opts
	}
	o.withDefaults()
	if s.Name == "" {
		s.Name = "the storage connection"
	}
	if !ValidInstanceID(id) {
		return nil, fmt.Errorf("creating the backplane: instance id %q is not 1-49 lower-case letters and digits", id)
	}
	c, err := s.connect()
	if err != nil {
		return nil, fmt.Errorf("creating the backplane: %w", err)
	}
	q := &Queue{
		id:      id,
		conn:    s.Name,
		opts:    o,
		svc:     c.queues,
		blobs:   c.blobs,
		own:     c.queues.NewQueueClient(QueuePrefix + id),
		account: redactedURL(c.queues.URL()),
		log:     o.Logger,
		kickCh:  make(chan struct{}),
		jobCap:  jobBuffer,
		jobCtx:  context.Background(),
		sched:   newPollSchedule(o.HotPause, o.HotMaxWait, o.MaxIdleWait, o.HotWindow),
	}
	q.del = func(ctx context.Context, msgID, pop string) error {
		_, err := q.own.DeleteMessage(ctx, msgID, pop, nil)
		return err
	}
	return q, nil
}

// QueueName is the name of this instance's queue (and blob container).
func (q *Queue) QueueName() string { return QueuePrefix + q.id }

// LargeMessages reports whether messages too large for a queue message
// can cross instances (the connection has a blob endpoint).
func (q *Queue) LargeMessages() bool { return q.blobs != nil }

func beatMetadata(t time.Time) map[string]*string {
	v := strconv.FormatInt(t.UnixMilli(), 10)
	return map[string]*string{HeartbeatKey: &v}
}

// beatOf reads the heartbeat of queue metadata.
func beatOf(md map[string]*string) (time.Time, bool) {
	for k, v := range md {
		if strings.EqualFold(k, HeartbeatKey) && v != nil {
			ms, err := strconv.ParseInt(*v, 10, 64)
			if err == nil {
				return time.UnixMilli(ms), true
			}
		}
	}
	return time.Time{}, false
}

// Start creates the instance's queue with its first heartbeat (and the
// container of its large messages) and starts receiving. Unreachable
// storage fails here, naming the connection.
func (q *Queue) Start(ctx context.Context, deliver Deliver) error {
	if err := q.createQueue(ctx); err != nil {
		return fmt.Errorf("starting the backplane: creating queue %s with connection %s (%s): %w",
			q.QueueName(), q.conn, q.account, err)
	}
	if q.blobs != nil {
		if _, err := q.blobs.CreateContainer(ctx, q.QueueName(), nil); err != nil && !hasCode(err, string(bloberror.ContainerAlreadyExists)) {
			q.log.Warn("backplane: creating the blob container failed: messages too large for a queue message cannot reach this instance",
				"container", q.QueueName(), "connection", q.conn, "error", shortError(err))
		}
	} else {
		q.log.Warn("backplane: the connection has no blob endpoint: messages too large for a queue message cannot cross instances",
			"connection", q.conn)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.cancel != nil {
		return errors.New("starting the backplane: already started")
	}
	lctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	q.cancel = cancel
	q.in = newInbound("queue "+q.QueueName(), deliver, q.opts.Hold, q.log)
	q.in.start(lctx)
	q.jobs = make(chan func(context.Context), q.jobCap)
	q.jobCtx = lctx
	for range asyncWorkers {
		q.workers.Go(func() {
			for job := range q.jobs {
				q.run(job)
			}
		})
	}
	for i := range q.opts.Receivers {
		q.loops.Go(func() { q.receive(lctx, i) })
	}
	q.loops.Go(func() { q.heartbeat(lctx) })
	q.loops.Go(func() { q.cleanup(lctx) })
	return nil
}

// recreate makes the queue and the container of this instance again:
// storage lost them (it was restarted empty, or another instance swept
// this one as dead while it was paused).
func (q *Queue) recreate(ctx context.Context) {
	q.lost.mark()
	if err := q.createQueue(ctx); err != nil {
		q.log.Warn("backplane: the queue was gone; making it again failed", "queue", q.QueueName(), "error", err)
		return
	}
	q.log.Warn("backplane: the queue was gone; made it again", "queue", q.QueueName())
	if q.blobs == nil {
		return
	}
	if _, err := q.blobs.CreateContainer(ctx, q.QueueName(), nil); err != nil && !hasCode(err, string(bloberror.ContainerAlreadyExists)) {
		q.log.Warn("backplane: making the blob container again failed; a sender makes it when it needs it",
			"container", q.QueueName(), "error", shortError(err))
	}
}

func (q *Queue) createQueue(ctx context.Context) error {
	md := beatMetadata(time.Now())
	_, err := q.own.Create(ctx, &azqueue.CreateOptions{Metadata: md})
	if err != nil && !queueerror.HasCode(err, queueerror.QueueAlreadyExists) {
		return shortError(err)
	}
	if err != nil { // it exists, with other metadata
		if _, err := q.own.SetMetadata(ctx, &azqueue.SetMetadataOptions{Metadata: md}); err != nil {
			return shortError(err)
		}
	}
	return nil
}

// Stop ends receiving and deletes the instance's queue and container.
func (q *Queue) Stop(ctx context.Context) error {
	if q.halt() {
		q.jobsMu.Lock()
		q.closed = true
		close(q.jobs)
		q.jobsMu.Unlock()
		q.workers.Wait()
	}
	var errs []error
	if _, err := q.own.Delete(ctx, nil); err != nil && !queueerror.HasCode(err, queueerror.QueueNotFound) {
		errs = append(errs, fmt.Errorf("stopping the backplane: deleting queue %s: %w", q.QueueName(), shortError(err)))
	}
	if q.blobs != nil {
		if _, err := q.blobs.DeleteContainer(ctx, q.QueueName(), nil); err != nil && !hasCode(err, string(bloberror.ContainerNotFound)) {
			errs = append(errs, fmt.Errorf("stopping the backplane: deleting container %s: %w", q.QueueName(), shortError(err)))
		}
	}
	return errors.Join(errs...)
}

// halt ends receiving and the heartbeat as a killed process would: the
// queue and its messages stay (tests call it alone; Stop goes on to remove
// them). It reports whether anything was running.
func (q *Queue) halt() bool {
	q.mu.Lock()
	cancel := q.cancel
	q.cancel = nil
	q.mu.Unlock()
	if cancel == nil {
		return false
	}
	cancel()
	q.loops.Wait()
	q.in.stop()
	return true
}

// async runs job on a worker (deletes, outcomes): off the receive loop.
// When the workers are behind and their buffer is full, it runs job at
// once, slowing the loop down; every job ends within the outcome timeout,
// so a storage that does not answer never stops the loop.
func (q *Queue) async(job func(context.Context)) {
	q.jobsMu.RLock()
	defer q.jobsMu.RUnlock()
	if q.closed {
		return
	}
	select {
	case q.jobs <- job:
	default:
		q.run(job)
	}
}

// run runs one job within the outcome timeout.
func (q *Queue) run(job func(context.Context)) {
	ctx, cancel := context.WithTimeout(q.jobCtx, q.opts.OutcomeTimeout)
	defer cancel()
	job(ctx)
}

// touch marks traffic: the receivers poll without back-off for HotWindow.
// An idle instance's other receivers wake up.
func (q *Queue) touch() {
	now := time.Now().UnixNano()
	if prev := q.active.Swap(now); time.Duration(now-prev) >= q.opts.HotWindow {
		q.kick()
	}
}

// hot reports whether the receivers should poll without back-off.
func (q *Queue) hot() bool {
	return q.waiting.count() > 0 || time.Since(time.Unix(0, q.active.Load())) < q.opts.HotWindow
}

// kick wakes the receivers from an idle pause.
func (q *Queue) kick() {
	q.kickMu.Lock()
	close(q.kickCh)
	q.kickCh = make(chan struct{})
	q.kickMu.Unlock()
}

func (q *Queue) kicked() <-chan struct{} {
	q.kickMu.Lock()
	defer q.kickMu.Unlock()
	return q.kickCh
}

// pause waits d, or less when kicked or ctx ends; it reports whether it
// was kicked.
func (q *Queue) pause(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return false
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	case <-q.kicked():
		return true
	}
	return false
}

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
	p, err := q.alive(ctx, to)
	if err != nil {
		return 0, err
	}
	env := envelope{ID: m.ID, ClientID: m.ClientID, Message: m.Body, From: q.id}
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
	ttl := int32(q.opts.MessageTTL / time.Second)
	start := time.Now()
	_, err = p.client.EnqueueMessage(ctx, text, &azqueue.EnqueueMessageOptions{TimeToLive: &ttl})
	q.sched.sent(time.Since(start))
	q.kick() // receiver 0 may be in a long pause: the outcome comes soon
	if err != nil {
		if blob != "" {
			q.deleteBlob(context.WithoutCancel(ctx), to, blob)
		}
		if queueerror.HasCode(err, queueerror.QueueNotFound) {
			// Gone for good (its id is never reused), or storage lost it:
			// forget it either way, or the map grows with every instance
			// ever seen.
			q.peers.Delete(to)
			return 0, q.missing(ctx, to)
		}
		return 0, shortError(err)
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
	_, err := q.blobs.UploadBuffer(ctx, container, name, body, nil)
	if err != nil && hasCode(err, string(bloberror.ContainerNotFound)) {
		if _, cerr := q.blobs.CreateContainer(ctx, container, nil); cerr != nil && !hasCode(cerr, string(bloberror.ContainerAlreadyExists)) {
			return fmt.Errorf("making the lost container %s again: %w", container, shortError(cerr))
		}
		q.log.Info("backplane: made the lost blob container of an instance again", "container", container)
		_, err = q.blobs.UploadBuffer(ctx, container, name, body, nil)
	}
	if err != nil {
		return fmt.Errorf("storing the message body: %w", shortError(err))
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
	_, err := q.own.GetProperties(ctx, nil)
	switch {
	case err == nil:
		return &InstanceGoneError{Instance: id}
	case queueerror.HasCode(err, queueerror.QueueNotFound):
		q.lost.mark()
		q.async(func(ctx context.Context) { q.recreate(ctx) })
		return &UnsureError{Instance: id}
	}
	return shortError(err)
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
		v, _ = q.peers.LoadOrStore(id, &peer{client: q.svc.NewQueueClient(QueuePrefix + id), lock: make(chan struct{}, 1)})
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
	props, err := p.client.GetProperties(ctx, nil)
	if err != nil {
		if queueerror.HasCode(err, queueerror.QueueNotFound) {
			q.peers.Delete(id)
			return nil, q.missing(ctx, id)
		}
		return nil, shortError(err)
	}
	beat, ok := beatOf(props.Metadata)
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
	m := Message{ID: env.ID, ClientID: env.ClientID, Body: env.Message}
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

// heartbeat writes the time into the queue's metadata every Heartbeat.
func (q *Queue) heartbeat(ctx context.Context) {
	keepBeating(ctx, q.opts.Heartbeat, nil, func(ctx context.Context) error {
		_, err := q.own.SetMetadata(ctx, &azqueue.SetMetadataOptions{Metadata: beatMetadata(time.Now())})
		if err != nil && queueerror.HasCode(err, queueerror.QueueNotFound) {
			q.recreate(ctx)
			return nil
		}
		return err
	}, func(failures int, err error) {
		q.log.Warn("backplane: writing the heartbeat failed; other instances will take this one for dead if it goes on",
			"queue", q.QueueName(), "failures", failures, "error", shortError(err))
	})
}

// cleanup removes, every CleanupBeats heartbeats, the queues and
// containers of instances whose heartbeat is older than RemoveBeats, and
// the blobs of this instance's container older than MessageTTL.
func (q *Queue) cleanup(ctx context.Context) {
	every := CleanupBeats * q.opts.Heartbeat
	first := q.opts.Heartbeat + rand.N(every)
	if !backoff.Sleep(ctx, first) {
		return
	}
	for {
		q.sweep(ctx, time.Now())
		if !backoff.Sleep(ctx, every/2+rand.N(every)) {
			return
		}
	}
}

// sweep is one cleanup pass.
func (q *Queue) sweep(ctx context.Context, now time.Time) {
	removeBefore := now.Add(-RemoveBeats * q.opts.Heartbeat)
	prefix := QueuePrefix
	known := map[string]bool{q.QueueName(): true}
	pager := q.svc.NewListQueuesPager(&azqueue.ListQueuesOptions{Prefix: &prefix, Include: azqueue.ListQueuesInclude{Metadata: true}})
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			if ctx.Err() == nil {
				q.log.Warn("backplane: listing the instance queues failed", "error", shortError(err))
			}
			return
		}
		for _, item := range page.Queues {
			if item == nil || item.Name == nil {
				continue
			}
			name := *item.Name
			known[name] = true
			beat, ours := beatOf(item.Metadata)
			if !ours || name == q.QueueName() || beat.After(removeBefore) {
				continue
			}
			if _, err := q.svc.DeleteQueue(ctx, name, nil); err != nil && !queueerror.HasCode(err, queueerror.QueueNotFound) {
				q.log.Warn("backplane: removing the queue of a dead instance failed", "queue", name, "error", shortError(err))
				continue
			}
			delete(known, name)
			q.log.Info("backplane: removed the queue of a dead instance", "queue", name, "lastHeartbeat", beat.UTC().Format(time.RFC3339))
		}
	}
	if q.blobs == nil {
		return
	}
	cpager := q.blobs.NewListContainersPager(&azblob.ListContainersOptions{Prefix: &prefix})
	for cpager.More() {
		page, err := cpager.NextPage(ctx)
		if err != nil {
			return
		}
		for _, c := range page.ContainerItems {
			if c == nil || c.Name == nil || known[*c.Name] || c.Properties == nil || c.Properties.LastModified == nil ||
				c.Properties.LastModified.After(removeBefore) {
				continue
			}
			if _, err := q.blobs.DeleteContainer(ctx, *c.Name, nil); err == nil {
				q.log.Info("backplane: removed the blob container of a dead instance", "container", *c.Name)
			}
		}
	}
	expired := now.Add(-q.opts.MessageTTL)
	bpager := q.blobs.NewListBlobsFlatPager(q.QueueName(), nil)
	for bpager.More() {
		page, err := bpager.NextPage(ctx)
		if err != nil {
			return
		}
		if page.Segment == nil {
			continue
		}
		for _, b := range page.Segment.BlobItems {
			if b == nil || b.Name == nil || b.Properties == nil || b.Properties.LastModified == nil || b.Properties.LastModified.After(expired) {
				continue
			}
			q.deleteBlob(ctx, q.id, *b.Name)
		}
	}
}
