package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/host/internal/caller"
	"github.com/funcmcp/funcmcp/host/internal/owner"
	"github.com/funcmcp/funcmcp/host/internal/tasks"
	"github.com/funcmcp/funcmcp/metadata"
)

// taskTools adds task declarations to the fake tools.
type taskTools struct {
	*fakeTools
	support map[string]*metadata.TaskSupport
	admits  bool // Server.AdmitsTasks: the call makes the record (Notifier.Admitted)
}

func (t *taskTools) TaskSupport(name string) *metadata.TaskSupport { return t.support[name] }

var tasksCaps = map[string]any{"elicitation": map[string]any{}, "extensions": map[string]any{ExtensionTasks: map[string]any{}}}

// taskServer serves echo (synchronous only) and the task tools of call on
// store, with heartbeats of beat.
func taskServer(t *testing.T, store tasks.Store, beat time.Duration, call func(ctx context.Context, req *CallRequest) (*metadata.CallToolResult, error)) *testServer {
	t.Helper()
	return taskServerWith(t, store, beat, false, call)
}

// taskServerWith is taskServer whose tools admit calls themselves when
// admits is set, as the host does.
func taskServerWith(t *testing.T, store tasks.Store, beat time.Duration, admits bool, call func(ctx context.Context, req *CallRequest) (*metadata.CallToolResult, error), tweak ...func(*handler)) *testServer {
	t.Helper()
	ft := newFakeTools()
	ft.call = func(ctx context.Context, req *CallRequest) (*metadata.CallToolResult, error) {
		if req.Name == "echo" {
			return echoCall(ctx, req)
		}
		return call(ctx, req)
	}
	tt := &taskTools{fakeTools: ft, support: map[string]*metadata.TaskSupport{
		"job":      {Support: metadata.TaskOptional, PollIntervalMs: 50},
		"must":     {Support: metadata.TaskRequired},
		"deferred": {Support: metadata.TaskRequired, Deferred: true},
		"again":    {Support: metadata.TaskOptional, Reruns: 2},
	}, admits: admits}
	logs := &syncBuffer{}
	h := NewHandler(serverOf(tt), &Options{Sealer: testSealer, Logger: slog.New(slog.NewTextHandler(logs, nil)),
		ServerInfo: Implementation{Name: "modern-test", Version: "9.9.9"},
		Tasks:      &TaskOptions{Store: store, Heartbeat: beat}})
	for _, f := range tweak {
		f(h.h)
	}
	srv := httptest.NewServer(checkedKeys(h))
	t.Cleanup(func() {
		srv.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		h.StopTasks(ctx)
	})
	return &testServer{Server: srv, tools: ft, logs: logs}
}

// taskCall is a 2026-07-28 tools/call of name with caps.
func taskCall(name string, args map[string]any, caps map[string]any, extra map[string]any) string {
	meta := modernMeta(ModernVersion)
	meta[MetaClientCapabilities] = caps
	params := map[string]any{"name": name, "arguments": args, "_meta": meta}
	for k, v := range extra {
		params[k] = v
	}
	return rpc(1, "tools/call", params)
}

// taskRequest is a tasks/* request for task id.
func taskRequest(method, id string, caps map[string]any, extra map[string]any) string {
	meta := modernMeta(ModernVersion)
	meta[MetaClientCapabilities] = caps
	params := map[string]any{"taskId": id, "_meta": meta}
	for k, v := range extra {
		params[k] = v
	}
	return rpc(2, method, params)
}

// envelope is a JSON-RPC reply with a task-shaped result.
type envelope struct {
	Result map[string]json.RawMessage `json:"result"`
	Error  *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

func (s *testServer) rpcCall(t *testing.T, body, method, name string, headers map[string]string) (int, envelope) {
	t.Helper()
	h := modernHeaders(method, name)
	for k, v := range headers {
		h[k] = v
	}
	r := s.post(t, body, h)
	var env envelope
	require.NoError(t, json.Unmarshal([]byte(r.data), &env), r.data)
	return r.status, env
}

func str(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var s string
	require.NoError(t, json.Unmarshal(raw, &s), string(raw))
	return s
}

// createTask calls name and returns the task id of its CreateTaskResult.
func createTask(t *testing.T, s *testServer, name string, args map[string]any, headers map[string]string) string {
	t.Helper()
	status, env := s.rpcCall(t, taskCall(name, args, tasksCaps, nil), methodToolsCall, name, headers)
	require.Equal(t, http.StatusOK, status)
	require.Nil(t, env.Error)
	require.Equal(t, `"task"`, string(env.Result["resultType"]))
	return str(t, env.Result["taskId"])
}

// getTask answers tasks/get of id.
func getTask(t *testing.T, s *testServer, id string, headers map[string]string) envelope {
	t.Helper()
	_, env := s.rpcCall(t, taskRequest(methodTasksGet, id, tasksCaps, nil), methodTasksGet, id, headers)
	return env
}

// waitStatus polls tasks/get until the task has status (bounded).
func waitStatus(t *testing.T, s *testServer, id, status string) envelope {
	t.Helper()
	var env envelope
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		env = getTask(t, s, id, nil)
		if assert.NotNil(c, env.Result) {
			assert.Equal(c, `"`+status+`"`, string(env.Result["status"]))
		}
	}, 10*time.Second, 10*time.Millisecond)
	return env
}

func TestTaskCreatedAndCompleted(t *testing.T) {
	release := make(chan struct{})
	s := taskServer(t, tasks.NewMemory(nil), 0, func(ctx context.Context, req *CallRequest) (*metadata.CallToolResult, error) {
		<-release
		if req.Name == "must" {
			return metadata.ErrorResult("the job failed"), nil
		}
		return &metadata.CallToolResult{Content: []json.RawMessage{metadata.TextContent("done")}}, nil
	})
	// The extension is advertised.
	_, disc := s.rpcCall(t, rpc("d", methodDiscover, map[string]any{"_meta": modernMeta(ModernVersion)}), methodDiscover, "", nil)
	assert.JSONEq(t, `{"tools":{},"extensions":{"`+ExtensionTasks+`":{}}}`, string(disc.Result["capabilities"]))

	status, env := s.rpcCall(t, taskCall("job", nil, tasksCaps, nil), methodToolsCall, "job", nil)
	require.Equal(t, http.StatusOK, status)
	require.Nil(t, env.Error)
	for _, k := range []string{"taskId", "status", "createdAt", "lastUpdatedAt", "ttlMs", "pollIntervalMs"} {
		assert.Contains(t, env.Result, k)
	}
	for _, k := range []string{"task", "result", "error", "inputRequests", "requestState", "ttl", "pollInterval"} {
		assert.NotContains(t, env.Result, k)
	}
	assert.Equal(t, `"task"`, string(env.Result["resultType"]))
	assert.Equal(t, `"working"`, string(env.Result["status"]))
	assert.Equal(t, "50", string(env.Result["pollIntervalMs"]))
	assert.Equal(t, "3600000", string(env.Result["ttlMs"]))
	assert.Regexp(t, `^"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z"$`, string(env.Result["createdAt"]))
	id := str(t, env.Result["taskId"])
	assert.Len(t, id, 26)

	// Readable at once, working, without a result.
	got := getTask(t, s, id, nil)
	require.NotNil(t, got.Result, "tasks/get right after the create")
	assert.Equal(t, `"complete"`, string(got.Result["resultType"]))
	assert.Equal(t, `"working"`, string(got.Result["status"]))
	assert.NotContains(t, got.Result, "result")

	mustID := createTask(t, s, "must", nil, nil)
	close(release)
	done := waitStatus(t, s, id, "completed")
	assert.JSONEq(t, `{"resultType":"complete","content":[{"type":"text","text":"done"}],`+serverInfoMeta+`}`, string(done.Result["result"]))
	assert.NotContains(t, done.Result, "error")
	// A tool's error result completes the task, with isError.
	failed := waitStatus(t, s, mustID, "completed")
	assert.Contains(t, string(failed.Result["result"]), `"isError":true`)
}

func TestTaskGates(t *testing.T) {
	s := taskServer(t, tasks.NewMemory(nil), 0, func(ctx context.Context, req *CallRequest) (*metadata.CallToolResult, error) {
		return &metadata.CallToolResult{Content: []json.RawMessage{metadata.TextContent("sync " + req.Name)}}, nil
	})
	plain := map[string]any{}
	// Without the extension: task methods are refused with -32021 (HTTP 400)…
	for _, m := range []string{methodTasksGet, methodTasksUpdate, methodTasksCancel} {
		status, env := s.rpcCall(t, taskRequest(m, "x", plain, nil), m, "x", nil)
		assert.Equal(t, http.StatusBadRequest, status, m)
		if assert.NotNil(t, env.Error, m) {
			assert.Equal(t, CodeMissingRequiredClientCapability, env.Error.Code, m)
		}
	}
	// …an optional tool runs synchronously…
	_, env := s.rpcCall(t, taskCall("job", nil, plain, nil), methodToolsCall, "job", nil)
	require.Nil(t, env.Error)
	assert.Equal(t, `"complete"`, string(env.Result["resultType"]))
	assert.NotContains(t, env.Result, "taskId")
	// …a required one is refused, saying what it needs.
	status, env := s.rpcCall(t, taskCall("must", nil, plain, nil), methodToolsCall, "must", nil)
	assert.Equal(t, http.StatusBadRequest, status)
	require.NotNil(t, env.Error)
	assert.Equal(t, CodeMissingRequiredClientCapability, env.Error.Code)
	assert.JSONEq(t, string(tasksRequiredData), string(env.Error.Data))
	// A synchronous tool stays synchronous, a legacy task hint is ignored.
	_, env = s.rpcCall(t, taskCall("echo", map[string]any{"text": "hi"}, tasksCaps, map[string]any{"task": map[string]any{"ttl": 60000}}), methodToolsCall, "echo", nil)
	require.Nil(t, env.Error)
	assert.NotContains(t, env.Result, "taskId")
	// Unknown ids are -32602; removed methods -32601; Mcp-Name must be the id.
	env = getTask(t, s, "nope", nil)
	require.NotNil(t, env.Error)
	assert.Equal(t, CodeInvalidParams, env.Error.Code)
	_, env = s.rpcCall(t, taskRequest(methodTasksCancel, "nope", tasksCaps, nil), methodTasksCancel, "nope", nil)
	require.NotNil(t, env.Error)
	assert.Equal(t, CodeInvalidParams, env.Error.Code)
	for _, m := range []string{"tasks/result", "tasks/list"} {
		_, env = s.rpcCall(t, taskRequest(m, "x", tasksCaps, nil), m, "", nil)
		require.NotNil(t, env.Error, m)
		assert.Equal(t, CodeMethodNotFound, env.Error.Code, m)
	}
	id := createTask(t, s, "job", nil, nil)
	status, env = s.rpcCall(t, taskRequest(methodTasksGet, id, tasksCaps, nil), methodTasksGet, "another-id", nil)
	assert.Equal(t, http.StatusBadRequest, status)
	require.NotNil(t, env.Error)
	assert.Equal(t, CodeHeaderMismatch, env.Error.Code)
}

// TestTaskBelongsToItsCredentials: a task made with a checked function
// key belongs to its holders; another key's holders are told it does not
// exist.
func TestTaskBelongsToItsCredentials(t *testing.T) {
	s := taskServer(t, tasks.NewMemory(nil), 0, func(ctx context.Context, req *CallRequest) (*metadata.CallToolResult, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	})
	alice := map[string]string{"X-Functions-Key": "alice"}
	bob := map[string]string{"X-Functions-Key": "bob"}
	id := createTask(t, s, "job", nil, alice)
	env := getTask(t, s, id, bob)
	require.NotNil(t, env.Error, "another client reads the task")
	assert.Equal(t, CodeInvalidParams, env.Error.Code)
	_, env = s.rpcCall(t, taskRequest(methodTasksCancel, id, tasksCaps, nil), methodTasksCancel, id, bob)
	require.NotNil(t, env.Error, "another client cancels the task")
	assert.Equal(t, CodeInvalidParams, env.Error.Code)
	assert.Equal(t, `"working"`, string(getTask(t, s, id, alice).Result["status"]))
	env = getTask(t, s, id, map[string]string{"Authorization": "Bearer alice"})
	require.NotNil(t, env.Error, "an unauthenticated client reads the task")
}

func TestTaskCancel(t *testing.T) {
	stopped := make(chan error, 1)
	s := taskServer(t, tasks.NewMemory(nil), 0, func(ctx context.Context, req *CallRequest) (*metadata.CallToolResult, error) {
		<-ctx.Done()
		stopped <- context.Cause(ctx)
		return metadata.ErrorResult("stopped"), nil
	})
	id := createTask(t, s, "job", nil, nil)
	_, env := s.rpcCall(t, taskRequest(methodTasksCancel, id, tasksCaps, nil), methodTasksCancel, id, nil)
	require.Nil(t, env.Error)
	assert.Equal(t, `"complete"`, string(env.Result["resultType"]))
	for _, k := range []string{"taskId", "status", "result", "error", "inputRequests"} {
		assert.NotContains(t, env.Result, k)
	}
	select {
	case cause := <-stopped:
		assert.ErrorContains(t, cause, "cancelled")
	case <-time.After(10 * time.Second):
		t.Fatal("the work was not stopped")
	}
	waitStatus(t, s, id, "cancelled")
	// Cancelling a terminal task is acknowledged the same way.
	_, env = s.rpcCall(t, taskRequest(methodTasksCancel, id, tasksCaps, nil), methodTasksCancel, id, nil)
	require.Nil(t, env.Error)
	assert.Equal(t, `"complete"`, string(env.Result["resultType"]))
	assert.Equal(t, `"cancelled"`, string(getTask(t, s, id, nil).Result["status"]))
}

func TestTaskFailed(t *testing.T) {
	s := taskServer(t, tasks.NewMemory(nil), 0, func(ctx context.Context, req *CallRequest) (*metadata.CallToolResult, error) {
		return nil, &ProtocolError{Code: CodeInternalError, Message: "the function crashed"}
	})
	id := createTask(t, s, "job", nil, nil)
	env := waitStatus(t, s, id, "failed")
	assert.JSONEq(t, `{"code":-32603,"message":"the function crashed"}`, string(env.Result["error"]))
	assert.NotContains(t, env.Result, "result")
}

// TestTaskInputRequests: requests of a task are its input requests until
// tasks/update answers them, one at a time if the client likes.
func TestTaskInputRequests(t *testing.T) {
	s := taskServer(t, tasks.NewMemory(nil), 0, func(ctx context.Context, req *CallRequest) (*metadata.CallToolResult, error) {
		var wg sync.WaitGroup
		answers := make([]string, 2)
		errs := make([]error, 2)
		for i, key := range []string{"name", "confirm"} {
			wg.Go(func() {
				r, err := req.Notify.Request(ctx, key, "elicitation/create", json.RawMessage(elicitParams))
				if err == nil {
					answers[i] = string(r.Result)
				}
				errs[i] = err
			})
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return metadata.ErrorResult(err.Error()), nil
		}
		return &metadata.CallToolResult{Content: []json.RawMessage{metadata.TextContent(strings.Join(answers, " + "))}}, nil
	})
	id := createTask(t, s, "job", nil, nil)
	var env envelope
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		env = getTask(t, s, id, nil)
		var reqs map[string]struct{ Method string }
		_ = json.Unmarshal(env.Result["inputRequests"], &reqs)
		assert.Equal(c, `"input_required"`, string(env.Result["status"]))
		assert.Len(c, reqs, 2)
		assert.Equal(c, "elicitation/create", reqs["name"].Method)
	}, 10*time.Second, 10*time.Millisecond)

	update := func(answers map[string]any) {
		t.Helper()
		_, env := s.rpcCall(t, taskRequest(methodTasksUpdate, id, tasksCaps, map[string]any{"inputResponses": answers}), methodTasksUpdate, id, nil)
		require.Nil(t, env.Error)
		assert.Equal(t, `"complete"`, string(env.Result["resultType"]))
		assert.NotContains(t, env.Result, "status")
	}
	update(map[string]any{"name": map[string]any{"action": "accept", "content": map[string]any{"name": "Ada"}}, "unknown": map[string]any{}})
	env = getTask(t, s, id, nil)
	assert.Equal(t, `"input_required"`, string(env.Result["status"]))
	var left map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(env.Result["inputRequests"], &left))
	assert.Equal(t, []string{"confirm"}, keys(left))

	update(map[string]any{"confirm": map[string]any{"action": "accept", "content": map[string]any{"confirm": true}}})
	env = waitStatus(t, s, id, "completed")
	assert.Contains(t, string(env.Result["result"]), `{\"action\":\"accept\",\"content\":{\"name\":\"Ada\"}} + {\"action\":\"accept\",\"content\":{\"confirm\":true}}`)

	_, bad := s.rpcCall(t, taskRequest(methodTasksUpdate, id, tasksCaps, map[string]any{"inputResponses": map[string]any{"x": 1}}), methodTasksUpdate, id, nil)
	require.NotNil(t, bad.Error)
	assert.Equal(t, CodeInvalidParams, bad.Error.Code)
}

func keys(m map[string]json.RawMessage) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestDeferredTask: a deferred tool asks the input-required way first,
// then becomes a task whose result has the answer.
func TestDeferredTask(t *testing.T) {
	s := taskServer(t, tasks.NewMemory(nil), 0, func(ctx context.Context, req *CallRequest) (*metadata.CallToolResult, error) {
		r, err := req.Notify.Request(ctx, "user_name", "elicitation/create", json.RawMessage(elicitParams))
		if err != nil {
			return nil, err
		}
		if r.InputRequired {
			return metadata.ErrorResult("needs input"), nil
		}
		if _, err := req.Notify.StartTask(ctx); err != nil {
			return nil, err
		}
		time.Sleep(20 * time.Millisecond) // the rest of the work runs as a task
		return &metadata.CallToolResult{Content: []json.RawMessage{metadata.TextContent("Hello " + string(r.Result))}}, nil
	})
	_, env := s.rpcCall(t, taskCall("deferred", nil, tasksCaps, nil), methodToolsCall, "deferred", nil)
	require.Nil(t, env.Error)
	assert.Equal(t, `"input_required"`, string(env.Result["resultType"]))
	assert.NotContains(t, env.Result, "taskId")
	state := str(t, env.Result["requestState"])

	answer := map[string]any{"user_name": map[string]any{"action": "accept", "content": map[string]any{"name": "Alice"}}}
	_, env = s.rpcCall(t, taskCall("deferred", nil, tasksCaps, map[string]any{"inputResponses": answer, "requestState": state}), methodToolsCall, "deferred", nil)
	require.Nil(t, env.Error)
	assert.Equal(t, `"task"`, string(env.Result["resultType"]))
	assert.NotContains(t, env.Result, "requestState")
	assert.NotContains(t, env.Result, "inputRequests")
	done := waitStatus(t, s, str(t, env.Result["taskId"]), "completed")
	assert.Contains(t, string(done.Result["result"]), "Alice")
}

// TestTaskOfAStoppedInstance: a task whose record stopped getting
// heartbeats ran on an instance that is gone; reading it ends it failed.
func TestTaskOfAStoppedInstance(t *testing.T) {
	store := tasks.NewMemory(nil)
	s := taskServer(t, store, 20*time.Millisecond, func(ctx context.Context, req *CallRequest) (*metadata.CallToolResult, error) {
		return nil, errors.New("not called")
	})
	probe := httptest.NewRequest(http.MethodPost, "/", nil)
	old := time.Now().Add(-time.Minute)
	require.NoError(t, store.Create(t.Context(), &tasks.Task{ID: "orphan", Scope: taskScope(caller.Of(probe).Owner()), Instance: "gone",
		Status: tasks.StatusWorking, Created: old, Updated: old, Heartbeat: old, TTL: time.Hour, PollInterval: time.Second}))
	first := getTask(t, s, "orphan", nil)
	assert.Equal(t, `"working"`, string(first.Result["status"]), "a stale heartbeat first read is suspect, not yet a verdict")
	env := waitStatus(t, s, "orphan", "failed")
	assert.Contains(t, string(env.Result["error"]), "(gone) stopped before the task finished")
	assert.Contains(t, string(env.Result["statusMessage"]), "Any result it produces later is discarded.")
	assert.Contains(t, s.logs.String(), "judged stopped")
}

// stallStore is a store that fails every call while stalled, as a storage
// account that cannot be reached.
type stallStore struct {
	tasks.Store
	mu      sync.Mutex
	stalled bool
	failed  int // calls failed while stalled
}

var errStalled = errors.New("the storage does not answer")

func (s *stallStore) stall(on bool) {
	s.mu.Lock()
	s.stalled = on
	s.mu.Unlock()
}

func (s *stallStore) check() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stalled {
		s.failed++
		return errStalled
	}
	return nil
}

func (s *stallStore) Get(ctx context.Context, id string) (*tasks.Task, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	return s.Store.Get(ctx, id)
}

func (s *stallStore) Update(ctx context.Context, id string, change func(*tasks.Task) error) (*tasks.Task, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	return s.Store.Update(ctx, id, change)
}

// fakeClock is a clock the test moves.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// TestTaskSurvivesStoreStall: the store stalls (no instance can reach it)
// for ten heartbeats while a task runs on A and its client polls B (the
// finding: B ended the task failed on the stale heartbeat, and A dropped
// its live work). B does not judge A on what it read during or right after
// the stall; A's next heartbeat clears it, and the task completes.
func TestTaskSurvivesStoreStall(t *testing.T) {
	const beat = 20 * time.Millisecond
	store := &stallStore{Store: tasks.NewMemory(nil)}
	clock := &fakeClock{now: time.Now()}
	useClock := func(h *handler) { h.tasks.SetClock(clock.Now) }
	release := make(chan struct{})
	a := taskServerWith(t, store, beat, false, func(ctx context.Context, req *CallRequest) (*metadata.CallToolResult, error) {
		select {
		case <-release:
			return &metadata.CallToolResult{Content: []json.RawMessage{metadata.TextContent("finished")}}, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}, useClock)
	b := taskServerWith(t, store, beat, false, func(context.Context, *CallRequest) (*metadata.CallToolResult, error) {
		return nil, errors.New("not called")
	}, useClock)
	id := createTask(t, a, "job", nil, nil)
	waitStatus(t, b, id, "working")

	store.stall(true)
	_, env := b.rpcCall(t, taskRequest(methodTasksGet, id, tasksCaps, nil), methodTasksGet, id, nil)
	require.NotNil(t, env.Error, "B cannot read the task during the stall")
	clock.Add(10 * beat)
	require.Eventually(t, func() bool { store.mu.Lock(); defer store.mu.Unlock(); return store.failed >= 3 },
		10*time.Second, time.Millisecond, "A's heartbeats fail during the stall")
	store.stall(false)

	// Right after the stall B reads a heartbeat ten beats old.
	after := getTask(t, b, id, nil)
	assert.Equal(t, `"working"`, string(after.Result["status"]), "not failed on a heartbeat the stall kept from being written")
	// A's next heartbeat reaches the store.
	require.Eventually(t, func() bool {
		got, err := store.Store.Get(t.Context(), id)
		return err == nil && !clock.Now().After(got.Heartbeat)
	}, 10*time.Second, time.Millisecond)
	clock.Add(10 * beat)
	assert.Equal(t, `"working"`, string(getTask(t, b, id, nil).Result["status"]))
	close(release)
	done := waitStatus(t, b, id, "completed")
	assert.Contains(t, string(done.Result["result"]), "finished")
	assert.NotContains(t, a.logs.String(), "judged this one stopped")
}

// TestTaskAcrossInstances: two handlers sharing a store: one runs the
// task, the other answers, updates and reads it.
func TestTaskAcrossInstances(t *testing.T) {
	store := tasks.NewMemory(nil)
	call := func(ctx context.Context, req *CallRequest) (*metadata.CallToolResult, error) {
		r, err := req.Notify.Request(ctx, "confirm", "elicitation/create", json.RawMessage(elicitParams))
		if err != nil {
			return nil, err
		}
		return &metadata.CallToolResult{Content: []json.RawMessage{metadata.TextContent("got " + string(r.Result))}}, nil
	}
	a := taskServer(t, store, 50*time.Millisecond, call)
	b := taskServer(t, store, 50*time.Millisecond, call)
	id := createTask(t, a, "job", nil, nil)
	waitStatus(t, b, id, "input_required")
	_, env := b.rpcCall(t, taskRequest(methodTasksUpdate, id, tasksCaps, map[string]any{"inputResponses": map[string]any{
		"confirm": map[string]any{"action": "decline"}}}), methodTasksUpdate, id, nil)
	require.Nil(t, env.Error)
	done := waitStatus(t, b, id, "completed")
	assert.Contains(t, string(done.Result["result"]), `got {\"action\":\"decline\"}`)
}

// fullStore refuses every new task.
type fullStore struct{ tasks.Store }

func (fullStore) Create(context.Context, *tasks.Task) error {
	return &owner.LimitError{What: "kept tasks", Global: true, Limit: 10000}
}

// TestTaskStoreFull: a store that keeps no more tasks makes the call busy,
// naming the limit; nothing runs.
func TestTaskStoreFull(t *testing.T) {
	ran := false
	s := taskServer(t, fullStore{tasks.NewMemory(nil)}, 0, func(ctx context.Context, req *CallRequest) (*metadata.CallToolResult, error) {
		ran = true
		return nil, nil
	})
	_, env := s.rpcCall(t, taskCall("job", nil, tasksCaps, nil), methodToolsCall, "job", nil)
	require.NotNil(t, env.Error)
	assert.Equal(t, codeServerError, env.Error.Code)
	assert.Contains(t, env.Error.Message, "too many kept tasks on this server (the limit is 10000)")
	assert.False(t, ran)
}

// errBusy stands for the host's refusal of a call it cannot admit.
var errBusy = &ProtocolError{Code: codeServerError, Message: "Server busy: 256 tool calls are running; try again later."}

// TestTaskRecordOnlyOnceAdmitted: with tools that admit calls themselves,
// a call refused busy leaves no record (the finding: 179 of 200 records
// had failed busy before running), and an admitted one gets its task.
func TestTaskRecordOnlyOnceAdmitted(t *testing.T) {
	store := tasks.NewMemory(nil)
	var busy sync.Mutex
	refuse := true
	s := taskServerWith(t, store, 0, true, func(ctx context.Context, req *CallRequest) (*metadata.CallToolResult, error) {
		busy.Lock()
		r := refuse
		busy.Unlock()
		if r {
			return nil, errBusy
		}
		if err := req.Notify.Admitted(ctx); err != nil {
			return nil, err
		}
		return &metadata.CallToolResult{Content: []json.RawMessage{metadata.TextContent("ran")}}, nil
	})
	for range 5 {
		_, env := s.rpcCall(t, taskCall("job", nil, tasksCaps, nil), methodToolsCall, "job", nil)
		require.NotNil(t, env.Error)
		assert.Equal(t, codeServerError, env.Error.Code)
		assert.Contains(t, env.Error.Message, "Server busy")
	}
	assert.Equal(t, 0, store.Len(), "refused calls leave no task record")
	busy.Lock()
	refuse = false
	busy.Unlock()
	id := createTask(t, s, "job", nil, nil)
	done := waitStatus(t, s, id, "completed")
	assert.Contains(t, string(done.Result["result"]), "ran")
	assert.Equal(t, 1, store.Len())
}

// TestTaskKeptPerOwner: one owner cannot keep more tasks than its limit;
// the refusal names the limit, and another owner still gets tasks.
func TestTaskKeptPerOwner(t *testing.T) {
	store := tasks.NewMemoryWith(nil, tasks.MemoryLimits{TasksPerOwner: 3})
	s := taskServerWith(t, store, 0, true, func(ctx context.Context, req *CallRequest) (*metadata.CallToolResult, error) {
		if err := req.Notify.Admitted(ctx); err != nil {
			return nil, err
		}
		return &metadata.CallToolResult{Content: []json.RawMessage{metadata.TextContent("ran")}}, nil
	})
	mallory := map[string]string{"X-Functions-Key": "mallory"}
	for range 3 {
		createTask(t, s, "job", nil, mallory)
	}
	_, env := s.rpcCall(t, taskCall("job", nil, tasksCaps, nil), methodToolsCall, "job", mallory)
	require.NotNil(t, env.Error)
	assert.Equal(t, codeServerError, env.Error.Code)
	assert.Equal(t, "Server busy: too many kept tasks for this client (the limit is 3); "+tasks.SettingMaxTasksPerOwner+
		" changes it; try again once some tasks have expired.", env.Error.Message)
	assert.Equal(t, 3, store.Len())
	createTask(t, s, "job", nil, map[string]string{"X-Functions-Key": "alice"})
}

// TestTaskKeptPerAddressWhateverTheClientSends (issue 39, finding 5): an
// unauthenticated client sending a fresh Authorization header (or
// unchecked key) with every call is one owner, its address: its kept
// tasks stop at the per-owner limit, where fresh headers once made a fresh
// owner per call, up to the global limit.
func TestTaskKeptPerAddressWhateverTheClientSends(t *testing.T) {
	store := tasks.NewMemoryWith(nil, tasks.MemoryLimits{TasksPerOwner: 3})
	s := taskServerWith(t, store, 0, true, func(ctx context.Context, req *CallRequest) (*metadata.CallToolResult, error) {
		if err := req.Notify.Admitted(ctx); err != nil {
			return nil, err
		}
		return &metadata.CallToolResult{Content: []json.RawMessage{metadata.TextContent("ran")}}, nil
	})
	fresh := func(i int) map[string]string {
		return map[string]string{"Authorization": "Bearer random-" + strconv.Itoa(i), "Mcp-Session-Id": "s" + strconv.Itoa(i)}
	}
	var ids []string
	for i := range 3 {
		ids = append(ids, createTask(t, s, "job", nil, fresh(i)))
	}
	_, env := s.rpcCall(t, taskCall("job", nil, tasksCaps, nil), methodToolsCall, "job", fresh(3))
	require.NotNil(t, env.Error)
	assert.Contains(t, env.Error.Message, "too many kept tasks for this client (the limit is 3)")
	assert.Equal(t, 3, store.Len())
	// Unauthenticated tasks share one scope: their random ids keep them
	// apart, and any header of the client reads them.
	assert.Nil(t, getTask(t, s, ids[0], fresh(9)).Error)
}

// TestTaskStatusMessage: the handler's progress becomes the task's status
// message within a second, whatever the heartbeat, and the last one stays
// on the finished task.
func TestTaskStatusMessage(t *testing.T) {
	release := make(chan struct{})
	s := taskServer(t, tasks.NewMemory(nil), time.Hour, func(ctx context.Context, req *CallRequest) (*metadata.CallToolResult, error) {
		if err := req.Notify.Progress(1, 3, "step one"); err != nil {
			return nil, err
		}
		<-release
		_ = req.Notify.Progress(2, 3, "step two")
		_ = req.Notify.Progress(3, 3, "") // no message: the numbers say it
		return &metadata.CallToolResult{Content: []json.RawMessage{metadata.TextContent("done")}}, nil
	})
	id := createTask(t, s, "job", nil, nil)
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Equal(c, `"step one"`, string(getTask(t, s, id, nil).Result["statusMessage"]))
	}, 10*time.Second, 10*time.Millisecond)
	close(release)
	done := waitStatus(t, s, id, "completed")
	assert.Equal(t, `"3 of 3 done"`, string(done.Result["statusMessage"]))
}

// TestTaskResultOverBudget: a result the store may not keep fails the task,
// saying why, and holds no memory.
func TestTaskResultOverBudget(t *testing.T) {
	store := tasks.NewMemoryWith(nil, tasks.MemoryLimits{ResultBytesPerOwner: 1000})
	s := taskServer(t, store, 0, func(ctx context.Context, req *CallRequest) (*metadata.CallToolResult, error) {
		return &metadata.CallToolResult{Content: []json.RawMessage{metadata.TextContent(strings.Repeat("x", 2000))}}, nil
	})
	id := createTask(t, s, "job", nil, nil)
	failed := waitStatus(t, s, id, "failed")
	assert.Contains(t, string(failed.Result["error"]), "was not kept: too many bytes of kept task results for this client (the limit is 1000)")
	assert.Equal(t, int64(0), store.ResultBytes())
}

// BenchmarkTaskGetBigResult reads a completed task with a 1 MiB result
// through tasks/get: the bytes allocated per read show whether the result
// is copied per reader (it is written from the record as it is).
func BenchmarkTaskGetBigResult(b *testing.B) {
	store := tasks.NewMemory(nil)
	now := time.Now()
	result := json.RawMessage(`{"content":[{"type":"text","text":"` + strings.Repeat("x", 1<<20) + `"}]}`)
	probe := httptest.NewRequest(http.MethodPost, "/", nil)
	require.NoError(b, store.Create(b.Context(), &tasks.Task{ID: "big", Scope: taskScope(caller.Of(probe).Owner()), Status: tasks.StatusCompleted,
		Created: now, Updated: now, TTL: time.Hour, PollInterval: time.Second, Result: result}))
	h := NewHandler(serverOf(&taskTools{fakeTools: newFakeTools()}), &Options{Sealer: testSealer, Logger: slog.New(slog.DiscardHandler),
		Tasks: &TaskOptions{Store: store}})
	body := taskRequest(methodTasksGet, "big", tasksCaps, nil)
	b.ReportAllocs()
	for b.Loop() {
		r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range modernHeaders(methodTasksGet, "big") {
			r.Header.Set(k, v)
		}
		w := discardWriter{h: http.Header{}}
		h.ServeHTTP(&w, r)
		if w.n < 1<<20 {
			b.Fatalf("short reply: %d bytes", w.n)
		}
	}
}

// discardWriter counts a response's bytes and keeps none.
type discardWriter struct {
	h http.Header
	n int
}

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) WriteHeader(int)             {}
func (w *discardWriter) Write(p []byte) (int, error) { w.n += len(p); return len(p), nil }

// TestTaskDiscardedResultIsSaid: an instance whose heartbeats did not reach
// the store while others could (the finding: the task ended failed while
// the instance logged Succeeded, the result thrown away without a word) is
// judged stopped; the task says its result is discarded, and the running
// instance logs that it stopped the work and discarded the result.
func TestTaskDiscardedResultIsSaid(t *testing.T) {
	const beat = 20 * time.Millisecond
	shared := tasks.NewMemory(nil)
	cut := &stallStore{Store: shared} // A's way to the store only
	clock := &fakeClock{now: time.Now()}
	useClock := func(h *handler) { h.tasks.SetClock(clock.Now) }
	a := taskServerWith(t, cut, beat, false, func(ctx context.Context, req *CallRequest) (*metadata.CallToolResult, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}, useClock)
	b := taskServerWith(t, shared, beat, false, func(context.Context, *CallRequest) (*metadata.CallToolResult, error) {
		return nil, errors.New("not called")
	}, useClock)
	id := createTask(t, a, "job", nil, nil)
	cut.stall(true)
	clock.Add(10 * beat)
	assert.Equal(t, `"working"`, string(getTask(t, b, id, nil).Result["status"]), "suspect first")
	clock.Add(10 * beat)
	failed := getTask(t, b, id, nil)
	require.Equal(t, `"failed"`, string(failed.Result["status"]))
	assert.Contains(t, string(failed.Result["statusMessage"]), "Any result it produces later is discarded.")
	cut.stall(false)
	require.Eventually(t, func() bool { return strings.Contains(a.logs.String(), "its result discarded") },
		10*time.Second, time.Millisecond, "A says it dropped the work:\n%s", a.logs.String())
}
