package main

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/binding"
	"github.com/funcmcp/funcmcp/metadata"
	"github.com/funcmcp/funcmcp/worker"
)

// TestFixtureTaskDeclarations: the tasks scenarios need greet without task
// support, test_tool_with_task and failing_job required, the others
// optional; funchost reads what the worker emits.
func TestFixtureTaskDeclarations(t *testing.T) {
	fns, err := newApp().Functions()
	require.NoError(t, err)
	got := map[string]*metadata.TaskSupport{}
	for _, f := range fns {
		ts := f.ToolTriggers()
		if len(ts) != 1 {
			continue
		}
		tool, err := binding.LoadTool(f, ts[0], "")
		require.NoError(t, err)
		got[tool.Trigger.ToolName] = tool.Trigger.Task
	}
	for name, want := range map[string]*metadata.TaskSupport{
		"greet":               nil,
		"slow_compute":        {Support: metadata.TaskOptional},
		"failing_job":         {Support: metadata.TaskRequired},
		"protocol_error_job":  {Support: metadata.TaskOptional},
		"confirm_delete":      {Support: metadata.TaskOptional},
		"multi_input":         {Support: metadata.TaskOptional},
		"test_tool_with_task": {Support: metadata.TaskRequired, Deferred: true},
		"test_simple_text":    nil,
	} {
		task, ok := got[name]
		require.True(t, ok, "no tool %s", name)
		assert.Equal(t, want, task, name)
	}
}

// taskHeaders is what funchost adds to the channel headers for a call that
// is a task (running) or may become one (offered), with progress asked for.
func taskHeaders(state string) map[string]string {
	return map[string]string{metadata.HeaderTask: state, metadata.HeaderNotifyProgress: "true"}
}

// TestFixtureTasks runs each tasks fixture as funchost does, in a task and
// outside one, with a fake channel answering as the suite's client.
func TestFixtureTasks(t *testing.T) {
	srv := httptest.NewServer(newApp().Handler())
	t.Cleanup(srv.Close)
	const caps = `{"elicitation":{},"sampling":{}}`
	running := taskHeaders(metadata.TaskStateRunning)
	tests := []struct {
		name, function, args string
		channel              bool
		task                 map[string]string
		want                 string
		isError              bool
		failure              int      // the failure's code, when the call fails
		sent                 []string // the notifications the host got: type, or type:key for requests
	}{
		{name: "greet", function: "greet", args: `{"name":"World"}`, want: "Hello, World!"},
		{name: "slow_compute at once", function: "slow_compute", args: `{"seconds":0,"label":"instant"}`, channel: true, task: running,
			want: `Computed "instant" in 0 seconds`},
		{name: "slow_compute reports progress each second", function: "slow_compute", args: `{"seconds":1.5,"label":"p"}`, channel: true, task: running,
			want: `Computed "p" in 1.5 seconds`, sent: []string{"progress", "progress"}},
		{name: "slow_compute out of bounds", function: "slow_compute", args: `{"seconds":-1}`,
			want: "seconds must be between 0 and 600, not -1", isError: true},
		{name: "failing_job: a tool error", function: "failing_job", args: `{}`, channel: true, task: running,
			want: "failing_job failed, as it always does", isError: true},
		{name: "protocol_error_job in a task: a failure", function: "protocol_error_job", args: `{}`, channel: true, task: running,
			failure: metadata.CodeInternalError},
		{name: "protocol_error_job outside a task: a tool error", function: "protocol_error_job", args: `{}`, channel: true,
			want: "tool protocol_error_job panicked: protocol_error_job crashed, as it always does", isError: true},
		{name: "confirm_delete", function: "confirm_delete", args: `{"filename":"a.txt"}`, channel: true, task: running,
			want: "Deleted a.txt", sent: []string{"request:confirm"}},
		{name: "multi_input asks both", function: "multi_input", args: `{}`, channel: true, task: running,
			want: "Name: Alice, confirmed: true", sent: []string{"request:confirm", "request:name"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newFakeHost(t, metadata.InputModeStream)
			ch := h
			if !tt.channel {
				ch = nil
			}
			out := invoke(t, srv.URL, tt.function, tt.args, ch, caps, nil, tt.task)
			if tt.failure != 0 {
				require.NotNil(t, out.failure, "a failure, not a result: %q", out.text)
				assert.Equal(t, tt.failure, out.failure.Code)
				assert.Contains(t, out.failure.Error, "panicked")
				return
			}
			require.Nil(t, out.failure)
			assert.Equal(t, tt.isError, out.isError)
			assert.Equal(t, tt.want, out.text)
			assert.ElementsMatch(t, tt.sent, kinds(h.take()))
		})
	}
}

// kinds names each notification by its type, and a request by its key too.
func kinds(sent []metadata.Notification) []string {
	var out []string
	for _, n := range sent {
		k := n.Type
		if n.Type == metadata.NotificationRequest {
			k += ":" + n.Key
		}
		out = append(out, k)
	}
	return out
}

// TestFixtureConfirmDeleteDeclined: a user who does not confirm keeps the
// file.
func TestFixtureConfirmDeleteDeclined(t *testing.T) {
	srv := httptest.NewServer(newApp().Handler())
	t.Cleanup(srv.Close)
	h := newFakeHost(t, metadata.InputModeInputRequired)
	for _, answer := range []string{`{"action":"decline"}`, `{"action":"accept","content":{"confirm":false}}`} {
		out := invoke(t, srv.URL, "confirm_delete", `{"filename":"b.txt"}`, h, `{"elicitation":{}}`,
			map[string]json.RawMessage{"confirm": json.RawMessage(answer)}, nil)
		require.Nil(t, out.failure)
		assert.False(t, out.isError)
		assert.Equal(t, "Kept b.txt", out.text, answer)
	}
	assert.Empty(t, h.take())
}

// TestFixtureToolWithTask: test_tool_with_task asks the user's name the
// 2026-07-28 way (an input-required result), then, run again with the
// answer, asks the host to make the call a task, and greets the user in
// the task's result; where no task is on offer it greets them anyway.
func TestFixtureToolWithTask(t *testing.T) {
	srv := httptest.NewServer(newApp().Handler())
	t.Cleanup(srv.Close)
	tests := []struct {
		name      string
		state     string // X-Funcmcp-Task
		startTask int    // the host's answer to startTask (0: 200)
		sent      []string
	}{
		{name: "offered and taken", state: metadata.TaskStateOffered, sent: []string{metadata.NotificationStartTask}},
		{name: "offered, the host cannot", state: metadata.TaskStateOffered, startTask: http.StatusConflict, sent: []string{metadata.NotificationStartTask}},
		{name: "not offered"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newFakeHost(t, metadata.InputModeInputRequired)
			h.startTask = tt.startTask
			extra := map[string]string{}
			if tt.state != "" {
				extra[metadata.HeaderTask] = tt.state
			}
			out := invoke(t, srv.URL, "test_tool_with_task", `{}`, h, allCaps, nil, extra)
			require.Nil(t, out.failure)
			assert.True(t, out.isError, "round 1 ends input-required: %s", out.text)
			assertRequests(t, []request{{"user_name", metadata.MethodElicitationCreate, nameParams}}, requestsOf(t, h.take()))

			answers := map[string]json.RawMessage{"user_name": json.RawMessage(`{"action":"accept","content":{"name":"Alice"}}`)}
			out = invoke(t, srv.URL, "test_tool_with_task", `{}`, h, allCaps, answers, extra)
			require.Nil(t, out.failure)
			assert.False(t, out.isError, out.text)
			assert.Equal(t, "Hello, Alice!", out.text)
			assert.Equal(t, tt.sent, kinds(h.take()))
		})
	}
}

// TestSlowComputeCancelled: slow_compute stops as soon as its call is
// cancelled (tasks/cancel), not at the end of its sleep.
func TestSlowComputeCancelled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		tc := &worker.ToolContext{Arguments: map[string]json.RawMessage{"seconds": json.RawMessage(`60`), "label": json.RawMessage(`"c"`)}}
		errc := make(chan error, 1)
		go func() {
			_, err := slowCompute(ctx, tc)
			errc <- err
		}()
		time.Sleep(2500 * time.Millisecond)
		cancel()
		synctest.Wait()
		select {
		case err := <-errc:
			assert.True(t, errors.Is(err, context.Canceled), "%v", err)
			assert.ErrorContains(t, err, `slow_compute "c" stopped after 2s`)
		default:
			t.Fatal("slow_compute goes on after its call was cancelled")
		}
	})
}
