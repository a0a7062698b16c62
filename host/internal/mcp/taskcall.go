package mcp

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/funcmcp/funcmcp/host/internal/jsonrpc"
	"github.com/funcmcp/funcmcp/host/internal/mcp/clientreq"
	"github.com/funcmcp/funcmcp/host/internal/mcp/taskrun"
	"github.com/funcmcp/funcmcp/metadata"
)

// callAsTask runs a tools/call of a client that negotiated tasks, for a
// tool that supports them: as a task from the start, or, for a deferred
// tool, synchronously until its handler makes it one. The call runs on a
// goroutine with a context of its own; this request answers with the task
// handle once the task exists, or with the call's own result when it ended
// first.
func (h *handler) callAsTask(req *request, call *CallRequest, meta *RequestMeta, in *inputState, ident callIdentity, ts *metadata.TaskSupport) {
	ctx, cancel := context.WithCancelCause(context.WithoutCancel(req.r.Context()))
	run := h.tasks.NewRun(ctx, cancel, taskScope(req.Owner()), req.Owner(), call.Name, ts)
	n := clientreq.NewNotifier(h.notifiers, clientreq.NotifierOptions{MinLevel: -1, Mode: metadata.InputModeInputRequired, Caps: meta.ClientCapabilities, Answers: in, Task: run})
	call.Notify, call.Task = n, run.Work()
	call.Headers = req.r.Header.Clone()
	h.keepForRerun(run, call, meta, ts)
	if !ts.Deferred {
		if h.srv.AdmitsTasks {
			run.MakeOnAdmission() // made by CallTask.Admitted, once the call has its slot
		} else if _, err := n.MakeTask(ctx); err != nil {
			cancel(err)
			pe := h.tasks.NotCreated(call.Name, err)
			h.rpcError(req, pe.Code, pe.Message, nil)
			return
		}
	}
	// Until the task exists, the client leaving ends the call.
	stop := context.AfterFunc(req.r.Context(), func() {
		if !run.On() {
			cancel(context.Cause(req.r.Context()))
		}
	})
	defer stop()
	var (
		res  *metadata.CallToolResult
		err  error
		done = make(chan struct{})
	)
	go func() {
		defer close(done)
		res, err = h.runTask(ctx, cancel, run, call)
	}()
	select {
	case <-run.Started():
	case <-done:
	case <-req.r.Context().Done():
		return
	}
	if run.On() {
		req.setOutcome("task")
		h.result(req, h.createTaskResult(run.Created()))
		return
	}
	h.writeCall(req, call, meta, ident, res, err)
}

// runTask runs the work of a task (or of a call that may become one)
// through its taskrun.Work (see taskrun.Work.Run): the tool's outcome is
// stored as the synchronous call would have answered it.
func (h *handler) runTask(ctx context.Context, cancel context.CancelCauseFunc, run *taskrun.Run, call *CallRequest) (*metadata.CallToolResult, error) {
	return run.Work().Run(ctx, cancel, func(ctx context.Context) (*metadata.CallToolResult, error) { return h.callTool(ctx, call) },
		func(res *metadata.CallToolResult, err error) (json.RawMessage, *jsonrpc.Error) {
			return h.taskOutcome(call, res, err)
		})
}

// taskOutcome is what a task's record keeps of the call: the result as
// the synchronous call would have answered it, or the protocol error.
func (h *handler) taskOutcome(call *CallRequest, res *metadata.CallToolResult, err error) (json.RawMessage, *jsonrpc.Error) {
	if err != nil {
		if pe, ok := errors.AsType[*ProtocolError](err); ok {
			return nil, pe
		}
		if errors.Is(err, taskrun.ErrHostStopping) {
			return nil, &jsonrpc.Error{Code: CodeInternalError, Message: "The host stopped while the task was running."}
		}
		h.log.Error("mcp tools/call failed", "tool", call.Name, "error", err)
		return nil, &jsonrpc.Error{Code: CodeInternalError, Message: "Internal error"}
	}
	if res == nil {
		return nil, &jsonrpc.Error{Code: CodeInternalError, Message: "Internal error: the tool returned no result."}
	}
	cp := *res
	cp.Meta = h.modernReplies.withServerInfo(res.Meta)
	out, aerr := cp.AppendCheckedJSON(nil, h.modernReplies.callHead)
	if aerr != nil {
		h.log.Error("mcp tools/call failed", "tool", call.Name, "error", aerr)
		return nil, &jsonrpc.Error{Code: CodeInternalError, Message: "Internal error"}
	}
	return out, nil
}

// ErrNoTask: the call cannot become a task.
var ErrNoTask = clientreq.ErrNoTask

// CallTask is the task side of a tools/call that runs as a task or may
// become one ([CallRequest.Task], a *taskrun.Work): the steps of its
// work, which [Server.CallTool] drives, so that the app's side of a call
// reads nothing of its task. CallTool admits the call (for a call with a
// Task, against its owner's running tasks), then calls Admitted, runs the
// tool and calls Ended with what it ran to.
type CallTask interface {
	// Admitted runs once the call has its slot: it starts the run's span
	// and makes the task's record when it waits for admission (see
	// [Server.AdmitsTasks]). The work runs under the context it returns;
	// an error (the record could not be made: nothing may run) is the
	// call's.
	Admitted(ctx context.Context) (context.Context, error)
	// Ended runs once the work is over: res and err are what the call
	// answers as a synchronous call, failure the error its task ends
	// failed with when the function failed (nil otherwise). It returns
	// the call's outcome: for a call that runs as a task, failure in
	// place of the isError result.
	Ended(ctx context.Context, res *metadata.CallToolResult, err error, failure *ProtocolError) (*metadata.CallToolResult, error)
}

var _ CallTask = (*taskrun.Work)(nil)
