package taskrun

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/host/internal/jsonrpc"
	"github.com/funcmcp/funcmcp/host/internal/owner"
	"github.com/funcmcp/funcmcp/host/internal/tasks"
	"github.com/funcmcp/funcmcp/metadata"
)

// testJSON reads JSON as the core does, for the params the tests send (no
// repeated names).
type testJSON struct{}

func (testJSON) Member(obj []byte, key string) []byte {
	var m map[string]json.RawMessage
	if json.Unmarshal(obj, &m) != nil {
		return nil
	}
	return m[key]
}

func (testJSON) Members(obj []byte, each func(key, val []byte) bool) {
	var m map[string]json.RawMessage
	_ = json.Unmarshal(obj, &m)
	for k, v := range m {
		key, _ := json.Marshal(k)
		if !each(key, v) {
			return
		}
	}
}

func (testJSON) String(raw []byte) (string, bool) {
	var s string
	return s, len(raw) > 0 && raw[0] == '"' && json.Unmarshal(raw, &s) == nil
}

func newTestService(t *testing.T) (*Service, tasks.Store) {
	t.Helper()
	store := tasks.NewMemory(nil)
	s := NewService(&Options{Store: store}, "i1", slog.New(slog.NewTextHandler(io.Discard, nil)))
	t.Cleanup(func() { s.Stop(context.Background()) })
	return s, store
}

// TestServeTaskMethods: the task methods read their params, reach only
// the tasks of the request's owner, and say what to answer.
func TestServeTaskMethods(t *testing.T) {
	s, store := newTestService(t)
	ctx := context.Background()
	alice := owner.KeyOwner("alice")
	require.True(t, alice.Verified(), "a verified owner has a scope of their own")
	now := time.Now()
	require.NoError(t, store.Create(ctx, &tasks.Task{ID: "t1", Scope: Scope(alice), Owner: alice, Tool: "job", Instance: "i1",
		Status: tasks.StatusInputRequired, Created: now, Updated: now, Heartbeat: now, TTL: time.Hour,
		InputRequests: map[string]json.RawMessage{"k": json.RawMessage(`{"method":"elicitation/create","params":{}}`)}}))
	serve := func(method, params string, who owner.ID) Answer {
		return s.Serve(ctx, Request{Method: method, Params: json.RawMessage(params), JSON: testJSON{}, Owner: who, MaxAnswerBytes: 64})
	}
	invalid := func(message string) Answer {
		return Answer{Error: &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: message}}
	}

	assert.Equal(t, invalid("Invalid params: taskId must be a non-empty string."), serve(metadata.MethodTasksGet, `{}`, alice))
	assert.Equal(t, invalid("Invalid params: taskId must be a non-empty string."), serve(metadata.MethodTasksGet, `{"taskId":7}`, alice))
	assert.Equal(t, invalid("Invalid params: no task 't1' (unknown, expired, or made with other credentials)."),
		serve(metadata.MethodTasksGet, `{"taskId":"t1"}`, owner.ID("")), "another owner's task does not exist")

	a := serve(metadata.MethodTasksGet, `{"taskId":"t1"}`, alice)
	require.Nil(t, a.Error)
	require.NotNil(t, a.Task)
	assert.Equal(t, tasks.StatusInputRequired, a.Task.Status)

	const badAnswers = "Invalid params: inputResponses must be an object of the answers (objects) by key."
	assert.Equal(t, invalid(badAnswers), serve(metadata.MethodTasksUpdate, `{"taskId":"t1","inputResponses":[]}`, alice))
	assert.Equal(t, invalid(badAnswers), serve(metadata.MethodTasksUpdate, `{"taskId":"t1","inputResponses":{"k":"yes"}}`, alice))
	assert.Equal(t, invalid(badAnswers), serve(metadata.MethodTasksUpdate,
		`{"taskId":"t1","inputResponses":{"k":{"v":"`+strings.Repeat("x", 64)+`"}}}`, alice), "over MaxAnswerBytes")
	assert.Equal(t, Answer{}, serve(metadata.MethodTasksUpdate, `{"taskId":"t1","inputResponses":{"k": {"action" : "accept"}}}`, alice))
	got, err := store.Get(ctx, "t1")
	require.NoError(t, err)
	assert.Equal(t, tasks.StatusWorking, got.Status, "answered: working again")
	assert.JSONEq(t, `{"action":"accept"}`, string(got.InputResponses["k"]))
	assert.Equal(t, `{"action":"accept"}`, string(got.InputResponses["k"]), "kept compact")

	assert.Equal(t, Answer{}, serve(metadata.MethodTasksCancel, `{"taskId":"t1"}`, alice))
	got, err = store.Get(ctx, "t1")
	require.NoError(t, err)
	assert.Equal(t, tasks.StatusCancelled, got.Status)

	var head, tail bytes.Buffer
	body := s.AppendResult(&head, &tail, got, []byte(`{"m":1}`))
	assert.Nil(t, body)
	assert.Contains(t, head.String(), `{"resultType":"complete","taskId":"t1","status":"cancelled"`)
	assert.Equal(t, `,"_meta":{"m":1}}`, tail.String())
}

// TestDeclared: the extension is declared by a non-null member of
// capabilities.extensions.
func TestDeclared(t *testing.T) {
	for caps, want := range map[string]bool{
		`{}`: false, `{"extensions":null}`: false, `{"extensions":{"` + metadata.ExtensionTasks + `":null}}`: false,
		`{"extensions":{"` + metadata.ExtensionTasks + `":{}}}`: true,
	} {
		assert.Equal(t, want, Declared([]byte(caps), testJSON{}), caps)
	}
}

// TestLaunch: a call launched as a task answers with its handle once the
// record exists and stores the encoded outcome; a deferred call that ends
// before it becomes a task answers as a synchronous call.
func TestLaunch(t *testing.T) {
	s, store := newTestService(t)
	ctx := context.Background()
	release := make(chan struct{})
	inv := Invocation{
		Invoke: func(ctx context.Context) (*metadata.CallToolResult, error) {
			<-release
			return &metadata.CallToolResult{Content: []json.RawMessage{metadata.TextContent("done")}}, nil
		},
		Encode: func(res *metadata.CallToolResult) ([]byte, error) { return []byte(`{"encoded":true}`), nil },
	}
	var attached *Run
	l := s.Launch(ctx, Call{Tool: "job", Support: &metadata.TaskSupport{}, Owner: owner.KeyOwner("alice"),
		Attach: func(r *Run) Invocation { attached = r; return inv }})
	require.NotNil(t, l.Task, "the task exists before the call ends")
	assert.Equal(t, attached.ID(), l.Task.ID)
	assert.Contains(t, string(Created(l.Task, []byte(`{}`))), `{"resultType":"task","taskId":"`+l.Task.ID+`","status":"working"`)
	close(release)
	require.Eventually(t, func() bool {
		got, err := store.Get(ctx, l.Task.ID)
		return err == nil && got.Status == tasks.StatusCompleted && string(got.Result) == `{"encoded":true}`
	}, 5*time.Second, 10*time.Millisecond)

	l = s.Launch(ctx, Call{Tool: "later", Support: &metadata.TaskSupport{Deferred: true}, Owner: owner.KeyOwner("alice"),
		Attach: func(*Run) Invocation {
			return Invocation{Invoke: func(context.Context) (*metadata.CallToolResult, error) { return metadata.ErrorResult("sync"), nil }}
		}})
	assert.Nil(t, l.Task)
	assert.False(t, l.Left)
	require.NotNil(t, l.Result)
	assert.True(t, l.Result.IsError)
}
