package announce

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/funcmcp/funcmcp/binding"
	"github.com/funcmcp/funcmcp/host/internal/backplane"
	"github.com/funcmcp/funcmcp/host/internal/notify"
	"github.com/funcmcp/funcmcp/metadata"
)

// DefaultMaxChangesPerSecond is how many changes per second the worker's
// announcements reach the clients when Options.MaxChangesPerSecond is 0
// (burst: as many at once).
const DefaultMaxChangesPerSecond = 100

// MaxPendingChanges bounds the distinct resources whose changes wait for
// their turn past the rate (see changeQueue): ten seconds of the rate, at
// most this many. Past it, they are announced as one change of the
// resources list.
const MaxPendingChanges = 1000

// pendingBound is how many distinct resources' changes may wait at the rate
// r per second: ten seconds' worth, at least 1, at most MaxPendingChanges.
func pendingBound(r rate.Limit) int {
	if r >= rate.Limit(MaxPendingChanges)/10 {
		return MaxPendingChanges
	}
	return max(1, int(10*r))
}

// Path is where the change channel takes POST requests.
const Path = "/changes"

// Channel is funchost's end of the app-wide change channel (see
// metadata.EnvChangesURL): a small HTTP server on a loopback port of its
// own, started with the worker, where any code of the worker process (a
// tool, a timer goroutine, another function of the handler) POSTs a change
// it announces. It checks each change and hands it to publish. One key per
// host process, given to the worker in its environment; the rate is that of
// the worker, whichever of its restarts sends: past it, changes wait their
// turn in a changeQueue, one per resource or list, and are never refused.
type Channel struct {
	log     *slog.Logger
	key     []byte
	limit   turns
	publish func(notify.Change) <-chan error
	// confirmWait bounds how long the answer to the worker waits for the
	// backplane to take a change published at once (confirmWait).
	confirmWait time.Duration

	qmu      sync.Mutex
	queue    changeQueue
	draining bool               // a goroutine publishes what waits in queue
	stop     context.Context    // ends the draining goroutine
	cancel   context.CancelFunc // called by close

	mu       sync.Mutex
	started  bool
	closed   bool
	srv      *http.Server
	url      string
	startErr error
}

// confirmWait is how long funchost's answer to an announced change waits
// for the backplane to take it for the other instances: well within the
// worker's 5 s, and far above what a backplane that works takes (a few
// milliseconds; a listing and the enqueues with Azure Storage). Past it the
// answer says the change is pending; the backplane keeps trying until its
// own 10 s.
const confirmWait = 2 * time.Second

// New makes a channel whose changes reach the clients at the rate of
// limit (past it they wait in a queue of pendingBound(limit.Limit())
// resources) through publish, which returns what will be said of the
// change's relay to the other instances (nil: nothing). Nothing listens
// before [Channel.Offer].
func New(log *slog.Logger, limit *rate.Limiter, publish func(notify.Change) <-chan error) *Channel {
	ctx, cancel := context.WithCancel(context.Background())
	cc := &Channel{log: log, limit: limit, publish: publish, confirmWait: confirmWait, stop: ctx, cancel: cancel}
	cc.queue.bound = pendingBound(limit.Limit())
	return cc
}

// turns is the rate of the changes that reach the clients
// (*rate.Limiter).
type turns interface {
	// Allow takes a turn now, if there is one.
	Allow() bool
	// Wait takes the next turn, waiting for it; it fails when ctx ends.
	Wait(ctx context.Context) error
}

// Offer starts the listener, once, and returns its URL and key; both are
// "" when it cannot start (logged once) or there is no channel (nil).
func (cc *Channel) Offer() (url, key string) {
	if cc == nil {
		return "", ""
	}
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if !cc.started {
		cc.started = true
		cc.startErr = cc.startLocked()
		if cc.startErr != nil {
			cc.log.Error("changes announced by the app are off: "+cc.startErr.Error(), "error", cc.startErr)
		}
	}
	if cc.startErr != nil {
		return "", ""
	}
	return cc.url, string(cc.key)
}

// startLocked listens on 127.0.0.1:0 and serves. cc.mu is held.
func (cc *Channel) startLocked() error {
	if cc.closed {
		return errors.New("the host has stopped")
	}
	var secret [32]byte
	if _, err := rand.Read(secret[:]); err != nil {
		return fmt.Errorf("making the change channel's key: %w", err)
	}
	cc.key = []byte(base64.RawURLEncoding.EncodeToString(secret[:]))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("listening for changes announced by the app: %w", err)
	}
	cc.url = "http://" + ln.Addr().String() + Path
	cc.srv = &http.Server{
		Handler:           cc,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      10 * time.Second,
		IdleTimeout:       60 * time.Second,
		MaxHeaderBytes:    8 << 10,
		ErrorLog:          slog.NewLogLogger(cc.log.Handler(), slog.LevelWarn),
	}
	srv := cc.srv
	go func() { _ = srv.Serve(ln) }()
	return nil
}

// Close stops the listener, if it started; a later Offer offers nothing.
// It does nothing on a nil channel.
func (cc *Channel) Close() {
	if cc == nil {
		return
	}
	cc.mu.Lock()
	cc.closed = true
	srv := cc.srv
	cc.srv = nil
	cc.mu.Unlock()
	if srv != nil {
		_ = srv.Close()
	}
	cc.cancel() // what still waits is dropped: nobody listens any more
}

// ServeHTTP takes one change: POST /changes with the key, a JSON body of at
// most metadata.MaxChangeBytes; 200 when taken, whether it was published
// at once or waits for its turn (see take), with a metadata.ChangeReceipt
// that says which (see receipt).
func (cc *Channel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != Path {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	key, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if subtle.ConstantTimeCompare([]byte(key), cc.key) != 1 {
		http.Error(w, "bad key", http.StatusUnauthorized)
		return
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		http.Error(w, "a change is application/json", http.StatusUnsupportedMediaType)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, metadata.MaxChangeBytes))
	if err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			http.Error(w, fmt.Sprintf("a change is at most %d bytes", metadata.MaxChangeBytes), http.StatusRequestEntityTooLarge)
			return
		}
		http.Error(w, "reading the change failed", http.StatusBadRequest)
		return
	}
	c, err := checkAnnounced(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	sent, published := cc.take(c)
	rc := metadata.ChangeReceipt{Delivery: metadata.DeliveryPending, Waits: metadata.WaitsRate}
	if published {
		rc = cc.receipt(r.Context(), sent)
	}
	body, err = metadata.Marshal(&rc)
	if err != nil { // a struct of strings and numbers
		w.WriteHeader(http.StatusNoContent)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}

// receipt says what became of a change published at once: sent once the
// hub reports that the backplane took it for every other instance (or
// there is no other), missed when it reports that the backplane failed,
// pending when it says nothing within confirmWait (or the worker stopped
// waiting).
func (cc *Channel) receipt(ctx context.Context, sent <-chan error) metadata.ChangeReceipt {
	if sent == nil {
		return metadata.ChangeReceipt{Delivery: metadata.DeliverySent}
	}
	t := time.NewTimer(cc.confirmWait)
	defer t.Stop()
	select {
	case err := <-sent:
		if err == nil {
			return metadata.ChangeReceipt{Delivery: metadata.DeliverySent}
		}
		rc := metadata.ChangeReceipt{Delivery: metadata.DeliveryMissed}
		if be, ok := errors.AsType[*backplane.BroadcastError](err); ok {
			rc.Missed, rc.Of = be.Missed, be.Of
		}
		return rc
	case <-t.C:
	case <-ctx.Done():
	}
	return metadata.ChangeReceipt{Delivery: metadata.DeliveryPending, Waits: metadata.WaitsBackplane}
}

// take publishes c now when it has a turn and nothing waits (published:
// sent is what the hub will say of its relay), else queues it for the
// draining goroutine (merged with a change of the same resource or list
// that waits). It is logged at Info when published or queued, at Debug
// when merged: a flood of one change logs at the rate.
func (cc *Channel) take(c notify.Change) (sent <-chan error, published bool) {
	attrs := []any{"kind", string(c.Kind)}
	if c.URI != "" {
		attrs = append(attrs, "uri", c.URI)
	}
	cc.qmu.Lock()
	if cc.queue.len() == 0 && cc.limit.Allow() {
		cc.qmu.Unlock()
		cc.log.Info("Change announced by the app", attrs...)
		return cc.publish(c), true
	}
	how, collapsed := cc.queue.add(c)
	if !cc.draining && cc.queue.len() > 0 {
		cc.draining = true
		go cc.drain()
	}
	cc.qmu.Unlock()
	if collapsed > 0 {
		cc.log.Warn("changes of more resources wait than the rate lets through in ten seconds; they are announced as a change of the resources list",
			"resources", collapsed, "rate", "MaxChangesPerSecond")
	}
	switch how {
	case queued:
		cc.log.Info("Change announced by the app", append(attrs, "waits", "rate")...)
	default:
		cc.log.Debug("Change announced by the app", append(attrs, "mergedWith", "a waiting change")...)
	}
	return nil, false
}

// drain publishes the changes that wait, one per turn, and ends when none
// waits (or the channel closed).
func (cc *Channel) drain() {
	for {
		cc.qmu.Lock()
		if cc.queue.len() == 0 || cc.stop.Err() != nil {
			cc.draining = false
			cc.qmu.Unlock()
			return
		}
		cc.qmu.Unlock()
		if err := cc.limit.Wait(cc.stop); err != nil {
			cc.qmu.Lock()
			cc.draining = false
			cc.qmu.Unlock()
			return
		}
		cc.qmu.Lock()
		c, ok := cc.queue.pop() // only this goroutine pops: ok is true
		cc.qmu.Unlock()
		if ok {
			cc.publish(c)
		}
	}
}

// How a change joined a changeQueue.
const (
	queued = iota // a change of its own
	merged        // into a waiting change of the same resource or list, or into the resources list change that stands for them
)

// changeQueue is what waits for a turn: at most one change per resource
// and per list, in the order they first came. A change that comes while
// one of the same resource (or list) waits is merged into it: the client
// hears of both when the one that waits is delivered (it reads the
// resource after both), so a flood of one resource costs one place. Past
// bound distinct resources, every resource change that waits is replaced
// by one change of the resources list (the clients read every resource
// they follow again), which then also stands for the resource changes that
// come while it waits.
type changeQueue struct {
	bound     int
	order     []notify.Change
	waiting   map[changeKey]struct{}
	resources int  // ResourceUpdated changes in order
	collapsed bool // the resources list change in order stands for resource changes
}

type changeKey struct {
	kind notify.Kind
	uri  string
}

func (q *changeQueue) len() int { return len(q.order) }

// add queues c, or merges it; collapsed is how many resource changes were
// just replaced by a change of the resources list (0: none).
func (q *changeQueue) add(c notify.Change) (how, collapsed int) {
	k := changeKey{c.Kind, c.URI}
	if _, ok := q.waiting[k]; ok {
		return merged, 0
	}
	if c.Kind == notify.ResourceUpdated {
		if q.collapsed {
			return merged, 0
		}
		if q.resources >= q.bound {
			collapsed = q.collapse()
			return merged, collapsed
		}
		q.resources++
	}
	if q.waiting == nil {
		q.waiting = map[changeKey]struct{}{}
	}
	q.waiting[k] = struct{}{}
	q.order = append(q.order, c)
	return queued, 0
}

// collapse replaces the resource changes that wait by one change of the
// resources list (queued unless one waits) and returns how many it
// replaced.
func (q *changeQueue) collapse() int {
	n := q.resources
	kept := q.order[:0]
	for _, c := range q.order {
		if c.Kind == notify.ResourceUpdated {
			delete(q.waiting, changeKey{c.Kind, c.URI})
			continue
		}
		kept = append(kept, c)
	}
	clear(q.order[len(kept):]) // the URIs go now
	q.order, q.resources, q.collapsed = kept, 0, true
	list := changeKey{kind: notify.ResourcesListChanged}
	if _, ok := q.waiting[list]; !ok {
		q.waiting[list] = struct{}{}
		q.order = append(q.order, notify.Change{Kind: notify.ResourcesListChanged})
	}
	return n
}

// pop takes the change whose turn it is.
func (q *changeQueue) pop() (notify.Change, bool) {
	if len(q.order) == 0 {
		return notify.Change{}, false
	}
	c := q.order[0]
	q.order[0] = notify.Change{}
	q.order = q.order[1:]
	delete(q.waiting, changeKey{c.Kind, c.URI})
	if len(q.order) == 0 {
		q.order, q.waiting = nil, nil // an idle queue keeps nothing
	}
	switch c.Kind {
	case notify.ResourceUpdated:
		q.resources--
	case notify.ResourcesListChanged:
		q.collapsed = false
	}
	return c, true
}

// checkAnnounced decodes a change the worker announced and checks it: a
// change of a kind the worker may announce (a task's changes come from the
// host alone) and, for a resource, a concrete absolute URI.
func checkAnnounced(body []byte) (notify.Change, error) {
	c, err := notify.Decode(body)
	if err != nil {
		return notify.Change{}, fmt.Errorf("decoding the change: %w", err)
	}
	switch c.Kind {
	case notify.ToolsListChanged, notify.PromptsListChanged, notify.ResourcesListChanged:
		if c.URI != "" {
			return notify.Change{}, fmt.Errorf("%w: %s has no uri", notify.ErrBadChange, c.Kind)
		}
	case notify.ResourceUpdated:
		if binding.IsURITemplate(c.URI) {
			return notify.Change{}, fmt.Errorf("%w: a resource template is not a resource; name the URI that changed", notify.ErrBadChange)
		}
		if err := binding.ValidateResourceURI(c.URI); err != nil {
			return notify.Change{}, fmt.Errorf("%w: %w", notify.ErrBadChange, err)
		}
	default:
		return notify.Change{}, fmt.Errorf("%w: the app may not announce %s", notify.ErrBadChange, c.Kind)
	}
	return notify.Change{Kind: c.Kind, URI: c.URI}, nil
}
