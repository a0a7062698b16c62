package taskrun

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/host/internal/jsonrpc"
	"github.com/funcmcp/funcmcp/host/internal/owner"
	"github.com/funcmcp/funcmcp/host/internal/tasks"
	"github.com/funcmcp/funcmcp/metadata"
)

// fakeRuns records what the telemetry hook is told of each run.
type fakeRuns struct {
	started []string // the tools of the runs started
	ended   []RunEnd
}

func (f *fakeRuns) StartRun(ctx context.Context, tool string) (context.Context, func(RunEnd)) {
	f.started = append(f.started, tool)
	return ctx, func(e RunEnd) { f.ended = append(f.ended, e) }
}

// TestWorkDrivesTheTaskLifecycle drives the steps of a call's task as a
// host does (admit, Admitted, invoke, Ended), with a fake host: the
// record is made on admission, the run is traced once from start to end,
// and a failure of the function becomes the task's error only when the
// call is a task.
func TestWorkDrivesTheTaskLifecycle(t *testing.T) {
	failure := &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the function failed"}
	isError := metadata.ErrorResult("An error occurred invoking 'job'.")
	ok := &metadata.CallToolResult{Content: []json.RawMessage{metadata.TextContent("done")}}
	tests := []struct {
		name      string
		deferred  bool // the tool makes the task itself (it never does here)
		res       *metadata.CallToolResult
		failure   *jsonrpc.Error
		cancelled bool
		wantRes   *metadata.CallToolResult
		wantErr   error
		wantEnd   RunEnd // TaskID "x": the run's id
		wantStore bool
	}{
		{name: "completed", res: ok, wantRes: ok, wantEnd: RunEnd{TaskID: "x", Status: "completed"}, wantStore: true},
		{name: "tool error", res: isError, wantRes: isError, wantEnd: RunEnd{TaskID: "x", Status: "completed", ToolError: true}, wantStore: true},
		{name: "function failed", res: isError, failure: failure, wantErr: failure, wantEnd: RunEnd{TaskID: "x", Status: "failed"}, wantStore: true},
		{name: "cancelled", res: isError, cancelled: true, wantRes: isError, wantEnd: RunEnd{TaskID: "x", Status: "cancelled"}, wantStore: true},
		{name: "deferred, stayed synchronous", deferred: true, res: isError, failure: failure, wantRes: isError, wantEnd: RunEnd{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			store := tasks.NewMemory(nil)
			runs := &fakeRuns{}
			s := NewService(&Options{Store: store, Telemetry: runs}, "i1", slog.New(slog.NewTextHandler(io.Discard, nil)))
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			run := s.NewRun(ctx, cancel, "scope", owner.ID("o"), "job", &metadata.TaskSupport{Deferred: tc.deferred})
			if !tc.deferred {
				run.MakeOnAdmission()
			}
			w := run.Work()

			wctx, err := w.Admitted(ctx)
			require.NoError(t, err)
			_, err = store.Get(ctx, run.ID())
			assert.Equal(t, tc.wantStore, err == nil, "the record exists once admitted: %v", err)
			if tc.cancelled {
				cancel(errors.New("cancelled"))
			}
			res, err := w.Ended(wctx, tc.res, nil, tc.failure)
			assert.Same(t, tc.wantRes, res)
			if tc.wantErr != nil {
				assert.Same(t, tc.wantErr, err)
			} else {
				assert.NoError(t, err)
			}
			want := tc.wantEnd
			if want.TaskID == "x" {
				want.TaskID = run.ID()
			}
			assert.Equal(t, []string{"job"}, runs.started)
			assert.Equal(t, []RunEnd{want}, runs.ended)
			if run.On() {
				run.Finish(ctx, nil, nil)
			}
		})
	}
}

// TestWorkRefusedRecord: a store that refuses the task's record (a limit
// reached) fails the call with -32000 naming it, and the run's span ends
// saying the task was not created.
func TestWorkRefusedRecord(t *testing.T) {
	store := tasks.NewMemoryWith(nil, tasks.MemoryLimits{Tasks: 1, TasksPerOwner: 1})
	require.NoError(t, store.Create(context.Background(), &tasks.Task{ID: "other", Owner: "o", Status: tasks.StatusWorking, Created: time.Now(), TTL: time.Hour}))
	runs := &fakeRuns{}
	s := NewService(&Options{Store: store, Telemetry: runs}, "i1", slog.New(slog.NewTextHandler(io.Discard, nil)))
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	run := s.NewRun(ctx, cancel, "scope", owner.ID("o"), "job", &metadata.TaskSupport{})
	run.MakeOnAdmission()

	_, err := run.Work().Admitted(ctx)
	var pe *jsonrpc.Error
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, jsonrpc.CodeServerError, pe.Code)
	assert.Contains(t, pe.Message, "Server busy: ")
	assert.False(t, run.On())
	assert.Equal(t, []RunEnd{{NotCreated: true}}, runs.ended)
}

// TestWorkWithoutTelemetry: with telemetry off the steps run all the same.
func TestWorkWithoutTelemetry(t *testing.T) {
	s := NewService(&Options{Store: tasks.NewMemory(nil)}, "i1", slog.New(slog.NewTextHandler(io.Discard, nil)))
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	run := s.NewRun(ctx, cancel, "scope", owner.ID("o"), "job", &metadata.TaskSupport{})
	run.MakeOnAdmission()
	w := run.Work()
	wctx, err := w.Admitted(ctx)
	require.NoError(t, err)
	require.True(t, run.On())
	failure := &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the function failed"}
	res, err := w.Ended(wctx, metadata.ErrorResult("x"), nil, failure)
	assert.Nil(t, res)
	assert.Same(t, failure, err)
	run.Finish(ctx, nil, failure)
}
