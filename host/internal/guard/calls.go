package guard

import (
	"context"
	"errors"
	"fmt"

	"github.com/funcmcp/funcmcp/host/internal/jsonrpc"
)

// ShuttingDownMessage answers a call still running when a stopping host
// gives up waiting for it (JSON-RPC -32000).
const ShuttingDownMessage = "Server shutting down: the call was stopped before it finished."

// ErrShuttingDown is the cause of a call's context once a stopping host
// gave up waiting for it.
var ErrShuttingDown = errors.New("the host is shutting down")

// ShuttingDown is the JSON-RPC error of a call stopped by [Calls.StopWaiting].
func ShuttingDown() *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeServerError, Message: ShuttingDownMessage}
}

// Calls bounds the tool calls in flight and stops them at shutdown. It is
// safe for concurrent use.
type Calls struct {
	slots chan struct{} // one token per call in flight
	drain context.Context
	stop  context.CancelFunc
}

// NewCalls admits up to max calls at once.
func NewCalls(max int) *Calls {
	c := &Calls{slots: make(chan struct{}, max)}
	c.drain, c.stop = context.WithCancel(context.Background())
	return c
}

// Admit takes a call slot, or refuses with a busy error (-32000) when all
// are taken. release gives the slot back.
func (c *Calls) Admit() (release func(), err error) {
	select {
	case c.slots <- struct{}{}:
		return func() { <-c.slots }, nil
	default:
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeServerError,
			Message: fmt.Sprintf("Server busy: %d tool calls are running, the most allowed; try again later.", cap(c.slots))}
	}
}

// InFlight returns the number of calls admitted and not yet released.
func (c *Calls) InFlight() int { return len(c.slots) }

// Drainable returns ctx, cancelled with ErrShuttingDown once StopWaiting is
// called; stop releases it when the call ends.
func (c *Calls) Drainable(ctx context.Context) (_ context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	after := context.AfterFunc(c.drain, func() { cancel(ErrShuttingDown) })
	return ctx, func() { after(); cancel(nil) }
}

// StopWaiting cancels every call running now or later with
// ErrShuttingDown.
func (c *Calls) StopWaiting() { c.stop() }
