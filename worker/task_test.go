package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/binding"
	"github.com/funcmcp/funcmcp/metadata"
)

// TestTaskRerunsTravel: a tool that may be run again on another instance
// says so in its function.json task declaration (a key the Azure Functions
// host ignores), and funchost's loader reads it back.
func TestTaskRerunsTravel(t *testing.T) {
	a := New(nil)
	noop := func(context.Context, *ToolContext) (*Result, error) { return TextResult("ok"), nil }
	a.ConfigureMcpTool("again").WithTaskSupport(TaskOptional, &TaskOptions{Reruns: 2}).Handle(noop)
	fns, err := a.Functions()
	require.NoError(t, err)
	require.Len(t, fns, 1)
	text, ok := fns[0].Bindings[0].LookupString(metadata.KeyTask)
	require.True(t, ok)
	assert.JSONEq(t, `{"support":"optional","reruns":2}`, text)
	tool, err := binding.LoadTool(fns[0], fns[0].Bindings[0], "")
	require.NoError(t, err)
	assert.Equal(t, 2, tool.Trigger.Task.Reruns)
}

func TestWithTaskSupport(t *testing.T) {
	a := New(nil)
	noop := func(context.Context, *ToolContext) (*Result, error) { return TextResult("ok"), nil }
	a.ConfigureMcpTool("long").WithTaskSupport(TaskRequired, &TaskOptions{TTL: time.Hour, PollInterval: 2 * time.Second}).Handle(noop)
	a.ConfigureMcpTool("plain").Handle(noop)
	fns, err := a.Functions()
	require.NoError(t, err)
	byName := map[string]*metadata.Function{}
	for _, f := range fns {
		byName[f.Name] = f
	}
	text, ok := byName["long"].Bindings[0].LookupString(metadata.KeyTask)
	require.True(t, ok)
	assert.JSONEq(t, `{"support":"required","ttlMs":3600000,"pollIntervalMs":2000}`, text)
	_, ok = byName["plain"].Bindings[0].LookupString(metadata.KeyTask)
	assert.False(t, ok, "no key without a declaration")

	tool, err := binding.LoadTool(byName["long"], byName["long"].Bindings[0], "")
	require.NoError(t, err)
	require.NotNil(t, tool.Trigger.Task)
	assert.Equal(t, &metadata.TaskSupport{Support: "required", TTLMs: 3600000, PollIntervalMs: 2000}, tool.Trigger.Task)

	bad := New(nil)
	bad.ConfigureMcpTool("x").WithTaskSupport("sometimes", nil).Handle(noop)
	err = bad.Build()
	require.Error(t, err)
	assert.Contains(t, err.Error(), `task: support "sometimes" is not "optional" or "required"`)
	assert.True(t, errors.Is(err, ErrOutputSetting))

	for _, opts := range []*TaskOptions{{Reruns: -1}, {Reruns: metadata.MaxTaskReruns + 1}, {Reruns: 1, Deferred: true}} {
		bad := New(nil)
		bad.ConfigureMcpTool("x").WithTaskSupport(TaskOptional, opts).Handle(noop)
		assert.ErrorIs(t, bad.Build(), ErrOutputSetting, "reruns %d, deferred %v", opts.Reruns, opts.Deferred)
	}

	fn := byName["long"]
	fn.Bindings[0].SetString(metadata.KeyTask, `{"support":"optional","extra":1}`)
	_, err = binding.LoadTool(fn, fn.Bindings[0], "")
	assert.ErrorContains(t, err, "task must be a string holding")
}

// taskApp has the tools of the task tests: "become" turns its call into a
// task, then asks the user once, and reports what it saw; "boom" panics;
// "boom_later" becomes a task, then panics.
func taskApp() *App {
	a := New(&Options{Stdout: io.Discard, Stderr: io.Discard})
	a.ConfigureMcpTool("become").WithTaskSupport(TaskOptional, &TaskOptions{Deferred: true}).
		Handle(func(ctx context.Context, tc *ToolContext) (*Result, error) {
			before := tc.InTask()
			err := tc.RunAsTask(ctx)
			after := tc.InTask()
			tc.Progress(1, 2, "half way") // the client sent no progressToken: only a task's status
			answer := "-"
			if err == nil {
				el, err := tc.Elicit(ctx, "Go on?", map[string]any{"type": "object"})
				if err != nil {
					return nil, err
				}
				answer = el.Action
			}
			return TextResult(fmt.Sprintf("before=%t notSupported=%t after=%t answer=%s err=%v",
				before, errors.Is(err, ErrNotSupported), after, answer, err)), nil
		})
	a.ConfigureMcpTool("boom").WithTaskSupport(TaskOptional, nil).
		Handle(func(context.Context, *ToolContext) (*Result, error) { panic("kaboom") })
	a.ConfigureMcpTool("boom_later").WithTaskSupport(TaskOptional, &TaskOptions{Deferred: true}).
		Handle(func(ctx context.Context, tc *ToolContext) (*Result, error) {
			if err := tc.RunAsTask(ctx); err != nil {
				return nil, err
			}
			panic("kaboom")
		})
	return a
}

// taskHost answers startTask with startStatus (200: a task in stream mode)
// and a request with an accepted elicitation.
func taskHost(startStatus int) func(n metadata.Notification) (int, string) {
	return func(n metadata.Notification) (int, string) {
		switch {
		case n.Type == metadata.NotificationStartTask && startStatus == http.StatusOK:
			return http.StatusOK, `{"taskId":"task-1","inputMode":"stream"}`
		case n.Type == metadata.NotificationStartTask:
			return startStatus, "the client did not negotiate tasks"
		case n.Type == metadata.NotificationRequest:
			return http.StatusOK, `{"result":{"action":"accept","content":{}}}`
		}
		return http.StatusNoContent, ""
	}
}

// TestRunAsTask: a call offered as a task becomes one when the host takes
// it (and its requests to the client then wait for the answer, stream
// mode); when the host refuses, or offers nothing, RunAsTask says
// ErrNotSupported and the call goes on synchronously; a call that already
// is a task asks nothing. A task's progress reaches the host even without
// a progressToken: it is the task's status message.
func TestRunAsTask(t *testing.T) {
	srv := httptest.NewServer(taskApp().Handler())
	t.Cleanup(srv.Close)
	tests := []struct {
		name    string
		channel bool
		state   string // X-Funcmcp-Task
		start   int    // the host's answer to startTask
		want    string
		sent    []string // the types of the notifications the host got
	}{
		{name: "offered and taken", channel: true, state: metadata.TaskStateOffered, start: http.StatusOK,
			want: "before=false notSupported=false after=true answer=accept err=<nil>",
			sent: []string{metadata.NotificationStartTask, metadata.NotificationProgress, metadata.NotificationRequest}},
		{name: "offered, the host answers 409", channel: true, state: metadata.TaskStateOffered, start: http.StatusConflict,
			want: "before=false notSupported=true after=false answer=- err=" +
				"running the call as a task: the client did not negotiate tasks",
			sent: []string{metadata.NotificationStartTask}},
		{name: "not offered", channel: true, start: http.StatusOK,
			want: "before=false notSupported=true after=false answer=- err=" +
				"running the call as a task: the host does not offer it for this call"},
		{name: "no channel", start: http.StatusOK,
			want: "before=false notSupported=true after=false answer=- err=" +
				"running the call as a task: the host does not offer tasks"},
		{name: "already a task", channel: true, state: metadata.TaskStateRunning, start: http.StatusOK,
			want: "before=true notSupported=false after=true answer=accept err=<nil>",
			sent: []string{metadata.NotificationProgress, metadata.NotificationRequest}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fc := newFakeClient(t, taskHost(tt.start))
			var headers map[string]string
			if tt.channel {
				// Before it is a task, the call would ask the
				// input-required way.
				mode := metadata.InputModeInputRequired
				if tt.state == metadata.TaskStateRunning {
					mode = metadata.InputModeStream
				}
				headers = fc.offer(mode, `{"elicitation":{}}`, nil)
				if tt.state != "" {
					headers[metadata.HeaderTask] = tt.state
				}
			}
			text, isErr := resultText(t, invokeWith(t, srv.URL, "become", headers))
			assert.False(t, isErr, text)
			assert.Equal(t, tt.want, text)
			got := fc.requests()
			var types []string
			for _, n := range got {
				types = append(types, n.Type)
			}
			assert.Equal(t, tt.sent, types)
			if len(got) > 0 && got[0].Type == metadata.NotificationStartTask {
				data, err := json.Marshal(got[0])
				require.NoError(t, err)
				assert.JSONEq(t, `{"type":"startTask"}`, string(data), "startTask has no other field")
			}
		})
	}
}

// TestRequestInputTogether: in stream mode the requests of one
// RequestInput reach the host together, before either is answered, so a
// task shows them all pending.
func TestRequestInputTogether(t *testing.T) {
	arrived := make(chan string, 2)
	both := make(chan struct{})
	fc := newFakeClient(t, func(n metadata.Notification) (int, string) {
		arrived <- n.Key
		select {
		case <-both:
			return http.StatusOK, fmt.Sprintf(`{"result":{"action":"accept","content":{"key":%q}}}`, n.Key)
		case <-time.After(10 * time.Second):
			return http.StatusInternalServerError, "the other request never came"
		}
	})
	go func() {
		for range 2 {
			<-arrived
		}
		close(both)
	}()
	cr := &ClientRequests{ch: &notifier{ctx: context.Background(), url: fc.srv.URL, auth: "Bearer x"}, mode: metadata.InputModeStream,
		caps: map[string]json.RawMessage{"elicitation": json.RawMessage(`{}`)}, timeout: time.Minute}
	answers, err := cr.RequestInput(context.Background(), map[string]InputRequest{
		"name":    ElicitationRequest("Name?", map[string]any{"type": "object"}),
		"confirm": ElicitationRequest("Sure?", map[string]any{"type": "object"}),
	})
	require.NoError(t, err)
	require.Len(t, answers, 2)
	assert.JSONEq(t, `{"action":"accept","content":{"key":"name"}}`, string(answers["name"]))
	assert.JSONEq(t, `{"action":"accept","content":{"key":"confirm"}}`, string(answers["confirm"]))
}

// TestRequestInputFirstFailureCancelsTheOthers: when one request of several
// fails, the others are given up (their requests to the host end) and the
// failure is returned.
func TestRequestInputFirstFailureCancelsTheOthers(t *testing.T) {
	waiting := make(chan struct{})   // "slow" has reached the host
	cancelled := make(chan struct{}) // and was given up
	host := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var n metadata.Notification
		data, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(data, &n)
		switch n.Key {
		case "slow":
			close(waiting)
			select {
			case <-r.Context().Done():
				close(cancelled)
			case <-time.After(10 * time.Second):
				_, _ = io.WriteString(w, `{"result":{"action":"accept"}}`)
			}
		default:
			select {
			case <-waiting:
			case <-time.After(10 * time.Second):
			}
			_, _ = io.WriteString(w, `{"error":{"code":-1,"message":"User rejected the request"}}`)
		}
	}))
	t.Cleanup(host.Close)
	cr := &ClientRequests{ch: &notifier{ctx: context.Background(), url: host.URL, auth: "Bearer x"}, mode: metadata.InputModeStream,
		caps: map[string]json.RawMessage{"elicitation": json.RawMessage(`{}`)}, timeout: time.Minute}
	_, err := cr.RequestInput(context.Background(), map[string]InputRequest{
		"fails": ElicitationRequest("No?", map[string]any{"type": "object"}),
		"slow":  ElicitationRequest("Later?", map[string]any{"type": "object"}),
	})
	var ce *ClientError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "User rejected the request", ce.Message)
	select {
	case <-cancelled:
	case <-time.After(10 * time.Second):
		t.Fatal("the other request was not given up")
	}
}

// TestPanicInATask: a panic is a failure of the task (HTTP 500, -32603)
// when the call runs as one, and an isError result otherwise, as before.
func TestPanicInATask(t *testing.T) {
	srv := httptest.NewServer(taskApp().Handler())
	t.Cleanup(srv.Close)
	tests := []struct {
		name, tool, state string
		fails             bool
	}{
		{name: "in a task", tool: "boom", state: metadata.TaskStateRunning, fails: true},
		{name: "after RunAsTask", tool: "boom_later", state: metadata.TaskStateOffered, fails: true},
		{name: "offered, not taken", tool: "boom", state: metadata.TaskStateOffered},
		{name: "outside a task", tool: "boom"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fc := newFakeClient(t, taskHost(http.StatusOK))
			headers := fc.offer(metadata.InputModeStream, `{}`, nil)
			if tt.state != "" {
				headers[metadata.HeaderTask] = tt.state
			}
			status, data := postRaw(t, srv.URL, tt.tool, `{"name":"`+tt.tool+`","arguments":{}}`, headers)
			if !tt.fails {
				require.Equal(t, http.StatusOK, status, "%s", data)
				text, isErr := resultText(t, reply{status: status, body: string(data)})
				assert.True(t, isErr)
				assert.Equal(t, "tool "+tt.tool+" panicked: kaboom", text)
				return
			}
			require.Equal(t, http.StatusInternalServerError, status, "%s", data)
			var fr metadata.FailureReply
			require.NoError(t, json.Unmarshal(data, &fr), "%s", data)
			assert.Equal(t, metadata.CodeInternalError, fr.Code)
			assert.Equal(t, "tool "+tt.tool+" panicked: kaboom", fr.Error)
		})
	}
}
