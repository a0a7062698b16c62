package instances

import (
	"context"
	"sync/atomic"

	"github.com/funcmcp/funcmcp/host/internal/backplane"
	"github.com/funcmcp/funcmcp/host/internal/notify"
)

// relay is the notify.Relay of the host's backplane: what this instance
// broadcasts reaches every other instance on the same backplane, and what
// they broadcast goes to the function set with receive (the hub's
// Receive). The backplane carries the bytes without reading them; the hub
// decodes and checks them (notify.Decode).
type relay struct {
	bp backplane.Broadcaster
	fn atomic.Pointer[func(wire []byte)]
}

var _ notify.Relay = (*relay)(nil)

// Broadcast sends the wire form of a change to every other live instance
// (none without a backplane).
func (r *relay) Broadcast(ctx context.Context, wire []byte) error {
	if r.bp == nil {
		return nil
	}
	return r.bp.Broadcast(ctx, wire)
}

// receive sets where the changes other instances broadcast go; until it
// is set they are dropped. fn must not block: the backplane hands them
// over one at a time and drops them when fn falls behind.
func (r *relay) receive(fn func(wire []byte)) { r.fn.Store(&fn) }

// deliver is the backplane's OnBroadcast.
func (r *relay) deliver(wire []byte) {
	if fn := r.fn.Load(); fn != nil && *fn != nil {
		(*fn)(wire)
	}
}

// onBroadcast returns the OnBroadcast of a backplane whose relay is not
// made yet: what arrives goes to the relay's receiver once both are set.
func (l *Legacy) onBroadcast(wire []byte) { l.relay.deliver(wire) }

// Relay is what carries this instance's changes to the others over the
// backplane; nil when the backplane cannot carry them.
func (l *Legacy) Relay() notify.Relay {
	if l.relay.bp == nil {
		return nil
	}
	return &l.relay
}

// ReceiveChanges sets where the changes other instances relay go (the
// hub's Receive); until it is set they are dropped. fn must not block.
func (l *Legacy) ReceiveChanges(fn func(wire []byte)) { l.relay.receive(fn) }
