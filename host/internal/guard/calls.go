package guard

import (
	"context"
	"errors"
	"fmt"

	"github.com/funcmcp/funcmcp/host/internal/jsonrpc"
	"github.com/funcmcp/funcmcp/host/internal/owner"
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

// TaskLimits bounds the task work among the calls in flight: PerOwner for
// one owner, Global for all (below the call limit, so that slots are kept
// for synchronous calls). PerOwnerSetting and GlobalSetting name what
// changes each, for refusals.
type TaskLimits struct {
	owner.Limit
	PerOwnerSetting, GlobalSetting string
}

// Calls bounds the tool calls in flight, and the task work among them per
// owner and in all, and stops them at shutdown. It is safe for concurrent
// use.
type Calls struct {
	slots         chan struct{} // one token per call in flight
	tasks         *owner.Counter
	globalSetting string
	drain         context.Context
	stop          context.CancelFunc
}

// NewCalls admits up to max calls at once, task work within tasks.
func NewCalls(max int, tasks TaskLimits) *Calls {
	c := &Calls{slots: make(chan struct{}, max),
		tasks:         owner.NewCounter("running tasks", tasks.PerOwnerSetting, tasks.Limit),
		globalSetting: tasks.GlobalSetting}
	c.drain, c.stop = context.WithCancel(context.Background())
	return c
}

// Reasons of a [Refusal].
const (
	ReasonBusy       = "busy"        // every call slot is taken
	ReasonOwnerLimit = "owner_limit" // the owner's running tasks are at their bound
	ReasonTaskLimit  = "task_limit"  // all running tasks are at their bound
)

// Refusal is a refused admission: the JSON-RPC error the client gets
// (errors.As finds it) and which limit refused (a Reason* value).
type Refusal struct {
	Reason string
	Err    *jsonrpc.Error
}

func (r *Refusal) Error() string { return r.Err.Error() }

// Unwrap gives the JSON-RPC error.
func (r *Refusal) Unwrap() error { return r.Err }

// Admit takes a call slot, or refuses with a busy error (-32000) when all
// are taken (a *Refusal, ReasonBusy). release gives the slot back.
func (c *Calls) Admit() (release func(), err error) {
	select {
	case c.slots <- struct{}{}:
		return func() { <-c.slots }, nil
	default:
		return nil, &Refusal{Reason: ReasonBusy, Err: &jsonrpc.Error{Code: jsonrpc.CodeServerError,
			Message: fmt.Sprintf("Server busy: %d tool calls are running, the most allowed; try again later.", cap(c.slots))}}
	}
}

// AdmitTask takes a call slot for task work of owner id (work that may
// outlive its request), or refuses with a busy error (-32000, a *Refusal)
// that names the limit reached: the owner's running tasks, all running
// tasks, or the calls in flight.
func (c *Calls) AdmitTask(id owner.ID) (release func(), err error) {
	releaseTask, err := c.tasks.Take(id, 1)
	if err != nil {
		msg, reason := "Server busy: "+err.Error(), ReasonOwnerLimit
		if le, ok := errors.AsType[*owner.LimitError](err); ok && le.Global {
			reason = ReasonTaskLimit
			if c.globalSetting != "" {
				msg += "; " + c.globalSetting + " changes it"
			}
		}
		return nil, &Refusal{Reason: reason, Err: &jsonrpc.Error{Code: jsonrpc.CodeServerError, Message: msg + "; try again later."}}
	}
	releaseCall, err := c.Admit()
	if err != nil {
		releaseTask()
		return nil, err
	}
	return func() { releaseCall(); releaseTask() }, nil
}

// InFlight returns the number of calls admitted and not yet released.
func (c *Calls) InFlight() int { return len(c.slots) }

// TasksRunning returns the number of task works admitted and not yet
// released.
func (c *Calls) TasksRunning() int64 { return c.tasks.Total() }

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
