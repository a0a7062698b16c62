package mcp

import (
	"context"
	"encoding/json"

	"github.com/funcmcp/funcmcp/host/internal/mcp/clientreq"
	"github.com/funcmcp/funcmcp/host/internal/mcp/taskrun"
	"github.com/funcmcp/funcmcp/host/internal/tasks"
	"github.com/funcmcp/funcmcp/metadata"
)

// Tasks run again on another instance. A tool that declares reruns
// (metadata.TaskSupport.Reruns: it is idempotent for its arguments) has
// its call kept in the task's record. When an instance judges the
// instance running such a task stopped (judgeStopped, on a tasks/get), it
// claims the task with one conditional write (tasks.Claim): exactly one of
// the instances that judge the same run claims it, and runs the call again
// from the start, for the same owner, counting the run; the client reads
// "working" and a status message saying so. Out of runs, the task ends
// failed as one of a tool without reruns does.

// MaxRerunBytes bounds what a task's record keeps of its call for a re-run
// (see taskrun.MaxRerunBytes).
const MaxRerunBytes = taskrun.MaxRerunBytes

// keepForRerun keeps in run what its record needs to run the call again,
// when the tool allows reruns and the call is small enough.
func (h *handler) keepForRerun(run *taskrun.Run, call *CallRequest, meta *RequestMeta, ts *metadata.TaskSupport) {
	if ts.Reruns <= 0 {
		return
	}
	rc := taskrun.RerunCall{Arguments: call.RawArguments, ProtocolVersion: call.ProtocolVersion, SessionID: call.SessionID,
		ClientInfo: call.ClientInfo, Transport: call.Transport, Headers: call.Headers}
	if meta != nil {
		rc.Capabilities = meta.ClientCapabilities
	}
	if rc.Arguments == nil && call.Arguments != nil {
		rc.Arguments, _ = json.Marshal(call.Arguments)
	}
	data, err := rc.Encode()
	if err != nil {
		h.log.Warn("mcp: a task's call is too large to keep for a run on another instance: it runs once",
			"tool", call.Name, "bytes", len(data), "limit", MaxRerunBytes)
		return
	}
	run.KeepForRerun(data, ts.Reruns+1)
}

// prepareRerun prepares the run again of task t (see
// taskrun.Service.prepareRerun): nil when this instance does not serve its
// tool with reruns, or the kept call does not read.
func (h *handler) prepareRerun(t *tasks.Task) func(claimed *tasks.Task) {
	ts := h.taskToolSupport(t.Tool)
	if ts == nil || ts.Reruns <= 0 {
		return nil
	}
	rc, args, err := taskrun.DecodeRerun(t.Rerun)
	if err != nil {
		h.log.Error("mcp: a task's kept call does not read: it is not run again", "task", t.ID, "tool", t.Tool, "error", err)
		return nil
	}
	return func(claimed *tasks.Task) {
		ctx, cancel := context.WithCancelCause(context.Background())
		run := h.tasks.Adopt(ctx, cancel, claimed)
		if run == nil {
			cancel(taskrun.ErrHostStopping) // claimed, not run: another instance judges it again
			return
		}
		call := &CallRequest{Name: claimed.Tool, Arguments: args, RawArguments: rc.Arguments, ProtocolVersion: rc.ProtocolVersion,
			SessionID: rc.SessionID, ClientInfo: rc.ClientInfo, Headers: rc.Headers, Transport: rc.Transport, Attempt: run.Attempt(), Owner: claimed.Owner,
			Meta: &RequestMeta{ProtocolVersion: rc.ProtocolVersion, ClientInfo: rc.ClientInfo, ClientCapabilities: rc.Capabilities}}
		call.Notify = clientreq.NewNotifier(h.notifiers, clientreq.NotifierOptions{MinLevel: -1, Mode: metadata.InputModeStream, Caps: rc.Capabilities, Task: run})
		call.Task = run.Work()
		go func() { _, _ = h.runTask(ctx, cancel, run, call) }()
	}
}
