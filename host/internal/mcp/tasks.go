package mcp

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/funcmcp/funcmcp/host/internal/mcp/clientreq"
	"github.com/funcmcp/funcmcp/host/internal/mcp/taskrun"
	"github.com/funcmcp/funcmcp/host/internal/owner"
	"github.com/funcmcp/funcmcp/host/internal/tasks"
	"github.com/funcmcp/funcmcp/metadata"
)

// MCP tasks (the tasks extension, SEP-2663) on 2026-07-28: package taskrun
// runs them and answers for them; the core hands it the requests.

// ExtensionTasks names the tasks extension in capabilities.extensions.
const ExtensionTasks = metadata.ExtensionTasks

// Task defaults, as package taskrun (which runs the tasks) has them.
const (
	DefaultTaskTTL          = taskrun.DefaultTaskTTL
	MaxTaskTTL              = taskrun.MaxTaskTTL
	DefaultTaskPollInterval = taskrun.DefaultTaskPollInterval
	DefaultTaskHeartbeat    = taskrun.DefaultTaskHeartbeat
)

// TaskOptions turn tasks on (see [Options.Tasks]).
type TaskOptions = taskrun.Options

// CallTask is the task side of a tools/call that runs as a task or may
// become one ([CallRequest.Task]); see [taskrun.CallTask].
type CallTask = taskrun.CallTask

// ErrNoTask: the call cannot become a task.
var ErrNoTask = clientreq.ErrNoTask

// clientHasTasks reports whether a capabilities object declares the tasks
// extension (see taskrun.Declared).
func clientHasTasks(caps []byte) bool { return taskrun.Declared(caps, wireJSON{}) }

// tasksRequiredData is the data of the -32021 error of a request that
// needs the tasks extension.
var tasksRequiredData = taskrun.RequiredData

// taskScope is the task scope of a request of owner id (see
// taskrun.Scope).
func taskScope(id owner.ID) string { return taskrun.Scope(id) }

// serveTasks answers tasks/get, tasks/update and tasks/cancel (see
// taskrun.Service.Serve).
func (h *handler) serveTasks(req *request) bool {
	if h.tasks == nil || !clientHasTasks(req.meta.ClientCapabilities) {
		req.setOutcome("error " + strconv.Itoa(CodeMissingRequiredClientCapability))
		h.refuse(req.w, http.StatusBadRequest, validID(req.id), CodeMissingRequiredClientCapability,
			"Missing required client capability: "+req.msg.Method+" needs the "+ExtensionTasks+" extension in _meta."+
				MetaClientCapabilities+".extensions.", tasksRequiredData)
		return true
	}
	a := h.tasks.Serve(req.r.Context(), taskrun.Request{Method: req.msg.Method, Params: req.msg.Params, JSON: wireJSON{},
		Owner: req.Owner(), MaxAnswerBytes: MaxInputResponseBytes})
	switch {
	case a.Error != nil:
		h.rpcError(req, a.Error.Code, a.Error.Message, nil)
	case a.Task != nil:
		req.linked = a.Task.Trace
		head, tail := getBuffer(), getBuffer()
		defer putBuffer(head)
		defer putBuffer(tail)
		beginReply(head, req.sse, req.id)
		head.WriteString(`,"result":`)
		body := h.tasks.AppendResult(head, tail, a.Task, h.modernReplies.metaOnly)
		endReply(tail, req.sse)
		h.sendParts(req.w, req.sse, head.Bytes(), body, tail.String())
	default:
		h.result(req, h.modernReplies.ack)
	}
	return true
}

// wireJSON reads the params of the task methods for package taskrun.
type wireJSON struct{}

func (wireJSON) Member(obj []byte, key string) []byte { return member(obj, key) }
func (wireJSON) String(raw []byte) (string, bool)     { return stringValue(raw) }
func (wireJSON) Members(obj []byte, each func(key, val []byte) bool) {
	it := members(obj)
	for k, v, ok := it.Next(); ok && each(k, v); k, v, ok = it.Next() {
	}
}

// taskCalls is what the tools/calls of tasks need of the core, here and
// when a task of a stopped instance runs again here: the core's tools/call
// and the answers a call's task writes.
type taskCalls struct {
	replies   *replies
	modern    *modernReplies
	notifiers *clientreq.Channel
	call      func(context.Context, *CallRequest) (*metadata.CallToolResult, error)
	resolve   func(TargetKind, string) *Resolved
	admits    bool // Server.AdmitsTasks
}

// launch runs a tools/call of a client that negotiated tasks, for a tool
// that supports them, as a task (see taskrun.Service.Launch), and answers
// with the task's handle. When the call ended before it became one, it
// returns how (Result, Err) for the caller to answer as a synchronous
// call; nil otherwise.
func (c *taskCalls) launch(svc *taskrun.Service, req *request, call *CallRequest, meta *RequestMeta, in *inputState, ts *metadata.TaskSupport) *taskrun.Launched {
	call.Headers = req.r.Header.Clone()
	l := svc.Launch(req.r.Context(), taskrun.Call{Tool: call.Name, Support: ts, Owner: req.Owner(), OnAdmission: c.admits,
		Kept: taskrun.RerunCall{Arguments: call.RawArguments, ProtocolVersion: call.ProtocolVersion, SessionID: call.SessionID,
			ClientInfo: call.ClientInfo, Transport: call.Transport, Headers: call.Headers, Capabilities: meta.ClientCapabilities},
		Args: call.Arguments,
		Attach: func(run *taskrun.Run) taskrun.Invocation {
			return c.attach(call, run, clientreq.NotifierOptions{MinLevel: -1, Mode: metadata.InputModeInputRequired,
				Caps: meta.ClientCapabilities, Answers: in, Task: run})
		}})
	switch {
	case l.Refused != nil:
		c.replies.rpcError(req, l.Refused.Code, l.Refused.Message, nil)
	case l.Task != nil:
		req.setOutcome("task")
		c.replies.result(req, taskrun.Created(l.Task, c.modern.metaOnly))
	case !l.Left:
		return &l
	}
	return nil
}

// attach gives call its run, with a notifier of options o, and returns
// how the run invokes it and encodes its result: as the modern tools/call
// answers it.
func (c *taskCalls) attach(call *CallRequest, run *taskrun.Run, o clientreq.NotifierOptions) taskrun.Invocation {
	call.Notify, call.Task = clientreq.NewNotifier(c.notifiers, o), run.Work()
	return taskrun.Invocation{Invoke: func(ctx context.Context) (*metadata.CallToolResult, error) { return c.call(ctx, call) },
		Encode: func(res *metadata.CallToolResult) ([]byte, error) {
			cp := *res
			cp.Meta = c.modern.withServerInfo(res.Meta)
			return cp.AppendCheckedJSON(nil, c.modern.callHead)
		}}
}

// support is the task declaration of tool name.
func (c *taskCalls) support(name string) *metadata.TaskSupport {
	if r := c.resolve(TargetTool, name); r != nil {
		return r.Task
	}
	return nil
}

// rerun makes again the call of task t, which this instance claimed to
// run it again, from what its record keeps (see taskrun.Service.OnRerun).
func (c *taskCalls) rerun(t *tasks.Task, rc taskrun.RerunCall, args map[string]json.RawMessage, run *taskrun.Run) taskrun.Invocation {
	call := &CallRequest{Name: t.Tool, Arguments: args, RawArguments: rc.Arguments, ProtocolVersion: rc.ProtocolVersion,
		SessionID: rc.SessionID, ClientInfo: rc.ClientInfo, Headers: rc.Headers, Transport: rc.Transport, Attempt: run.Attempt(), Owner: t.Owner,
		Meta: &RequestMeta{ProtocolVersion: rc.ProtocolVersion, ClientInfo: rc.ClientInfo, ClientCapabilities: rc.Capabilities}}
	return c.attach(call, run, clientreq.NotifierOptions{MinLevel: -1, Mode: metadata.InputModeStream, Caps: rc.Capabilities, Task: run})
}
