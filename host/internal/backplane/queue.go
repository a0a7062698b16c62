package backplane

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
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
	// OnBroadcast receives what other instances broadcast (see
	// [Queue.Broadcast]), one call at a time, off the receive loop; nil
	// drops it.
	OnBroadcast func(wire []byte)
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
	queues  queueStore
	blobs   blobStore // nil: large messages cannot cross
	account string    // the queue service URL without query, for messages
	log     *slog.Logger

	peers   sync.Map // instance id → *peer
	waiting waiters
	lost    lossClock // when storage had lost this instance's queue
	in      *inbound

	sched  *pollSchedule
	active atomic.Int64 // UnixNano of the last message sent or received
	kickMu sync.Mutex
	kickCh chan struct{} // closed to wake idle receivers

	live     livePeers    // the instances broadcasts go to
	lastCast atomic.Int64 // UnixNano of the last broadcast sent
	bcasts   *fanIn       // hands broadcasts received to OnBroadcast

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
	return newQueue(id, s.Name, c.queues, c.blobs, o), nil
}

// newQueue returns the backplane of instance id on the stores given
// (blobs nil: none); o has its defaults.
func newQueue(id, conn string, queues queueStore, blobs blobStore, o QueueOptions) *Queue {
	return &Queue{
		id:      id,
		conn:    conn,
		opts:    o,
		queues:  queues,
		blobs:   blobs,
		account: queues.URL(),
		log:     o.Logger,
		kickCh:  make(chan struct{}),
		jobCap:  jobBuffer,
		jobCtx:  context.Background(),
		sched:   newPollSchedule(o.HotPause, o.HotMaxWait, o.MaxIdleWait, o.HotWindow),
		bcasts:  newFanIn("queue "+QueuePrefix+id, o.OnBroadcast, o.Logger),
	}
}

// QueueName is the name of this instance's queue (and blob container).
func (q *Queue) QueueName() string { return QueuePrefix + q.id }

// LargeMessages reports whether messages too large for a queue message
// can cross instances (the connection has a blob endpoint).
func (q *Queue) LargeMessages() bool { return q.blobs != nil }

// Start creates the instance's queue with its first heartbeat (and the
// container of its large messages) and starts receiving. Unreachable
// storage fails here, naming the connection.
func (q *Queue) Start(ctx context.Context, deliver Deliver) error {
	if err := q.createQueue(ctx); err != nil {
		return fmt.Errorf("starting the backplane: creating queue %s with connection %s (%s): %w",
			q.QueueName(), q.conn, q.account, err)
	}
	if q.blobs != nil {
		if err := q.blobs.CreateContainer(ctx, q.QueueName()); err != nil && !errors.Is(err, errContainerExists) {
			q.log.Warn("backplane: creating the blob container failed: messages too large for a queue message cannot reach this instance",
				"container", q.QueueName(), "connection", q.conn, "error", err)
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
	q.bcasts.start()
	q.jobsMu.Lock()
	q.jobs = make(chan func(context.Context), q.jobCap)
	q.jobCtx = lctx
	q.jobsMu.Unlock()
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
	if err := q.queues.Delete(ctx, q.QueueName()); err != nil && !errors.Is(err, errQueueNotFound) {
		errs = append(errs, fmt.Errorf("stopping the backplane: deleting queue %s: %w", q.QueueName(), err))
	}
	if q.blobs != nil {
		if err := q.blobs.DeleteContainer(ctx, q.QueueName()); err != nil && !errors.Is(err, errContainerNotFound) {
			errs = append(errs, fmt.Errorf("stopping the backplane: deleting container %s: %w", q.QueueName(), err))
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
	q.bcasts.stop()
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

// offload hands job to a worker, for a caller that must not wait for it
// (a Send, whose POST waits within the outcome deadline): when no worker
// can take it (their buffer is full, or the instance is not running), the
// job is dropped and offload reports false. Its storage call is one that
// something else does later too (the heartbeat makes a lost queue again,
// the cleanup removes a blob left behind).
func (q *Queue) offload(job func(context.Context)) bool {
	q.jobsMu.RLock()
	defer q.jobsMu.RUnlock()
	if q.closed {
		return false
	}
	select {
	case q.jobs <- job:
		return true
	default:
		return false
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
