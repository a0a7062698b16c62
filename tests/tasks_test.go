package tests

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/internal/testutil"
)

// MCP tasks (2026-07-28, io.modelcontextprotocol/tasks) against real
// funchost processes serving the conformance fixture app: slow_compute
// (seconds), confirm_delete (one elicitation).

// taskClient speaks 2026-07-28 to one endpoint with one credential.
type taskClient struct {
	endpoint string
	auth     string // the Authorization header, "" for none
	// from is the loopback address the client connects from ("" for the
	// default): with no tokens asked for, a client is its address, not
	// its Authorization header.
	from string
}

// taskReply is a JSON-RPC reply with its result as members.
type taskReply struct {
	Result map[string]json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

const tasksExtension = "io.modelcontextprotocol/tasks"

// do sends method with params (the _meta added) and returns the reply.
func (c taskClient) do(t *testing.T, method, name string, params map[string]any) taskReply {
	t.Helper()
	params["_meta"] = map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientCapabilities": map[string]any{"elicitation": map[string]any{}, "extensions": map[string]any{tasksExtension: map[string]any{}}},
	}
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	require.NoError(t, err)
	headers := map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method, "Mcp-Name": name}
	if c.auth != "" {
		headers["Authorization"] = c.auth
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	ex, err := sendWith(ctx, clientFrom(c.from), c.endpoint, string(body), headers)
	require.NoError(t, err)
	var r taskReply
	require.NoError(t, json.Unmarshal(ex.body, &r), "%d %s", ex.status, ex.body)
	return r
}

// create calls tool and returns the id of the task it made.
func (c taskClient) create(t *testing.T, tool string, args map[string]any) string {
	t.Helper()
	r := c.do(t, "tools/call", tool, map[string]any{"name": tool, "arguments": args})
	require.Nil(t, r.Error, "tools/call %s", tool)
	require.Equal(t, `"task"`, string(r.Result["resultType"]), "tools/call %s made no task", tool)
	var id string
	require.NoError(t, json.Unmarshal(r.Result["taskId"], &id))
	return id
}

func (c taskClient) get(t *testing.T, id string) taskReply {
	t.Helper()
	return c.do(t, "tasks/get", id, map[string]any{"taskId": id})
}

// await polls tasks/get until the task has status, at most 20 s.
func (c taskClient) await(t *testing.T, id, status string) taskReply {
	t.Helper()
	var r taskReply
	require.EventuallyWithT(t, func(ct *assert.CollectT) {
		r = c.get(t, id)
		if assert.Nil(ct, r.Error) {
			assert.Equal(ct, `"`+status+`"`, string(r.Result["status"]))
		}
	}, 20*time.Second, 50*time.Millisecond)
	return r
}

// TestTasksAcrossInstances: two instances share their tasks through Azure
// Storage (Azurite): a task made on A is read, answered and cancelled on
// B; a result larger than a table row travels by blob; and when A is
// killed mid-task, B ends the task failed. (Whose task it is, across
// instances, is in TestOAuthBindsToThePrincipal: an app without tokens has
// unauthenticated clients, whose tasks only their random ids keep apart.)
func TestTasksAcrossInstances(t *testing.T) {
	az := testutil.StartAzurite(t, repoRoot(t))
	env := []string{"AzureWebJobsStorage=" + az.ConnectionString(), "FUNCMCP_TASK_STORE=azure", "FUNCMCP_TASK_HEARTBEAT=300ms"}
	app := conformanceFixture(t)
	a, b := startHostEnv(t, app, env), startHostEnv(t, app, env)
	onA := taskClient{endpoint: a.endpoint, auth: "Bearer alice"}
	onB := taskClient{endpoint: b.endpoint, auth: "Bearer alice"}

	// Asked on A, answered on B. The file name makes the result ~100 KiB.
	name := strings.Repeat("report-", 15000) + ".txt"
	id := onA.create(t, "confirm_delete", map[string]any{"filename": name})
	r := onB.await(t, id, "input_required")
	var reqs map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(r.Result["inputRequests"], &reqs))
	require.Len(t, reqs, 1)
	answers := map[string]any{}
	for k := range reqs {
		answers[k] = map[string]any{"action": "accept", "content": map[string]any{"confirm": true}}
	}
	up := onB.do(t, "tasks/update", id, map[string]any{"taskId": id, "inputResponses": answers})
	require.Nil(t, up.Error)
	done := onB.await(t, id, "completed")
	assert.Greater(t, len(done.Result["result"]), 64<<10, "the result is larger than a table property")
	assert.Contains(t, string(done.Result["result"]), "Deleted report-report-")

	// Cancelled on B, the work on A stops.
	long := onA.create(t, "slow_compute", map[string]any{"seconds": 60, "label": "long"})
	cancel := onB.do(t, "tasks/cancel", long, map[string]any{"taskId": long})
	require.Nil(t, cancel.Error)
	onA.await(t, long, "cancelled")

	// A dies mid-task: B ends the task failed, saying why.
	orphan := onA.create(t, "slow_compute", map[string]any{"seconds": 60, "label": "orphan"})
	onB.await(t, orphan, "working")
	a.kill(t)
	failed := onB.await(t, orphan, "failed")
	assert.Contains(t, string(failed.Result["error"]), "stopped before the task finished")
	assert.NotContains(t, failed.Result, "result")
}

// TestTaskRunAgainOnAnotherInstance: two instances on Azurite; the
// sample's simulate_epidemic (deterministic for its seed, declared safe to
// run again) runs as a task on A, which is killed with SIGKILL mid-task. A
// client polling tasks/get on B sees the task working, run again on
// another instance (attempt 2 of 3), then completed with the same result
// as an uninterrupted run with the same seed.
func TestTaskRunAgainOnAnotherInstance(t *testing.T) {
	az := testutil.StartAzurite(t, repoRoot(t))
	env := []string{"AzureWebJobsStorage=" + az.ConnectionString(), "FUNCMCP_TASK_STORE=azure", "FUNCMCP_TASK_HEARTBEAT=300ms"}
	app := sample(t)
	a, b := startHostEnv(t, app, env), startHostEnv(t, app, env)
	onA := taskClient{endpoint: a.endpoint}
	onB := taskClient{endpoint: b.endpoint}
	args := map[string]any{"population": 50000, "days": 120, "duration_seconds": 4, "seed": 20261206}

	// The result of a run nobody interrupts.
	whole := onB.await(t, onB.create(t, "simulate_epidemic", args), "completed")
	var want struct {
		StructuredContent json.RawMessage `json:"structuredContent"`
	}
	require.NoError(t, json.Unmarshal(whole.Result["result"], &want))
	require.NotEmpty(t, want.StructuredContent)

	id := onA.create(t, "simulate_epidemic", args)
	require.EventuallyWithT(t, func(ct *assert.CollectT) {
		r := onB.get(t, id)
		assert.Equal(ct, `"working"`, string(r.Result["status"]))
		assert.Contains(ct, string(r.Result["statusMessage"]), "day ", "A reports progress")
	}, 20*time.Second, 50*time.Millisecond)
	a.kill(t)
	killed := time.Now()

	// B judges A stopped and claims the task: the poll that does so, or a
	// later one, reads it working again, saying so.
	var again taskReply
	require.EventuallyWithT(t, func(ct *assert.CollectT) {
		again = onB.get(t, id)
		assert.Contains(ct, string(again.Result["statusMessage"]), "run again on another instance")
	}, 30*time.Second, 50*time.Millisecond)
	claimed := time.Since(killed)
	assert.Equal(t, `"working"`, string(again.Result["status"]))
	assert.Contains(t, string(again.Result["statusMessage"]), "attempt 2 of 3")
	t.Logf("from the kill to the claim: %s (heartbeat 300ms)", claimed.Round(time.Millisecond))

	done := onB.await(t, id, "completed")
	var got struct {
		StructuredContent json.RawMessage `json:"structuredContent"`
	}
	require.NoError(t, json.Unmarshal(done.Result["result"], &got))
	assert.JSONEq(t, string(want.StructuredContent), string(got.StructuredContent), "the same report as a run nobody interrupted")
	assert.Contains(t, b.console.String(), "runs again on this instance")
}

// TestTaskTimeToLive: past its time to live a task is gone, and its work,
// when still running, is stopped.
func TestTaskTimeToLive(t *testing.T) {
	h := startHostEnv(t, conformanceFixture(t), []string{"FUNCMCP_TASK_TTL=1500ms", "FUNCMCP_TASK_HEARTBEAT=200ms"})
	c := taskClient{endpoint: h.endpoint}
	quick := c.create(t, "slow_compute", map[string]any{"seconds": 0, "label": "quick"})
	r := c.await(t, quick, "completed")
	assert.Equal(t, "1500", string(r.Result["ttlMs"]))
	long := c.create(t, "slow_compute", map[string]any{"seconds": 60, "label": "long"})
	require.EventuallyWithT(t, func(ct *assert.CollectT) {
		for _, id := range []string{quick, long} {
			r := c.get(t, id)
			if assert.NotNil(ct, r.Error, "task %s still readable", id) {
				assert.Equal(ct, -32602, r.Error.Code)
			}
		}
	}, 20*time.Second, 100*time.Millisecond)
	// The work of the expired task was stopped: the host logs it cancelled.
	assert.EventuallyWithT(t, func(ct *assert.CollectT) {
		assert.Contains(ct, h.console.String(), "(Cancelled)")
	}, 10*time.Second, 50*time.Millisecond)
}
