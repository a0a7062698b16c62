package backplane

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/funcmcp/funcmcp/host/internal/dedup"
)

// Defaults of [HoldOptions].
const (
	DefaultHoldPerStream = 1024
	DefaultHoldBytes     = 64 << 20
)

// seenWindow is how many message ids a receiver remembers for duplicate
// suppression.
const seenWindow = 8192

// drainEvery is how often held messages are offered to their streams again.
const drainEvery = 2 * time.Millisecond

// HoldOptions bounds the messages an instance holds for streams whose inbox
// is full. A message beyond either bound is refused (Full).
type HoldOptions struct {
	// PerStream bounds the messages held for one stream; default 1024.
	PerStream int
	// Bytes bounds the bodies held for all streams; default 64 MiB.
	Bytes int64
}

func (o HoldOptions) withDefaults() HoldOptions {
	if o.PerStream <= 0 {
		o.PerStream = DefaultHoldPerStream
	}
	if o.Bytes <= 0 {
		o.Bytes = DefaultHoldBytes
	}
	return o
}

// inbound is the receiving side every backplane shares: it hands messages
// to their streams in the order they arrive, holds those a full inbox
// refuses (and every later one for the same stream, so that none
// overtakes another) and offers them again until taken, suppresses
// duplicates, and tells the transport when a message is done with.
type inbound struct {
	where   string // the queue or list, for logs
	deliver Deliver
	log     *slog.Logger
	hold    HoldOptions

	mu      sync.Mutex
	seen    *dedup.Window
	held    map[string][]*heldMsg // by client, oldest first
	byID    map[string]*heldMsg
	bytes   int64
	ctx     context.Context // the drain's; set by start
	drains  sync.WaitGroup
	running bool // a drain goroutine runs
	stopped bool
}

type heldMsg struct {
	m      Message
	finish func()
}

func newInbound(where string, deliver Deliver, hold HoldOptions, log *slog.Logger) *inbound {
	return &inbound{
		where: where, deliver: deliver, log: log, hold: hold.withDefaults(),
		seen: dedup.NewWindow(seenWindow), held: map[string][]*heldMsg{}, byID: map[string]*heldMsg{},
		ctx: context.Background(),
	}
}

// start sets the context held messages are delivered under.
func (in *inbound) start(ctx context.Context) {
	in.mu.Lock()
	in.ctx = ctx
	in.mu.Unlock()
}

// offer hands a received message to its stream, or holds it. finish is
// called once the message is done with (taken, refused or dropped): a
// transport deletes its copy then; it must not block. answer is false for
// a copy of a message already decided: the sender has its outcome.
func (in *inbound) offer(ctx context.Context, m Message, finish func()) (out Outcome, answer bool) {
	in.mu.Lock()
	if h := in.byID[m.ID]; h != nil && m.ID != "" {
		// A copy of a held message (its storage lease ran out): the newest
		// copy is the one to delete once the stream takes it.
		h.finish = finish
		in.mu.Unlock()
		return Taken, false
	}
	if m.ID != "" && !in.seen.Add(m.ID) {
		in.mu.Unlock()
		in.log.Debug("backplane: dropping a duplicate", "at", in.where, "id", m.ID)
		finish()
		return 0, false
	}
	if in.stopped {
		in.mu.Unlock()
		finish()
		return Gone, true
	}
	if waiting := in.held[m.ClientID]; len(waiting) > 0 {
		// Messages wait for this stream already: this one goes behind them.
		out = in.holdLocked(m, finish)
		in.mu.Unlock()
		if out == Full {
			finish()
		}
		return out, true
	}
	// Under the lock: a drain must not deliver a later message of this
	// stream between this delivery and its hold.
	out = in.deliver(ctx, m)
	switch out {
	case Full:
		out = in.holdLocked(m, finish)
		in.mu.Unlock()
		if out == Full {
			finish()
		}
		return out, true
	case Gone:
		in.mu.Unlock()
		in.log.Debug("backplane: a message that can never be delivered is dropped; its sender is told",
			"at", in.where, "client", m.ClientID, "id", m.ID)
		finish()
		return Gone, true
	default:
		in.mu.Unlock()
		finish()
		return Taken, true
	}
}

// holdLocked keeps m for its stream, within the bounds: Taken when held,
// Full when refused. The caller holds mu and calls finish on Full.
func (in *inbound) holdLocked(m Message, finish func()) Outcome {
	n := int64(len(m.Body))
	if len(in.held[m.ClientID]) >= in.hold.PerStream || in.bytes+n > in.hold.Bytes {
		in.log.Warn("backplane: refusing a message: its stream's inbox is full and so is what is held for it; its sender is told",
			"at", in.where, "client", m.ClientID, "id", m.ID, "held", len(in.held[m.ClientID]), "heldBytes", in.bytes)
		return Full
	}
	h := &heldMsg{m: m, finish: finish}
	if len(in.held[m.ClientID]) == 0 {
		in.log.Info("backplane: a stream's inbox is full: holding its messages, in order, until it has room",
			"at", in.where, "client", m.ClientID)
	}
	in.held[m.ClientID] = append(in.held[m.ClientID], h)
	if m.ID != "" {
		in.byID[m.ID] = h
	}
	in.bytes += n
	if !in.running {
		in.running = true
		ctx := in.ctx
		in.drains.Go(func() { in.drain(ctx) })
	}
	return Taken
}

// drain offers held messages to their streams until none is left.
func (in *inbound) drain(ctx context.Context) {
	t := time.NewTicker(drainEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			in.mu.Lock()
			in.running = false
			in.mu.Unlock()
			return
		case <-t.C:
		}
		var done []func()
		in.mu.Lock()
		for client, msgs := range in.held {
			i, gone := 0, false
			for i < len(msgs) {
				out := in.deliver(ctx, msgs[i].m)
				if out == Full {
					break
				}
				if out == Gone {
					gone = true
					break
				}
				i++
			}
			if gone {
				in.log.Warn("backplane: dropping the messages held for a stream that ended", "at", in.where, "client", client, "messages", len(msgs)-i)
				i = len(msgs)
			}
			for _, h := range msgs[:i] {
				done = append(done, h.finish)
				delete(in.byID, h.m.ID)
				in.bytes -= int64(len(h.m.Body))
			}
			if i == len(msgs) {
				delete(in.held, client)
			} else {
				in.held[client] = msgs[i:]
			}
		}
		last := len(in.held) == 0 || in.stopped
		if last {
			in.running = false
		}
		in.mu.Unlock()
		for _, f := range done {
			f()
		}
		if last {
			return
		}
	}
}

// stop drops what is held (the streams are closed) and waits for the drain.
func (in *inbound) stop() {
	in.mu.Lock()
	in.stopped = true
	in.held, in.byID, in.bytes = map[string][]*heldMsg{}, map[string]*heldMsg{}, 0
	in.mu.Unlock()
	in.drains.Wait()
}

// known reports whether message id is held or was decided already.
func (in *inbound) known(id string) bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.byID[id] != nil || in.seen.Contains(id)
}

// heldCount returns the messages held for all streams.
func (in *inbound) heldCount() int {
	in.mu.Lock()
	defer in.mu.Unlock()
	return len(in.byID)
}

// waiters are the senders waiting for outcomes, by message id.
type waiters struct {
	mu sync.Mutex
	m  map[string]chan Outcome
}

func (w *waiters) add(id string) chan Outcome {
	ch := make(chan Outcome, 1)
	w.mu.Lock()
	if w.m == nil {
		w.m = map[string]chan Outcome{}
	}
	w.m[id] = ch
	w.mu.Unlock()
	return ch
}

func (w *waiters) remove(id string) {
	w.mu.Lock()
	delete(w.m, id)
	w.mu.Unlock()
}

// resolve hands out to the sender of id, if it still waits.
func (w *waiters) resolve(id string, out Outcome) bool {
	w.mu.Lock()
	ch := w.m[id]
	delete(w.m, id)
	w.mu.Unlock()
	if ch == nil {
		return false
	}
	ch <- out
	return true
}

func (w *waiters) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.m)
}
