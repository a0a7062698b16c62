package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/funcmcp/funcmcp/host/internal/jsonrpc"
	"github.com/funcmcp/funcmcp/host/internal/mcp/taskrun"
	"github.com/funcmcp/funcmcp/host/internal/owner"
	"github.com/funcmcp/funcmcp/host/internal/tasks"
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
	run := h.tasks.NewRun(ctx, cancel, taskScope(req.r), owner.Of(req.r), call.Name, ts)
	n := &Notifier{h: h, minLevel: -1, mode: metadata.InputModeInputRequired, caps: meta.ClientCapabilities, answers: in, task: run}
	call.Notify = n
	call.Headers = req.r.Header.Clone()
	h.keepForRerun(run, call, meta, ts)
	if !ts.Deferred {
		if h.srv.AdmitsTasks {
			run.MakeOnAdmission() // made by Notifier.Admitted, once the call has its slot
		} else if _, err := n.startTask(ctx); err != nil {
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

// TaskState is metadata.TaskStateRunning when the call runs as a task,
// TaskStateOffered when it may become one ([Notifier.StartTask]), "" when
// it cannot.
func (n *Notifier) TaskState() string {
	switch {
	case n == nil || n.task == nil:
		return ""
	case n.task.On():
		return metadata.TaskStateRunning
	}
	return metadata.TaskStateOffered
}

// TaskID is the id of the call's task once it exists, "" before or when
// the call is no task.
func (n *Notifier) TaskID() string {
	if !n.InTask() {
		return ""
	}
	return n.task.ID()
}

// InTask reports whether the call runs as a task: a failure of the
// function is then the task's error, not an isError result.
func (n *Notifier) InTask() bool { return n != nil && n.task.On() }

// MayBeTask reports whether the call runs as a task or may become one (a
// tool declared Deferred, called by a client that negotiated tasks): work
// that may outlive its request.
func (n *Notifier) MayBeTask() bool { return n != nil && n.task != nil }

// ErrNoTask: the call cannot become a task.
var ErrNoTask = errors.New("this call cannot run as a task")

// StartTask makes the call a task now, for a tool declared Deferred: the
// client gets the task handle and requests to the client wait for
// tasks/update from now on. Starting a task that runs is no error.
func (n *Notifier) StartTask(ctx context.Context) (*metadata.StartTaskReply, error) {
	if n == nil || n.task == nil {
		return nil, ErrNoTask
	}
	t, err := n.startTask(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNoTask, err)
	}
	return &metadata.StartTaskReply{TaskID: t.ID, InputMode: metadata.InputModeStream}, nil
}

// Admitted makes the record of the call's task, for a task that waits for
// its call to be admitted; otherwise it does nothing. A store that refuses
// the task (one of its limits reached) makes the call fail with a
// *ProtocolError saying which limit.
func (n *Notifier) Admitted(ctx context.Context) error {
	if n == nil || n.task == nil || !n.task.OnAdmission() {
		return nil
	}
	if _, err := n.startTask(ctx); err != nil {
		return n.h.taskNotCreated(n.task.Tool(), err)
	}
	return nil
}

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

// startTask makes the call a task now.
func (n *Notifier) startTask(ctx context.Context) (*tasks.Task, error) {
	t, err := n.task.Start(ctx)
	if err != nil {
		return nil, err
	}
	n.mu.Lock()
	n.mode = metadata.InputModeStream
	n.mu.Unlock()
	return t, nil
}
