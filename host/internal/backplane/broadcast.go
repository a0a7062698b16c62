package backplane

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/funcmcp/funcmcp/host/internal/dedup"
)

// Broadcasts carry bytes the backplane does not read (a change a client
// may listen for, in its wire form) from one instance to every other live
// instance, at most once each. Each backplane has a Broadcast method and
// hands what it receives to the OnBroadcast function of its options.

// MaxBroadcast bounds the bytes of one broadcast.
const MaxBroadcast = 64 << 10

// broadcastBuffer bounds the broadcasts received and not yet handed to
// OnBroadcast; beyond, they are dropped (and logged): the receive loop
// never waits for OnBroadcast.
const broadcastBuffer = 1024

// broadcastWindow is how many broadcast ids an instance remembers, to
// drop a copy.
const broadcastWindow = 8192

// Broadcaster sends bytes to every other live instance; each backplane is
// one.
type Broadcaster interface {
	// Broadcast sends wire (at most MaxBroadcast bytes) to every other
	// live instance, at most once each, and returns once the backplane
	// took it for all of them (not once they received it), within the
	// backplane's outcome timeout. An instance that cannot be reached does
	// not hold up the others: the error names how many were missed.
	Broadcast(ctx context.Context, wire []byte) error
}

// ErrBroadcastTooLarge: a broadcast over MaxBroadcast bytes, or empty.
var ErrBroadcastTooLarge = errors.New("a broadcast is 1 to 65536 bytes")

// checkBroadcast checks what Broadcast is given.
func checkBroadcast(wire []byte) error {
	if len(wire) == 0 || len(wire) > MaxBroadcast {
		return fmt.Errorf("broadcasting %d bytes: %w", len(wire), ErrBroadcastTooLarge)
	}
	return nil
}

// BroadcastError is returned by Broadcast when some instances did not
// take the broadcast: the others did.
type BroadcastError struct {
	Missed, Of int
	Err        error // the first failure
}

func (e *BroadcastError) Error() string {
	return fmt.Sprintf("broadcasting: %d of %d instances did not take it: %v", e.Missed, e.Of, e.Err)
}

func (e *BroadcastError) Unwrap() error { return e.Err }

// newBroadcastID names a broadcast: 26 random letters and digits.
func newBroadcastID() string { return rand.Text() }

// fanIn hands the broadcasts an instance receives to its OnBroadcast, one
// at a time on a goroutine of its own, dropping copies (by id) and, when
// OnBroadcast is behind by broadcastBuffer, the newest.
type fanIn struct {
	where string
	on    func([]byte)
	log   *slog.Logger
	seen  *dedup.Window

	mu      sync.Mutex
	ch      chan []byte // nil until started, and once stopped
	stopped atomic.Bool
	dropped atomic.Int64
}

func newFanIn(where string, on func([]byte), log *slog.Logger) *fanIn {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &fanIn{where: where, on: on, log: log, seen: dedup.NewWindow(broadcastWindow)}
}

// start begins handing broadcasts to OnBroadcast (none: nothing to do).
func (f *fanIn) start() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.on == nil || f.ch != nil || f.stopped.Load() {
		return
	}
	ch := make(chan []byte, broadcastBuffer)
	f.ch = ch
	go func() {
		for wire := range ch {
			if !f.stopped.Load() {
				f.on(wire)
			}
		}
	}()
}

// known reports whether broadcast id was received already.
func (f *fanIn) known(id string) bool { return f.seen.Contains(id) }

// offer hands one broadcast received to OnBroadcast without waiting, and
// reports whether it was taken: a copy (an id seen already), one that
// finds the buffer full, or one after stop, is dropped.
func (f *fanIn) offer(id string, wire []byte) bool {
	if id != "" && !f.seen.Add(id) {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ch == nil {
		return false
	}
	select {
	case f.ch <- wire:
		return true
	default:
		if n := f.dropped.Add(1); n == 1 || n%100 == 0 {
			f.log.Warn("backplane: dropping broadcasts: the receiver of this instance is behind",
				"at", f.where, "dropped", n, "buffer", broadcastBuffer)
		}
		return false
	}
}

// stop ends the hand-over: what is still buffered is dropped; a call of
// OnBroadcast under way is not waited for.
func (f *fanIn) stop() {
	f.stopped.Store(true)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ch != nil {
		close(f.ch)
		f.ch = nil
	}
}

var (
	_ Broadcaster = (*Memory)(nil)
	_ Broadcaster = (*Queue)(nil)
	_ Broadcaster = (*Redis)(nil)
)
