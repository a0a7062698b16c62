package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/funcmcp/funcmcp/host/internal/mcp"
	"github.com/funcmcp/funcmcp/internal/jsonx"
)

// Defaults of the bounds in [Options].
const (
	DefaultMaxCallsInFlight = 256
	DefaultMaxConnections   = 1024
	DefaultMaxArgumentBytes = 1 << 20
	DefaultMaxArgumentDepth = 64
	DefaultMaxArgumentKeys  = 10000
)

// JSON-RPC codes of the host's own refusals.
const (
	// codeBusy answers a call over MaxCallsInFlight.
	codeBusy = -32000
	// codeShuttingDown answers a call still running when the host stops.
	codeShuttingDown = -32000
)

const shuttingDownMessage = "Server shutting down: the call was stopped before it finished."

// errShuttingDown is the cause of a call's context when the drain bound of a
// stopping host passed.
var errShuttingDown = errors.New("the host is shutting down")

// limits are the per-call bounds.
type limits struct {
	argBytes, argDepth, argKeys int
	calls                       chan struct{} // one token per call in flight
}

func newLimits(o *Options) *limits {
	return &limits{
		argBytes: o.MaxArgumentBytes,
		argDepth: o.MaxArgumentDepth,
		argKeys:  o.MaxArgumentKeys,
		calls:    make(chan struct{}, o.MaxCallsInFlight),
	}
}

// checkArguments refuses arguments larger, deeper or with more object keys
// than the limits, before anything else is done with them.
func (l *limits) checkArguments(args map[string]json.RawMessage) error {
	size, keys, depth := 0, len(args), 1
	for _, raw := range args {
		size += len(raw)
		if size > l.argBytes {
			return invalidArgs(fmt.Sprintf("the arguments exceed %d bytes", l.argBytes))
		}
		d, k := jsonx.Measure(raw)
		depth = max(depth, d+1)
		keys += k
	}
	switch {
	case depth > l.argDepth:
		return invalidArgs(fmt.Sprintf("the arguments nest deeper than %d levels", l.argDepth))
	case keys > l.argKeys:
		return invalidArgs(fmt.Sprintf("the arguments hold more than %d object keys", l.argKeys))
	}
	return nil
}

func invalidArgs(reason string) error {
	return &mcp.ProtocolError{Code: mcp.CodeInvalidParams, Message: "Invalid params: " + reason + "."}
}

// admit takes a call slot, or refuses with a busy error when all are taken.
func (h *Host) admit() (release func(), err error) {
	select {
	case h.limits.calls <- struct{}{}:
		return func() { <-h.limits.calls }, nil
	default:
		return nil, &mcp.ProtocolError{Code: codeBusy,
			Message: fmt.Sprintf("Server busy: %d tool calls are running, the most allowed; try again later.", cap(h.limits.calls))}
	}
}

// drainable returns ctx, cancelled with errShuttingDown once the host gives
// up waiting for running calls at shutdown.
func (h *Host) drainable(ctx context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(h.drain, func() { cancel(errShuttingDown) })
	return ctx, func() { stop(); cancel(nil) }
}
