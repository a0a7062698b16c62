package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/funcmcp/funcmcp/host/internal/jsonrpc"
	"github.com/funcmcp/funcmcp/host/internal/mcp/clientreq"
	"github.com/funcmcp/funcmcp/host/internal/mcp/taskrun"
	"github.com/funcmcp/funcmcp/host/internal/owner"
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
	call.Notify = n
	call.Headers = req.r.Header.Clone()
	h.keepForRerun(run, call, meta, ts)
	if !ts.Deferred {
		if h.srv.AdmitsTasks {
			run.MakeOnAdmission() // made by Notifier.Admitted, once the call has its slot
		} else if _, err := n.MakeTask(ctx); err != nil {
			cancel(err)
			pe := h.taskNotCreated(call.Name, err)
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

// runTask runs the work of a task (or of a call that may become one) and
// stores its outcome once the task exists; it returns the call's own
// outcome, for a call that ended before it became a task.
func (h *handler) runTask(ctx context.Context, cancel context.CancelCauseFunc, run *taskrun.Run, call *CallRequest) (res *metadata.CallToolResult, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("calling tool %q: panic: %v", call.Name, p)
			if run.On() {
				run.Finish(ctx, nil, &jsonrpc.Error{Code: CodeInternalError, Message: "Internal error"})
			}
		}
		cancel(nil)
	}()
	go run.WatchWhenStarted(ctx)
	res, err = h.callTool(ctx, call)
	if run.On() {
		result, failure := h.taskOutcome(call, res, err)
		if ctx.Err() != nil {
			// Cancelled (the record says so already), expired, or the
			// host is stopping: not the tool's outcome.
			result, failure = nil, &jsonrpc.Error{Code: CodeInternalError,
				Message: "The task's work stopped: " + context.Cause(ctx).Error() + "."}
		}
		run.Finish(ctx, result, failure)
	}
	return res, err
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

// taskNotCreated is the error of a call whose task could not be made:
// busy, naming the limit, when the store refused it.
func (h *handler) taskNotCreated(tool string, err error) *ProtocolError {
	if le, ok := errors.AsType[*owner.LimitError](err); ok {
		return &ProtocolError{Code: codeServerError, Message: "Server busy: " + le.Error() + "; try again once some tasks have expired."}
	}
	if errors.Is(err, taskrun.ErrHostStopping) || errors.Is(err, context.Canceled) {
		return &ProtocolError{Code: CodeInternalError, Message: "Internal error: the task could not be created: " + err.Error() + "."}
	}
	h.log.Error("mcp: creating a task failed", "tool", tool, "error", err)
	return &ProtocolError{Code: CodeInternalError, Message: "Internal error: the task could not be created."}
}
