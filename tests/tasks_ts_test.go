package tests

import (
	"encoding/json"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tsTask is a task as tasks/get (or, as a handle, tools/call) answers it.
type tsTask struct {
	ResultType     string          `json:"resultType"`
	TaskID         string          `json:"taskId"`
	Status         string          `json:"status"`
	StatusMessage  string          `json:"statusMessage"`
	CreatedAt      string          `json:"createdAt"`
	LastUpdatedAt  string          `json:"lastUpdatedAt"`
	TTLMs          int64           `json:"ttlMs"`
	PollIntervalMs int64           `json:"pollIntervalMs"`
	Result         json.RawMessage `json:"result"`
}

// tsClientError is an error the TypeScript client raised: a JSON-RPC code
// (a number) or an SDK error code (a string), with its data.
type tsClientError struct {
	Code    any            `json:"code"`
	Message string         `json:"message"`
	Data    map[string]any `json:"data"`
}

// tsTaskCall is what came of one tools/call that made a task.
type tsTaskCall struct {
	Handle     *tsTask        `json:"handle"`
	CallResult any            `json:"callResult"`
	CallError  *tsClientError `json:"callError"`
}

// tsTasksReport is ts-tasks.mjs's report.
type tsTasksReport struct {
	ProtocolVersion  string         `json:"protocolVersion"`
	ServerExtensions map[string]any `json:"serverExtensions"`
	Task             *struct {
		tsTaskCall
		Polls []struct {
			Status        string `json:"status"`
			StatusMessage string `json:"statusMessage"`
		} `json:"polls"`
		Final *tsTask `json:"final"`
	} `json:"task"`
	Sync *struct {
		ProtocolVersion string          `json:"protocolVersion"`
		Result          json.RawMessage `json:"result"`
		TaskResults     int             `json:"taskResults"`
		Error           *tsClientError  `json:"error"`
	} `json:"sync"`
	Cancel *struct {
		tsTaskCall
		Before       *tsTask         `json:"before"`
		CancelResult json.RawMessage `json:"cancelResult"`
		After        *tsTask         `json:"after"`
	} `json:"cancel"`
	Error *tsClientError `json:"error"`
}

// epidemicProgress is simulate_epidemic's progress message, which a task
// shows as its status message.
var epidemicProgress = regexp.MustCompile(`^day \d+ of 180: \d+ infected, \d+ recovered, \d+ susceptible$`)

// TestTypeScriptClientRunsTheLongToolAsTask: the official TypeScript client
// 2.4.0, declaring the tasks extension at 2026-07-28, drives the sample's
// simulate_epidemic through a task — handle, tasks/get polled at the pace
// the task asks for, the progress as status message, the result inlined
// once completed, equal to what a client without the extension gets
// synchronously for the same arguments and seed — and cancels a long run
// with tasks/cancel.
//
// The client has no result kind for a tools/call answered with a task:
// it rejects the answer (UNSUPPORTED_RESULT_TYPE), and the script reads the
// handle as it arrives on the transport; tasks/get and tasks/cancel go
// through the client's request() with a result schema. The Go SDK (v1.8.0)
// has no support for the tasks extension.
func TestTypeScriptClientRunsTheLongToolAsTask(t *testing.T) {
	t.Parallel()
	node, dir := nodeBin(t, tsClientPackages[tsClientV2Auto])
	// The default settings: the running instance stores the latest progress
	// as the task's status message at most once a second.
	h := startHost(t, sample(t))
	const seconds, seed, longSeconds = 4, 20260728, 60
	code, stdout, stderr := runNode(t, node, dir, "ts-tasks.mjs", h.endpoint,
		strconv.Itoa(seconds), strconv.Itoa(seed), strconv.Itoa(longSeconds))
	var r tsTasksReport
	require.NoError(t, json.Unmarshal([]byte(stdout), &r), "exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	require.Equal(t, 0, code, "%s\n%s", stdout, stderr)
	assert.Equal(t, "2026-07-28", r.ProtocolVersion)
	assert.Contains(t, r.ServerExtensions, tasksExtension, "server/discover advertises the extension")

	t.Run("completed", func(t *testing.T) {
		require.NotNil(t, r.Task)
		checkHandle(t, &r.Task.tsTaskCall)
		require.NotEmpty(t, r.Task.Polls)
		last := r.Task.Polls[len(r.Task.Polls)-1]
		assert.Equal(t, "completed", last.Status)
		sawProgress := false
		for _, p := range r.Task.Polls[:len(r.Task.Polls)-1] {
			assert.Equal(t, "working", p.Status, "only the last poll sees the task terminal")
			if p.StatusMessage != "" {
				assert.Regexp(t, epidemicProgress, p.StatusMessage)
				sawProgress = true
			}
		}
		assert.True(t, sawProgress, "a status message while working: %+v", r.Task.Polls)

		require.NotNil(t, r.Task.Final)
		assert.Equal(t, "completed", r.Task.Final.Status)
		assert.Equal(t, r.Task.Handle.TaskID, r.Task.Final.TaskID)
		require.NotNil(t, r.Sync)
		require.Nil(t, r.Sync.Error)
		assert.Equal(t, "2026-07-28", r.Sync.ProtocolVersion, "the client without the extension speaks the same revision")
		assert.Zero(t, r.Sync.TaskResults, "no task without the extension")

		got := toolOutput(t, r.Task.Final.Result)
		assert.EqualValues(t, seed, got["seed"])
		assert.EqualValues(t, 180, got["days"])
		toolOutput(t, r.Sync.Result)
		var task, sync struct {
			Content           json.RawMessage `json:"content"`
			StructuredContent json.RawMessage `json:"structuredContent"`
		}
		require.NoError(t, json.Unmarshal(r.Task.Final.Result, &task))
		require.NoError(t, json.Unmarshal(r.Sync.Result, &sync))
		assert.JSONEq(t, string(sync.StructuredContent), string(task.StructuredContent), "the task's result is the synchronous one")
		assert.JSONEq(t, string(sync.Content), string(task.Content))
		t.Logf("polls of a %d s run: %q", seconds, r.Task.Polls)
	})

	t.Run("cancelled", func(t *testing.T) {
		require.NotNil(t, r.Cancel)
		checkHandle(t, &r.Cancel.tsTaskCall)
		require.NotNil(t, r.Cancel.Before)
		assert.Equal(t, "working", r.Cancel.Before.Status, "a %d s run is still working", longSeconds)
		assert.NotEmpty(t, r.Cancel.CancelResult)
		require.NotNil(t, r.Cancel.After)
		assert.Equal(t, "cancelled", r.Cancel.After.Status)
		assert.Equal(t, "Cancelled by the client.", r.Cancel.After.StatusMessage)
		assert.Empty(t, r.Cancel.After.Result)
	})
}

// checkHandle checks the server's answer to a tools/call that made a task,
// and what client 2.4.0 made of it.
func checkHandle(t *testing.T, c *tsTaskCall) {
	t.Helper()
	require.NotNil(t, c.Handle, "tools/call answered with a task: %+v", c)
	h := c.Handle
	assert.Equal(t, "task", h.ResultType)
	assert.NotEmpty(t, h.TaskID)
	assert.Equal(t, "working", h.Status)
	for _, ts := range []string{h.CreatedAt, h.LastUpdatedAt} {
		_, err := time.Parse(time.RFC3339Nano, ts)
		assert.NoError(t, err)
	}
	assert.EqualValues(t, time.Hour.Milliseconds(), h.TTLMs, "the tool's TaskOptions.TTL")
	assert.EqualValues(t, time.Second.Milliseconds(), h.PollIntervalMs, "the tool's TaskOptions.PollInterval")
	assert.Nil(t, c.CallResult)
	require.NotNil(t, c.CallError)
	assert.Equal(t, "UNSUPPORTED_RESULT_TYPE", c.CallError.Code, "client 2.4.0 has no task result kind: %+v", c.CallError)
	assert.Equal(t, "task", c.CallError.Data["resultType"])
}
