package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"github.com/funcmcp/funcmcp/host/internal/jsonrpc"
	"github.com/funcmcp/funcmcp/host/internal/mcp/taskrun"
	"github.com/funcmcp/funcmcp/host/internal/owner"
	"github.com/funcmcp/funcmcp/host/internal/tasks"
	"github.com/funcmcp/funcmcp/internal/jsonx"
	"github.com/funcmcp/funcmcp/metadata"
)

// MCP tasks (the tasks extension, io.modelcontextprotocol/tasks, SEP-2663)
// on 2026-07-28.
//
// A request whose _meta clientCapabilities declare the extension, calling a
// tool that supports tasks, gets a task: the host stores a record in the
// task store every instance shares, answers
//
//	{"resultType":"task","taskId":…,"status":"working","createdAt":…,
//	 "lastUpdatedAt":…,"ttlMs":…,"pollIntervalMs":…,"_meta":{…}}
//
// and runs the invocation on its own, past the request. The client polls
// tasks/get, answers the task's input requests with tasks/update and may
// cancel it with tasks/cancel; any instance answers those from the store.
// A tool declared Deferred first runs as a synchronous call (asking the
// input-required way) and becomes a task when its handler asks for it.
//
// A task belongs to the verified owner of the request that made it (see
// taskScope): a request of another owner is told it does not exist. Task
// ids are 128 random bits, what keeps unauthenticated clients' tasks
// apart.

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

// clientHasTasks reports whether a capabilities object declares the tasks
// extension.
func clientHasTasks(caps []byte) bool {
	ext := member(caps, "extensions")
	if ext == nil || ext[0] != '{' {
		return false
	}
	v := member(ext, ExtensionTasks)
	return v != nil && v[0] != 'n'
}

// tasksRequiredData is the data of the -32021 error of a request that needs
// the tasks extension.
var tasksRequiredData = json.RawMessage(`{"requiredCapabilities":{"extensions":{"` + ExtensionTasks + `":{}}}}`)

// taskScope names who may read, answer and cancel the tasks a request
// makes: its verified owner (Exchange.Owner: an access token's user, whatever
// token of theirs it carries, or the holders of a function key the host
// checked). Unauthenticated requests share one scope whatever credentials
// they send, since nothing checked them: their task ids, 128 random bits
// given only to the client that made the task, are what keeps one
// client's tasks from another's. The scope is not counted: the limits
// count owners.
func taskScope(id owner.ID) string {
	if id.Verified() {
		return string(id)
	}
	return anonymousScope
}

// anonymousScope is the task scope of unauthenticated requests.
const anonymousScope = "anonymous"

// taskToolSupport returns the task declaration of tool name when tasks are
// on, nil otherwise.
func (h *handler) taskToolSupport(name string) *metadata.TaskSupport {
	if h.tasks == nil {
		return nil
	}
	if r := h.srv.resolve(TargetTool, name); r != nil {
		return r.Task
	}
	return nil
}

// serveTaskMethod answers tasks/get, tasks/update and tasks/cancel.
func (h *handler) serveTaskMethod(req *request, msg *message, meta *RequestMeta) {
	if h.tasks == nil || !clientHasTasks(meta.ClientCapabilities) {
		req.setOutcome("error " + strconv.Itoa(CodeMissingRequiredClientCapability))
		h.refuse(req.w, http.StatusBadRequest, validID(req.id), CodeMissingRequiredClientCapability,
			"Missing required client capability: "+msg.Method+" needs the "+ExtensionTasks+" extension in _meta."+
				MetaClientCapabilities+".extensions.", tasksRequiredData)
		return
	}
	id, ok := stringValue(member(msg.Params, "taskId"))
	if !ok || id == "" {
		h.rpcError(req, CodeInvalidParams, "Invalid params: taskId must be a non-empty string.", nil)
		return
	}
	ctx := req.r.Context()
	scope := taskScope(req.Owner())
	var err error
	switch msg.Method {
	case methodTasksGet:
		var t *tasks.Task
		if t, err = h.tasks.Get(ctx, scope, id); err == nil {
			req.linked = t.Trace
			h.writeDetailedTask(req, t)
			return
		}
	case methodTasksUpdate:
		var answers map[string]json.RawMessage
		if answers, ok = taskAnswers(member(msg.Params, paramInputResponses)); !ok {
			h.rpcError(req, CodeInvalidParams, "Invalid params: inputResponses must be an object of the answers (objects) by key.", nil)
			return
		}
		err = h.tasks.Answer(ctx, scope, id, answers)
	case methodTasksCancel:
		err = h.tasks.Cancel(ctx, scope, id)
	}
	switch {
	case err == nil:
		h.result(req, h.modernReplies.ack)
	case errors.Is(err, tasks.ErrNotFound):
		h.rpcError(req, CodeInvalidParams, "Invalid params: no task '"+jsonx.SafeText(id)+"' (unknown, expired, or made with other credentials).", nil)
	default:
		h.log.Error("mcp: reading or writing a task failed", "method", msg.Method, "task", jsonx.SafeText(id), "error", err)
		h.rpcError(req, CodeInternalError, "Internal error: the task store failed.", nil)
	}
}

// taskAnswers reads the inputResponses of tasks/update: an object whose
// members are objects (the results of the requests).
func taskAnswers(raw []byte) (map[string]json.RawMessage, bool) {
	out := map[string]json.RawMessage{}
	if raw == nil || raw[0] == 'n' {
		return out, true
	}
	if raw[0] != '{' {
		return nil, false
	}
	size := 0
	it := members(raw)
	for key, val, ok := it.Next(); ok; key, val, ok = it.Next() {
		k, _ := stringValue(key)
		if val[0] != '{' {
			return nil, false
		}
		out[k] = compactJSON(val)
		size += len(k) + len(val)
	}
	return out, size <= MaxInputResponseBytes
}

// createTaskResult is the answer to a tools/call that made task t.
func (h *handler) createTaskResult(t *tasks.Task) []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	taskrun.AppendHead(&b, "task", t)
	b.WriteString(`,"_meta":`)
	b.Write(h.modernReplies.metaOnly)
	b.WriteByte('}')
	return b.Bytes()
}

// writeDetailedTask answers tasks/get: the task with its result, its
// error or its pending input requests. The result is written from the
// record as it is, never copied: one kept result serves every reader.
func (h *handler) writeDetailedTask(req *request, t *tasks.Task) {
	head, tail := getBuffer(), getBuffer()
	defer putBuffer(head)
	defer putBuffer(tail)
	beginReply(head, req.sse, req.id)
	head.WriteString(`,"result":{`)
	taskrun.AppendHead(head, "complete", t)
	var body []byte
	switch {
	case t.Status == tasks.StatusCompleted && len(t.Result) > 0:
		head.WriteString(`,"result":`)
		body = t.Result
	case t.Status == tasks.StatusFailed && t.Error != nil:
		e, err := jsonrpc.AppendErrorMember(head.AvailableBuffer(), t.Error.Code, t.Error.Message, t.Error.Data)
		head.Write(e) // complete even when its data did not encode
		if err != nil {
			h.log.Error("mcp: encoding a task's error data failed", "task", t.ID, "error", err)
		}
	case t.Status == tasks.StatusInputRequired && len(t.InputRequests) > 0:
		head.WriteString(`,"inputRequests":`)
		r, _ := json.Marshal(t.InputRequests) // raw messages from the store: valid
		head.Write(r)
	}
	tail.WriteString(`,"_meta":`)
	tail.Write(h.modernReplies.metaOnly)
	tail.WriteByte('}')
	endReply(tail, req.sse)
	h.sendParts(req.w, req.sse, head.Bytes(), body, tail.String())
}
