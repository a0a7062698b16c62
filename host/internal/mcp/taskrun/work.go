package taskrun

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/funcmcp/funcmcp/host/internal/jsonrpc"
	"github.com/funcmcp/funcmcp/host/internal/owner"
	"github.com/funcmcp/funcmcp/metadata"
)

// Work is the task side of one tools/call that runs as a task or may
// become one, the steps its work goes through while the host runs it: the
// host admits the call (its owner's task slot), then calls
// [Work.Admitted], which starts the run's span and makes the task's record
// when the run waits for admission; it invokes the tool, then calls
// [Work.Ended], which turns a failure of the function into the task's
// error, ends the run's span and counts the task's end. The host reads
// nothing of the task: whether the call is one, its id and its status stay
// here.
type Work struct {
	run *Run
	end func(RunEnd) // ends the run's span; nil when telemetry is off or before Admitted
}

// Work returns the steps of the run's work (see [Work]).
func (r *Run) Work() *Work { return &Work{run: r} }

// RunTelemetry traces the runs of tasks (telemetry on); see
// [Options.Telemetry].
type RunTelemetry interface {
	// StartRun starts the span of the work of a call of tool that runs as
	// a task or may become one. The work runs under the context it
	// returns (the task's record keeps its traceparent), and end ends the
	// span once, saying how the work ended.
	StartRun(ctx context.Context, tool string) (_ context.Context, end func(RunEnd))
}

// RunEnd is how the work of a call that was or might have become a task
// ended.
type RunEnd struct {
	// TaskID is the id of the task, "" when the call stayed synchronous
	// (or its task could not be made).
	TaskID string
	// Status is the task's status by its work's end: "completed",
	// "failed" or "cancelled"; "" when there is no task.
	Status string
	// NotCreated: the store refused the task's record, and nothing ran.
	NotCreated bool
	// ToolError: the task completed with the tool's own isError result.
	ToolError bool
}

// Admitted runs once the call has its slot: it starts the run's span and,
// for a run whose record waits for admission ([Run.MakeOnAdmission]),
// makes the record. It returns the context the work runs under; a store
// that refuses the task makes the call fail with a *jsonrpc.Error saying
// why, and nothing runs.
func (w *Work) Admitted(ctx context.Context) (context.Context, error) {
	if t := w.run.s.telemetry; t != nil {
		ctx, w.end = t.StartRun(ctx, w.run.tool)
	}
	if err := w.run.Admit(ctx); err != nil {
		w.ended(RunEnd{NotCreated: true})
		return ctx, err
	}
	return ctx, nil
}

// Ended runs once the work is over: res and err are what the call answers
// as a synchronous call, failure the error its task ends failed with when
// the function failed (nil otherwise). It returns the call's outcome (for
// a call that runs as a task, failure in place of the isError result),
// ends the run's span and counts the task's end. ctx is the work's: ended,
// the task was cancelled.
func (w *Work) Ended(ctx context.Context, res *metadata.CallToolResult, err error, failure *jsonrpc.Error) (*metadata.CallToolResult, error) {
	if !w.run.On() { // it stayed a synchronous call
		w.ended(RunEnd{})
		return res, err
	}
	if failure != nil {
		// A task tells a failure of the function (failed, with this
		// error) from the tool's own error result (completed).
		res, err = nil, failure
	}
	e := RunEnd{TaskID: w.run.ID(), Status: "completed"}
	switch {
	case ctx.Err() != nil:
		e.Status = "cancelled"
	case err != nil:
		e.Status = "failed"
	case res != nil && res.IsError:
		e.ToolError = true
	}
	w.ended(e)
	return res, err
}

func (w *Work) ended(e RunEnd) {
	if w.end != nil {
		w.end(e)
		w.end = nil
	}
}

// Admit makes the task's record for a run that waits for its call to be
// admitted ([Run.MakeOnAdmission]); otherwise it does nothing. A store
// that refuses the task makes it fail with a *jsonrpc.Error saying why
// (see [Service.NotCreated]).
func (r *Run) Admit(ctx context.Context) error {
	if r == nil || !r.onAdmission {
		return nil
	}
	if _, err := r.Start(ctx); err != nil {
		return r.s.NotCreated(r.tool, err)
	}
	return nil
}

// NotCreated is the error of a call of tool whose task could not be made
// (err is the store's): busy, naming the limit, when the store refused
// it; an internal error otherwise, logged unless the host is stopping or
// the call was cancelled.
func (s *Service) NotCreated(tool string, err error) *jsonrpc.Error {
	if le, ok := errors.AsType[*owner.LimitError](err); ok {
		return &jsonrpc.Error{Code: jsonrpc.CodeServerError, Message: "Server busy: " + le.Error() + "; try again once some tasks have expired."}
	}
	if errors.Is(err, ErrHostStopping) || errors.Is(err, context.Canceled) {
		return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "Internal error: the task could not be created: " + err.Error() + "."}
	}
	s.log.Error("mcp: creating a task failed", "tool", tool, "error", err)
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "Internal error: the task could not be created."}
}

// Run runs the work of a call that runs as a task or may become one, on
// the goroutine of its own that the work has (ctx is the work's, and
// cancel ends it once the work returns): call runs the tool, and once the
// task exists its record keeps the outcome, as outcome encodes it (the
// call's result, or its protocol error). Work that stopped (cancelled,
// expired, the host stopping) is stored as such, not as the tool's
// outcome; a panic ends the task failed. It returns the call's own
// outcome, for a call that ended before it became a task.
func (w *Work) Run(ctx context.Context, cancel context.CancelCauseFunc, call func(context.Context) (*metadata.CallToolResult, error),
	outcome func(*metadata.CallToolResult, error) (json.RawMessage, *jsonrpc.Error)) (res *metadata.CallToolResult, err error) {
	r := w.run
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("calling tool %q: panic: %v", r.tool, p)
			if r.On() {
				r.Finish(ctx, nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "Internal error"})
			}
		}
		cancel(nil)
	}()
	go r.WatchWhenStarted(ctx)
	res, err = call(ctx)
	if r.On() {
		result, failure := outcome(res, err)
		if ctx.Err() != nil {
			// Cancelled (the record says so already), expired, or the
			// host is stopping: not the tool's outcome.
			result, failure = nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError,
				Message: "The task's work stopped: " + context.Cause(ctx).Error() + "."}
		}
		r.Finish(ctx, result, failure)
	}
	return res, err
}
