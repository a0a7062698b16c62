package notify

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/funcmcp/funcmcp/host/internal/owner"
)

// The settings that change the [Limits] of a hub (read by the host; named
// in refusals).
const (
	SettingListenersPerClient = "FUNCMCP_LISTENERS_PER_CLIENT"
	SettingListeners          = "FUNCMCP_LISTENERS"
	SettingSubscriptions      = "FUNCMCP_LISTEN_SUBSCRIPTIONS"
	SettingQueue              = "FUNCMCP_LISTEN_QUEUE"
)

// Defaults of [Limits].
const (
	DefaultListenersPerOwner = 64
	// DefaultListenersPerAddress is half of what one client address may
	// open as connections by default: listeners alone never take all of
	// an address's connections, nor, from a few addresses, all of the
	// server's.
	DefaultListenersPerAddress = 64
	DefaultListeners           = 10000
	DefaultSubscriptions       = 256
	DefaultSubscriptionBytes   = 64 << 10
	DefaultQueue               = 64
	DefaultQueueBytes          = 1 << 20
	// relayQueue is how many changes may wait for the relay; more are
	// dropped (and logged): Publish never waits for a backplane.
	relayQueue = 1024
	// relayTimeout bounds one Broadcast.
	relayTimeout = 10 * time.Second
)

// DefaultBytes bounds the bytes listeners keep (see [Limits.Bytes]).
var DefaultBytes = owner.BudgetLimit{PerOwner: 2 << 20, PerAddress: 4 << 20, Global: 64 << 20}

// What a listener is charged in bytes (see [Limits.Bytes]), besides what
// its stream holds ([ListenerOptions.Held]).
const (
	// ListenerCost is the hub's own part of a counted listener.
	ListenerCost = 1 << 10
	// SubscriptionCost is what a URI or task id followed costs besides its
	// own bytes: its entries in the listener and in the hub's index.
	SubscriptionCost = 256
)

// Limits bound what a [Hub] keeps. Zero or less means the default.
type Limits struct {
	// Listeners bounds the counted listeners of one client (owner) and of
	// all clients together.
	Listeners owner.Limit
	// ListenersPerAddress bounds the counted listeners of one client
	// address, whatever owners they have.
	ListenersPerAddress int64
	// Subscriptions bounds the resource URIs and task ids one listener
	// follows; SubscriptionBytes bounds their bytes together.
	Subscriptions     int
	SubscriptionBytes int
	// Bytes bounds what listeners keep, in bytes, per owner, per client
	// address and in all: every counted listener's [ListenerCost], what its
	// stream holds, and each URI or task id any listener follows (its
	// length and [SubscriptionCost]).
	Bytes owner.BudgetLimit
	// Queue and QueueBytes bound the changes waiting for one listener, in
	// number and in bytes (a change queued for many listeners is held once
	// but counted for each; a resource or list change equal to one that
	// waits is merged into it and takes no place). A listener that would pass either is ended
	// with [ErrTooSlow] and its queue dropped.
	Queue      int
	QueueBytes int
}

func (l Limits) withDefaults() Limits {
	if l.Listeners.PerOwner <= 0 {
		l.Listeners.PerOwner = DefaultListenersPerOwner
	}
	if l.Listeners.Global <= 0 {
		l.Listeners.Global = DefaultListeners
	}
	if l.ListenersPerAddress <= 0 {
		l.ListenersPerAddress = DefaultListenersPerAddress
	}
	if l.Subscriptions <= 0 {
		l.Subscriptions = DefaultSubscriptions
	}
	if l.SubscriptionBytes <= 0 {
		l.SubscriptionBytes = DefaultSubscriptionBytes
	}
	if l.Bytes.PerOwner <= 0 {
		l.Bytes.PerOwner = DefaultBytes.PerOwner
	}
	if l.Bytes.PerAddress <= 0 {
		l.Bytes.PerAddress = DefaultBytes.PerAddress
	}
	if l.Bytes.Global <= 0 {
		l.Bytes.Global = DefaultBytes.Global
	}
	if l.Queue <= 0 {
		l.Queue = DefaultQueue
	}
	if l.QueueBytes <= 0 {
		l.QueueBytes = DefaultQueueBytes
	}
	return l
}

// Why a listener ended.
var (
	// ErrTooSlow: the listener's queue was full when a change came; its
	// queue is dropped. The client should listen again (and read what it
	// missed: lists and resources again, tasks with tasks/get).
	ErrTooSlow = errors.New("the listener fell behind: too many notifications waited for it")
	// ErrClosed: the hub stopped (the host is stopping).
	ErrClosed = errors.New("the server is stopping")
	// ErrReplaced: another stream took the listener's place (a session's
	// second GET stream).
	ErrReplaced = errors.New("another stream of the same session replaced this one")
	// ErrEnded: the listener was closed by its own side.
	ErrEnded = errors.New("the listener ended")
)

// TooManySubscriptionsError refuses a listener, or a subscription, past
// [Limits.Subscriptions] or, when Bytes, [Limits.SubscriptionBytes].
type TooManySubscriptionsError struct {
	Limit int
	Bytes bool
}

func (e *TooManySubscriptionsError) Error() string {
	if e.Bytes {
		return fmt.Sprintf("the URIs and task ids of one listener are too long together (the limit is %d bytes)", e.Limit)
	}
	return fmt.Sprintf("too many subscriptions on one listener (the limit is %d); %s changes it", e.Limit, SettingSubscriptions)
}

// Filter is what a listener asks to hear of.
type Filter struct {
	ToolsListChanged, PromptsListChanged, ResourcesListChanged bool
	// Resources are the URIs whose ResourceUpdated changes it hears.
	Resources []string
	// Tasks are the ids whose TaskStatus changes it hears (of its own task
	// owner only).
	Tasks []string
}

// ListenerOptions describe a listener to [Hub.Listen].
type ListenerOptions struct {
	// Owner is the client the listener counts against; Uncounted leaves it
	// out of the listener limits (a stream bounded elsewhere, such as a
	// legacy SSE stream).
	Owner     owner.ID
	Uncounted bool
	// Address is the client address the owner nests within
	// (owner.Address of the request's remote address): the listener counts
	// against the address's limits too. "" counts it as the owner's own.
	Address owner.ID
	// Held is what the listener's stream holds in bytes while it is open
	// (its request, its buffers), charged with the listener to
	// [Limits.Bytes].
	Held int64
	// TaskOwner is who may hear the listener's task changes: a TaskStatus
	// change reaches it only when its Owner equals this. "" hears none.
	TaskOwner string
	// Wake is called (never under a lock of the hub, never blocking the
	// publisher for long: it must not wait) when a change was queued or
	// the listener ended. Required.
	Wake func()
}

// Hub keeps the listeners of this instance and hands each change to those
// that asked for it. It implements [Publisher]. Listeners cost no
// goroutine of the hub: a change is queued on each listener and its Wake
// called; the listener's own stream takes it from there.
type Hub struct {
	lim     Limits
	log     *slog.Logger
	counted *owner.Budget // listeners
	bytes   *owner.Budget // what they keep

	mu       sync.Mutex
	closed   bool                      // Close was called: no relay any more
	deaf     bool                      // EndListeners was called: no listener any more
	lists    [3]map[*Listener]struct{} // tools, prompts, resources list changed
	byURI    map[string]map[*Listener]struct{}
	byTask   map[string]map[*Listener]struct{}
	all      map[*Listener]struct{}
	relay    Relay
	outbox   chan relayed
	stopSend context.CancelFunc
	sendDone chan struct{}
}

// NewHub returns a hub with the limits l (zero: defaults); log receives
// dropped changes (nil discards).
func NewHub(l Limits, log *slog.Logger) *Hub {
	l = l.withDefaults()
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	h := &Hub{lim: l, log: log, byURI: map[string]map[*Listener]struct{}{}, byTask: map[string]map[*Listener]struct{}{}, all: map[*Listener]struct{}{},
		counted: owner.NewBudget("listeners", owner.BudgetLimit{PerOwner: l.Listeners.PerOwner, PerAddress: l.ListenersPerAddress, Global: l.Listeners.Global},
			SettingListenersPerClient, "", SettingListeners),
		bytes: owner.NewBudget("bytes kept for listeners", l.Bytes)}
	for i := range h.lists {
		h.lists[i] = map[*Listener]struct{}{}
	}
	return h
}

// Limits returns the hub's limits, defaults filled in.
func (h *Hub) Limits() Limits { return h.lim }

// Listeners returns the listeners open now; Counted those of them that
// count against the limits.
func (h *Hub) Listeners() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.all)
}

// Counted returns the listeners counted against the limits now.
func (h *Hub) Counted() int64 { return h.counted.Total() }

// Bytes returns the bytes charged to the listeners now (see
// [Limits.Bytes]).
func (h *Hub) Bytes() int64 { return h.bytes.Total() }

// SetRelay sets the relay that carries this instance's changes to the
// other instances (nil: none). It starts one goroutine that sends them, in
// order; Close stops it.
func (h *Hub) SetRelay(r Relay) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return
	}
	h.stopSenderLocked()
	h.relay = r
	if r == nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	out, done := make(chan relayed, relayQueue), make(chan struct{})
	h.outbox, h.stopSend, h.sendDone = out, cancel, done
	go h.send(ctx, r, out, done)
}

func (h *Hub) stopSenderLocked() {
	if h.stopSend != nil {
		h.stopSend()
		h.stopSend, h.outbox, h.sendDone = nil, nil, nil
	}
}

// relayed is one change waiting for the relay: its wire form and, when
// its publisher follows it (PublishTracked), where the outcome goes.
type relayed struct {
	wire []byte
	done chan<- error // buffered (1), or nil
}

func (h *Hub) send(ctx context.Context, r Relay, out <-chan relayed, done chan<- struct{}) {
	defer close(done)
	for {
		select {
		case <-ctx.Done():
			return
		case item := <-out:
			bctx, cancel := context.WithTimeout(ctx, relayTimeout)
			err := r.Broadcast(bctx, item.wire)
			if err != nil && ctx.Err() == nil {
				h.log.Warn("notify: relaying a change to the other instances failed", "error", err)
			}
			cancel()
			if item.done != nil {
				item.done <- err
			}
		}
	}
}

// ErrRelayBehind: the relay had more changes waiting than it keeps
// (1,024); the change reached the listeners of this instance only.
var ErrRelayBehind = errors.New("the relay to the other instances is behind; the change reached this instance only")

// Publish delivers a change announced on this instance to the listeners
// here and, when a relay is set, hands its wire form to the relay. It never
// waits for a listener or for the relay. A change that breaks the rules of
// its kind is dropped (and logged).
func (h *Hub) Publish(c Change) { h.publish(c, nil) }

// PublishTracked is Publish for a publisher that wants to know what became
// of the change on its way to the other instances. The channel it returns
// (buffered: the hub never waits for its reader) gets one value: nil once
// the relay took the change for every other live instance (at once when
// no relay is set), else why not: the relay's error (a
// *backplane.BroadcastError names how many instances it missed),
// ErrRelayBehind, or the change's own error (it reached nobody). Nothing
// comes when the hub closes first.
func (h *Hub) PublishTracked(c Change) <-chan error {
	done := make(chan error, 1)
	h.publish(c, done)
	return done
}

func (h *Hub) publish(c Change, done chan<- error) {
	report := func(err error) {
		if done != nil {
			done <- err
		}
	}
	if err := c.Check(); err != nil {
		h.log.Warn("notify: dropping a change", "error", err)
		report(err)
		return
	}
	h.deliver(c)
	h.mu.Lock()
	out := h.outbox
	h.mu.Unlock()
	if out == nil {
		report(nil)
		return
	}
	wire, err := Encode(c)
	if err != nil {
		h.log.Warn("notify: a change too large for the other instances", "kind", c.Kind, "error", err)
		report(err)
		return
	}
	select {
	case out <- relayed{wire: wire, done: done}:
	default:
		h.log.Warn("notify: the relay is behind; a change reaches this instance only", "kind", c.Kind)
		report(ErrRelayBehind)
	}
}

// Receive delivers a change that came from another instance (its wire
// form) to the listeners here only.
func (h *Hub) Receive(wire []byte) error {
	c, err := Decode(wire)
	if err != nil {
		return fmt.Errorf("receiving a change: %w", err)
	}
	h.deliver(c)
	return nil
}

// deliver queues c on every listener that asked for it.
func (h *Hub) deliver(c Change) {
	var wake []*Listener
	var ended []*Listener
	h.mu.Lock()
	each := func(set map[*Listener]struct{}) {
		for l := range set {
			if c.Kind == TaskStatus && l.taskOwner != c.Owner {
				continue
			}
			switch l.push(c) {
			case pushed:
				wake = append(wake, l)
			case overflow:
				ended = append(ended, l)
			}
		}
	}
	switch c.Kind {
	case ToolsListChanged, PromptsListChanged, ResourcesListChanged:
		each(h.lists[listIndex(c.Kind)])
	case ResourceUpdated:
		each(h.byURI[c.URI])
	case TaskStatus:
		each(h.byTask[c.TaskID])
	}
	for _, l := range ended {
		h.removeLocked(l)
	}
	h.mu.Unlock()
	for _, l := range ended {
		l.wake()
	}
	for _, l := range wake {
		l.wake()
	}
}

func listIndex(k Kind) int {
	switch k {
	case ToolsListChanged:
		return 0
	case PromptsListChanged:
		return 1
	}
	return 2
}

// Listen registers a listener for what f asks. It is refused with an
// *owner.BudgetError past the listener limits (in number or in bytes), a
// *TooManySubscriptionsError past the subscription limits, and ErrClosed
// once the hub stopped.
func (h *Hub) Listen(o ListenerOptions, f Filter) (*Listener, error) {
	if o.Wake == nil {
		return nil, errors.New("listening: a wake func is required")
	}
	if n := len(f.Resources) + len(f.Tasks); n > h.lim.Subscriptions {
		return nil, &TooManySubscriptionsError{Limit: h.lim.Subscriptions}
	}
	keys := 0
	for _, k := range f.Resources {
		keys += len(k)
	}
	for _, k := range f.Tasks {
		keys += len(k)
	}
	if keys > h.lim.SubscriptionBytes {
		return nil, &TooManySubscriptionsError{Limit: h.lim.SubscriptionBytes, Bytes: true}
	}
	addr := o.Address
	if addr == "" {
		addr = o.Owner
	}
	l := &Listener{hub: h, owner: o.Owner, addr: addr, counted: !o.Uncounted, taskOwner: o.TaskOwner, onWake: o.Wake, done: make(chan struct{})}
	l.lists = [3]bool{f.ToolsListChanged, f.PromptsListChanged, f.ResourcesListChanged}
	// What it keeps: the subscriptions are charged as they are added.
	l.charged = o.Held
	if l.counted {
		l.charged += ListenerCost
		if err := h.counted.Take(l.owner, addr, 1); err != nil {
			return nil, err
		}
	}
	if err := h.bytes.Take(l.owner, addr, l.charged); err != nil {
		if l.counted {
			h.counted.Give(l.owner, addr, 1)
		}
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.deaf {
		h.giveLocked(l)
		return nil, ErrClosed
	}
	for i, on := range l.lists {
		if on {
			h.lists[i][l] = struct{}{}
		}
	}
	for _, u := range f.Resources {
		if err := l.addLocked(h.byURI, &l.uris, u); err != nil {
			h.removeLocked(l)
			return nil, err
		}
	}
	for _, t := range f.Tasks {
		if err := l.addLocked(h.byTask, &l.tasks, t); err != nil {
			h.removeLocked(l)
			return nil, err
		}
	}
	h.all[l] = struct{}{}
	return l, nil
}

// giveLocked gives back what l holds of the limits; h.mu is held.
func (h *Hub) giveLocked(l *Listener) {
	if l.counted {
		h.counted.Give(l.owner, l.addr, 1)
		l.counted = false
	}
	h.bytes.Give(l.owner, l.addr, l.charged)
	l.charged = 0
}

// removeLocked takes l out of every index; h.mu is held.
func (h *Hub) removeLocked(l *Listener) {
	if l.removed {
		return
	}
	l.removed = true
	delete(h.all, l)
	for i := range h.lists {
		delete(h.lists[i], l)
	}
	for u := range l.uris {
		dropFrom(h.byURI, u, l)
	}
	for t := range l.tasks {
		dropFrom(h.byTask, t, l)
	}
	h.giveLocked(l)
}

func dropFrom(index map[string]map[*Listener]struct{}, key string, l *Listener) {
	if set := index[key]; set != nil {
		delete(set, l)
		if len(set) == 0 {
			delete(index, key)
		}
	}
}

// EndListeners ends every listener (with ErrClosed: their streams end
// gracefully) and refuses new ones; changes are still published and
// relayed (a host that drains). Close stops the rest.
func (h *Hub) EndListeners() {
	h.mu.Lock()
	h.deaf = true
	all := make([]*Listener, 0, len(h.all))
	for l := range h.all {
		all = append(all, l)
	}
	for _, l := range all {
		l.end(ErrClosed)
		h.removeLocked(l)
	}
	h.mu.Unlock()
	for _, l := range all {
		l.wake()
	}
}

// Close ends every listener (with ErrClosed), stops the relay's sender
// and refuses new listeners.
func (h *Hub) Close() {
	h.EndListeners()
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return
	}
	h.closed = true
	done := h.sendDone
	h.stopSenderLocked()
	h.mu.Unlock()
	if done != nil {
		<-done
	}
}

// push results.
const (
	skipped = iota
	pushed
	overflow
)

// Listener is one client's stream of changes: it queues what the hub
// hands it (bounded) until its stream takes it with Next.
type Listener struct {
	hub         *Hub
	owner, addr owner.ID
	taskOwner   string
	onWake      func()
	done        chan struct{}

	// Guarded by hub.mu: the listener's place in the indexes, and what it
	// holds of the limits.
	lists    [3]bool
	uris     map[string]struct{}
	tasks    map[string]struct{}
	keyBytes int   // the bytes of the URIs and task ids
	charged  int64 // counted in hub.bytes
	counted  bool  // counted in hub.counted
	removed  bool

	mu     sync.Mutex
	queue  []Change
	bytes  int
	err    error
	ending bool
}

// addLocked follows key, charging it to the listener's bytes; h.mu is
// held.
func (l *Listener) addLocked(index map[string]map[*Listener]struct{}, mine *map[string]struct{}, key string) error {
	if *mine == nil {
		*mine = map[string]struct{}{}
	}
	if _, ok := (*mine)[key]; ok {
		return nil
	}
	cost := int64(len(key) + SubscriptionCost)
	if err := l.hub.bytes.Take(l.owner, l.addr, cost); err != nil {
		return err
	}
	l.charged += cost
	l.keyBytes += len(key)
	(*mine)[key] = struct{}{}
	set := index[key]
	if set == nil {
		set = map[*Listener]struct{}{}
		index[key] = set
	}
	set[l] = struct{}{}
	return nil
}

// size is what a change counts in a queue.
func size(c *Change) int { return 64 + len(c.URI) + len(c.TaskID) + len(c.Owner) + len(c.Task) }

// push queues c; h.mu is held. A resource or list change equal to one
// still queued is merged into it (skipped): the client reads the resource
// or list after both, so a flood of one change takes one place.
func (l *Listener) push(c Change) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return skipped
	}
	if c.Kind != TaskStatus && slices.ContainsFunc(l.queue, func(q Change) bool { return q.Kind == c.Kind && q.URI == c.URI }) {
		return skipped
	}
	n := size(&c)
	lim := l.hub.lim
	if len(l.queue) >= lim.Queue || l.bytes+n > lim.QueueBytes {
		l.endLocked(ErrTooSlow)
		return overflow
	}
	l.queue = append(l.queue, c)
	l.bytes += n
	return pushed
}

func (l *Listener) end(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.endLocked(err)
}

func (l *Listener) endLocked(err error) {
	if l.err != nil {
		return
	}
	l.err = err
	l.queue, l.bytes = nil, 0 // the memory goes now, not when the stream notices
	close(l.done)
}

func (l *Listener) wake() { l.onWake() }

// Next takes the oldest queued change; ok is false when none waits.
func (l *Listener) Next() (c Change, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.queue) == 0 {
		l.queue = nil // an idle listener keeps no queue
		return Change{}, false
	}
	c = l.queue[0]
	l.queue[0] = Change{}
	l.queue = l.queue[1:]
	l.bytes -= size(&c)
	return c, true
}

// Done is closed when the listener ended; Err then says why.
func (l *Listener) Done() <-chan struct{} { return l.done }

// Err is why the listener ended, nil while it lives.
func (l *Listener) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// End ends the listener with err (ErrEnded when nil) and gives its place
// back. It may be called more than once.
func (l *Listener) End(err error) {
	if err == nil {
		err = ErrEnded
	}
	l.end(err)
	h := l.hub
	h.mu.Lock()
	h.removeLocked(l)
	h.mu.Unlock()
}

// Subscribe adds a resource URI to what the listener hears; past the
// subscription limits it refuses with a *TooManySubscriptionsError, past
// the byte limits with an *owner.BudgetError.
func (l *Listener) Subscribe(uri string) error {
	return l.follow(uri, false)
}

// Unsubscribe removes a resource URI.
func (l *Listener) Unsubscribe(uri string) {
	h := l.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := l.uris[uri]; !ok || l.removed {
		return
	}
	delete(l.uris, uri)
	dropFrom(h.byURI, uri, l)
	cost := int64(len(uri) + SubscriptionCost)
	h.bytes.Give(l.owner, l.addr, cost)
	l.charged -= cost
	l.keyBytes -= len(uri)
}

func (l *Listener) follow(key string, task bool) error {
	h := l.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	if l.removed {
		return nil
	}
	if _, ok := l.uris[key]; ok && !task {
		return nil
	}
	if len(l.uris)+len(l.tasks) >= h.lim.Subscriptions {
		return &TooManySubscriptionsError{Limit: h.lim.Subscriptions}
	}
	if l.keyBytes+len(key) > h.lim.SubscriptionBytes {
		return &TooManySubscriptionsError{Limit: h.lim.SubscriptionBytes, Bytes: true}
	}
	if task {
		return l.addLocked(h.byTask, &l.tasks, key)
	}
	return l.addLocked(h.byURI, &l.uris, key)
}
