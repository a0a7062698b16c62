package taskrun

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"

	"github.com/funcmcp/funcmcp/host/internal/jsonrpc"
	"github.com/funcmcp/funcmcp/host/internal/owner"
	"github.com/funcmcp/funcmcp/host/internal/tasks"
	"github.com/funcmcp/funcmcp/internal/jsonx"
	"github.com/funcmcp/funcmcp/metadata"
)

// The task methods: tasks/get, tasks/update and tasks/cancel, answered
// from the store whichever instance runs the task. The core checks that
// the client declared the extension, hands the request over
// ([Service.Serve]) and writes the [Answer]: its error, the task whole
// ([Service.AppendResult]) or the empty result.

// JSON reads the params of a request as the core reads every message
// (member names matched exactly, the last of a repeated one kept): the
// core's reading of the wire, which this package does not import.
type JSON interface {
	// Member returns the raw value of member key of object obj, nil when
	// it is absent or obj is not an object.
	Member(obj []byte, key string) []byte
	// Members calls each with the raw name (quotes included) and the raw
	// value of every member of object obj, in order, until each returns
	// false.
	Members(obj []byte, each func(key, val []byte) bool)
	// String decodes a raw JSON string; ok is false for anything else.
	String(raw []byte) (string, bool)
}

// Declared reports whether a client's capabilities object (read with j)
// declares the tasks extension, which the task methods and a call as a
// task need.
func Declared(caps []byte, j JSON) bool {
	ext := j.Member(caps, "extensions")
	if ext == nil || ext[0] != '{' {
		return false
	}
	v := j.Member(ext, metadata.ExtensionTasks)
	return v != nil && v[0] != 'n'
}

// RequiredData is the data of the -32021 error of a request that needs
// the tasks extension.
var RequiredData = json.RawMessage(`{"requiredCapabilities":{"extensions":{"` + metadata.ExtensionTasks + `":{}}}}`)

// Request is a request of a task method, as the core hands it over.
type Request struct {
	// Method is tasks/get, tasks/update or tasks/cancel.
	Method string
	// Params are the request's params, checked JSON, read with JSON.
	Params json.RawMessage
	JSON   JSON
	// Owner is the verified owner of the request: it reaches their tasks
	// (see [Scope]).
	Owner owner.ID
	// MaxAnswerBytes bounds the answers of a tasks/update (their keys and
	// values).
	MaxAnswerBytes int
}

// Scope names who may read, answer and cancel the tasks a request makes:
// its verified owner (an access token's user, whatever token of theirs it
// carries, or the holders of a function key the host checked).
// Unauthenticated requests share one scope whatever credentials they
// send, since nothing checked them: their task ids, 128 random bits given
// only to the client that made the task, are what keeps one client's
// tasks from another's. The scope is not counted: the limits count
// owners.
func Scope(id owner.ID) string {
	if id.Verified() {
		return string(id)
	}
	return anonymousScope
}

// anonymousScope is the task scope of unauthenticated requests.
const anonymousScope = "anonymous"

// Answer is what a task method answers: Error when it failed, else for
// tasks/get Task (the task whole, written with [Service.AppendResult]),
// else the empty result.
type Answer struct {
	Error *jsonrpc.Error
	Task  *tasks.Task
}

// paramTaskID and paramInputResponses are the params of the task methods.
const (
	paramTaskID         = "taskId"
	paramInputResponses = "inputResponses"
)

// Serve answers a request of a task method: it reads its params, reads or
// writes the task in the store (see [Service.Get], [Service.Answer],
// [Service.Cancel]) and says what to answer.
func (s *Service) Serve(ctx context.Context, q Request) Answer {
	scope := Scope(q.Owner)
	id, ok := q.JSON.String(q.JSON.Member(q.Params, paramTaskID))
	if !ok || id == "" {
		return invalidParams("Invalid params: taskId must be a non-empty string.")
	}
	var err error
	switch q.Method {
	case metadata.MethodTasksGet:
		var t *tasks.Task
		if t, err = s.Get(ctx, scope, id); err == nil {
			return Answer{Task: t}
		}
	case metadata.MethodTasksUpdate:
		var answers map[string]json.RawMessage
		if answers, ok = q.answers(); !ok {
			return invalidParams("Invalid params: inputResponses must be an object of the answers (objects) by key.")
		}
		err = s.Answer(ctx, scope, id, answers)
	case metadata.MethodTasksCancel:
		err = s.Cancel(ctx, scope, id)
	}
	switch {
	case err == nil:
		return Answer{}
	case errors.Is(err, tasks.ErrNotFound):
		return invalidParams("Invalid params: no task '" + jsonx.SafeText(id) + "' (unknown, expired, or made with other credentials).")
	default:
		s.log.Error("mcp: reading or writing a task failed", "method", q.Method, "task", jsonx.SafeText(id), "error", err)
		return Answer{Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "Internal error: the task store failed."}}
	}
}

func invalidParams(message string) Answer {
	return Answer{Error: &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: message}}
}

// answers reads the inputResponses of tasks/update: an object whose
// members are objects (the results of the requests), kept compact.
func (q *Request) answers() (map[string]json.RawMessage, bool) {
	raw := q.JSON.Member(q.Params, paramInputResponses)
	out := map[string]json.RawMessage{}
	if raw == nil || raw[0] == 'n' {
		return out, true
	}
	if raw[0] != '{' {
		return nil, false
	}
	size, ok := 0, true
	q.JSON.Members(raw, func(key, val []byte) bool {
		k, _ := q.JSON.String(key)
		if val[0] != '{' {
			ok = false
			return false
		}
		out[k] = compact(val)
		size += len(k) + len(val)
		return true
	})
	if !ok {
		return nil, false
	}
	return out, size <= q.MaxAnswerBytes
}

// compact returns a copy of valid JSON on one line.
func compact(v []byte) json.RawMessage {
	out, err := jsonx.AppendCompact(nil, v)
	if err != nil {
		return bytes.Clone(v)
	}
	return out
}

// AppendResult writes the result of tasks/get for task t, after
// `"result":`, with meta as its _meta: to b the task with its error or its
// pending input requests, or, completed, up to its result, which it
// returns as body, from the record as it is, never copied (one kept result
// serves every reader); to tail what follows body.
func (s *Service) AppendResult(b, tail *bytes.Buffer, t *tasks.Task, meta []byte) (body []byte) {
	tail.WriteString(`,"_meta":`)
	tail.Write(meta)
	tail.WriteByte('}')
	b.WriteByte('{')
	AppendHead(b, "complete", t)
	switch {
	case t.Status == tasks.StatusCompleted && len(t.Result) > 0:
		b.WriteString(`,"result":`)
		body = t.Result
	case t.Status == tasks.StatusFailed && t.Error != nil:
		e, err := jsonrpc.AppendErrorMember(b.AvailableBuffer(), t.Error.Code, t.Error.Message, t.Error.Data)
		b.Write(e) // complete even when its data did not encode
		if err != nil {
			s.log.Error("mcp: encoding a task's error data failed", "task", t.ID, "error", err)
		}
	case t.Status == tasks.StatusInputRequired && len(t.InputRequests) > 0:
		b.WriteString(`,"inputRequests":`)
		r, _ := json.Marshal(t.InputRequests) // raw messages from the store: valid
		b.Write(r)
	}
	return body
}

// Created is the result of the tools/call that made task t: its handle,
// with meta as its _meta.
func Created(t *tasks.Task, meta []byte) []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	AppendHead(&b, "task", t)
	b.WriteString(`,"_meta":`)
	b.Write(meta)
	b.WriteByte('}')
	return b.Bytes()
}
