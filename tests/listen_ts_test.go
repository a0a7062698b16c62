package tests

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTypeScriptClientListensForTaskStatus: the official TypeScript client
// 2.4.0 at 2026-07-28 runs the sample's simulate_epidemic as a task and,
// instead of polling tasks/get, listens for its id (subscriptions/listen
// with taskIds, the tasks extension declared): notifications/tasks bring
// the task's progress (its status message) and its completion with the
// result inlined, each tagged with the subscription id.
func TestTypeScriptClientListensForTaskStatus(t *testing.T) {
	t.Parallel()
	node, dir := nodeBin(t, tsClientPackages[tsClientV2Auto])
	h := startHost(t, sample(t))
	code, stdout, stderr := runNode(t, node, dir, "ts-listen.mjs", "tasks", h.endpoint, "simulate_epidemic", `{"duration_seconds":4,"seed":20261128}`)
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s\nhost:\n%s", stdout, stderr, h.console.String())
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	var last struct {
		Report *struct {
			TaskID          string    `json:"taskId"`
			Statuses        []string  `json:"statuses"`
			Messages        []*string `json:"messages"`
			SubscriptionIDs []any     `json:"subscriptionIds"`
			Polls           int       `json:"polls"`
			Last            struct {
				TaskID string          `json:"taskId"`
				Status string          `json:"status"`
				Result json.RawMessage `json:"result"`
			} `json:"last"`
		} `json:"report"`
	}
	require.NoError(t, json.Unmarshal([]byte(lines[len(lines)-1]), &last), stdout)
	r := last.Report
	require.NotNil(t, r, stdout)
	t.Logf("statuses heard: %v", r.Statuses)
	assert.Zero(t, r.Polls, "no tasks/get: the client only listened")
	require.NotEmpty(t, r.Statuses)
	assert.Equal(t, "completed", r.Statuses[len(r.Statuses)-1])
	progress := 0
	for i, s := range r.Statuses[:len(r.Statuses)-1] {
		assert.Equal(t, "working", s)
		if m := r.Messages[i]; m != nil && *m != "" {
			assert.Regexp(t, epidemicProgress, *m)
			progress++
		}
	}
	assert.Positive(t, progress, "the progress arrives as status messages: %v", r.Statuses)
	for _, id := range r.SubscriptionIDs {
		assert.NotNil(t, id, "every notification carries the subscription id")
	}
	assert.Equal(t, r.TaskID, r.Last.TaskID)
	out := toolOutput(t, r.Last.Result)
	assert.EqualValues(t, 20261128, out["seed"], "the result is inlined in the completed notification")
}
