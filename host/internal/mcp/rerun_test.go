package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/host/internal/caller"
	"github.com/funcmcp/funcmcp/host/internal/tasks"
	"github.com/funcmcp/funcmcp/metadata"
)

// TestTaskRunAgainOnAnotherInstance: a task of a tool that allows reruns,
// whose instance A stops answering, is claimed by B, which a client polls:
// B runs the call again with the same arguments and headers (not the
// credentials), the client reads working and a status message saying so,
// then B's result. A, when it reaches the store again, stops its work and
// does not overwrite B's run.
func TestTaskRunAgainOnAnotherInstance(t *testing.T) {
	const beat = 20 * time.Millisecond
	shared := tasks.NewMemory(nil)
	cut := &stallStore{Store: shared} // A's way to the store only
	clock := &fakeClock{now: time.Now()}
	useClock := func(h *handler) { h.tasks.SetClock(clock.Now) }
	a := taskServerWith(t, cut, beat, false, func(ctx context.Context, req *CallRequest) (*metadata.CallToolResult, error) {
		<-ctx.Done()
		return &metadata.CallToolResult{Content: []json.RawMessage{metadata.TextContent("A's late result")}}, nil
	}, useClock)
	var (
		mu    sync.Mutex
		calls []*CallRequest
	)
	release := make(chan struct{})
	b := taskServerWith(t, shared, beat, false, func(ctx context.Context, req *CallRequest) (*metadata.CallToolResult, error) {
		mu.Lock()
		calls = append(calls, req)
		mu.Unlock()
		if err := req.Notify.Progress(1, 4, ""); err != nil {
			return nil, err
		}
		<-release
		return &metadata.CallToolResult{Content: []json.RawMessage{metadata.TextContent("seed " + string(req.Arguments["seed"]))}}, nil
	}, useClock)
	id := createTask(t, a, "again", map[string]any{"seed": 7}, map[string]string{"Authorization": "Bearer secret",
		"X-Ms-Token-Aad-Access-Token": "secret", "X-Trace-Me": "yes"})

	cut.stall(true) // A stops answering
	clock.Add(10 * beat)
	assert.Equal(t, `"working"`, string(getTask(t, b, id, nil).Result["status"]), "suspect first")
	clock.Add(10 * beat)
	again := getTask(t, b, id, nil)
	require.Equal(t, `"working"`, string(again.Result["status"]), string(again.Result["statusMessage"]))
	assert.Contains(t, string(again.Result["statusMessage"]), "run again on another instance")
	assert.Contains(t, string(again.Result["statusMessage"]), "attempt 2 of 3")
	assert.Contains(t, b.logs.String(), "runs again on this instance")

	require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(calls) == 1 }, 10*time.Second, time.Millisecond)
	mu.Lock()
	call := calls[0]
	mu.Unlock()
	assert.Equal(t, "again", call.Name)
	assert.JSONEq(t, `7`, string(call.Arguments["seed"]))
	assert.Equal(t, 2, call.Attempt)
	assert.Equal(t, "yes", call.Headers.Get("X-Trace-Me"))
	assert.Empty(t, call.Headers.Get("Authorization"), "credentials are not kept")
	assert.Empty(t, call.Headers.Get("X-Ms-Token-Aad-Access-Token"), "access tokens are not kept")
	assert.True(t, call.Notify.InTask())
	require.Eventually(t, func() bool {
		return strings.Contains(string(getTask(t, b, id, nil).Result["statusMessage"]), "Attempt 2 of 3 (run again on another instance): 1 of 4 done")
	}, 10*time.Second, time.Millisecond, "the progress of the re-run says which run it is")

	// A reaches the store again: its run was taken, it stops and its
	// result does not replace B's run.
	cut.stall(false)
	require.Eventually(t, func() bool { return strings.Contains(a.logs.String(), "runs the task again") },
		10*time.Second, time.Millisecond, "A says it dropped the work:\n%s", a.logs.String())
	close(release)
	done := waitStatus(t, b, id, "completed")
	assert.Contains(t, string(done.Result["result"]), "seed 7")
	assert.NotContains(t, string(done.Result["result"]), "A's late result")
}

// TestTaskOutOfRuns: a task whose last allowed run was on the stopped
// instance ends failed, saying so; a tool without reruns keeps its call
// out of the record.
func TestTaskOutOfRuns(t *testing.T) {
	store := tasks.NewMemory(nil)
	s := taskServer(t, store, 20*time.Millisecond, func(ctx context.Context, req *CallRequest) (*metadata.CallToolResult, error) {
		return nil, errors.New("not called")
	})
	probe := httptest.NewRequest(http.MethodPost, "/", nil)
	old := time.Now().Add(-time.Minute)
	require.NoError(t, store.Create(t.Context(), &tasks.Task{ID: "spent", Scope: taskScope(caller.Of(probe).Owner()), Tool: "again", Instance: "gone",
		Status: tasks.StatusWorking, Created: old, Updated: old, Heartbeat: old, TTL: time.Hour, PollInterval: time.Second,
		Attempt: 3, Attempts: 3, Rerun: json.RawMessage(`{"arguments":{}}`)}))
	env := waitStatus(t, s, "spent", "failed")
	assert.Contains(t, string(env.Result["error"]), "(gone) stopped before the task finished, on run 3 of the 3 its tool allows")

	done := make(chan struct{})
	plain := taskServer(t, store, 20*time.Millisecond, func(ctx context.Context, req *CallRequest) (*metadata.CallToolResult, error) {
		<-done
		return metadata.ErrorResult("x"), nil
	})
	defer close(done)
	id := createTask(t, plain, "job", map[string]any{"seed": 1}, nil)
	rec, err := store.Get(t.Context(), id)
	require.NoError(t, err)
	assert.Nil(t, rec.Rerun, "a tool without reruns keeps no call")
	assert.Zero(t, rec.Attempts)
}
