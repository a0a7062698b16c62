package host

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/host/internal/mcp"
	"github.com/funcmcp/funcmcp/metadata"
)

// fakeCallTask is the MCP side's task of a call, as a test sees the
// host drive it: it records the steps and, as a task does, answers a
// failure of the function with the failure.
type fakeCallTask struct {
	h           *Host
	admitErr    error
	admitted    int
	slotTaken   bool // a task slot was held when Admitted ran
	ended       int
	gotRes      *metadata.CallToolResult
	gotErr      error
	gotFailure  *mcp.ProtocolError
	runsAsATask bool
}

func (f *fakeCallTask) Admitted(ctx context.Context) (context.Context, error) {
	f.admitted++
	f.slotTaken = f.h.calls.TasksRunning() == 1
	return ctx, f.admitErr
}

func (f *fakeCallTask) Ended(_ context.Context, res *metadata.CallToolResult, err error, failure *mcp.ProtocolError) (*metadata.CallToolResult, error) {
	f.ended++
	f.gotRes, f.gotErr, f.gotFailure = res, err, failure
	if f.runsAsATask && failure != nil {
		return nil, failure
	}
	return res, err
}

// TestCallToolDrivesTheCallTaskOnly: the host's part of a tools/call that
// is or may become a task reads nothing of the task: with no Notifier at
// all, it admits the call against the owner's running tasks, hands the
// rest to CallRequest.Task (Admitted once admitted, Ended with what the
// call ran to, the function's failure apart) and answers what Ended
// returns; a task whose record could not be made runs nothing.
func TestCallToolDrivesTheCallTaskOnly(t *testing.T) {
	fw := newFakeWorker(t)
	root := weatherApp(t, `{"version":"2.0"}`)
	h, _ := newTestHost(t, root, fw.srv.URL, nil)
	args := map[string]json.RawMessage{"city": json.RawMessage(`"Oslo"`)}

	t.Run("succeeded", func(t *testing.T) {
		task := &fakeCallTask{h: h, runsAsATask: true}
		res, err := h.callTool(context.Background(), &mcp.CallRequest{Name: "get_weather", Arguments: args, Task: task})
		require.NoError(t, err)
		assert.False(t, res.IsError)
		assert.Equal(t, 1, task.admitted)
		assert.True(t, task.slotTaken, "admitted against the owner's running tasks")
		assert.Equal(t, 1, task.ended)
		assert.Same(t, res, task.gotRes)
		assert.Nil(t, task.gotFailure)
		assert.Zero(t, h.calls.TasksRunning(), "the slot is released")
	})
	t.Run("function failed, as a task", func(t *testing.T) {
		task := &fakeCallTask{h: h, runsAsATask: true}
		res, err := h.callTool(context.Background(), &mcp.CallRequest{Name: "fail500", Arguments: args, Task: task})
		assert.Nil(t, res)
		var pe *mcp.ProtocolError
		require.True(t, errors.As(err, &pe), "want the task's error, got %v", err)
		assert.Equal(t, mcp.CodeInternalError, pe.Code)
		assert.Contains(t, pe.Message, "Internal error: the function failed (invocation ")
		require.NotNil(t, task.gotRes, "Ended sees the result a synchronous call answers")
		assert.True(t, task.gotRes.IsError)
		assert.NoError(t, task.gotErr)
		assert.Same(t, task.gotFailure, pe)
	})
	t.Run("function failed, stayed synchronous", func(t *testing.T) {
		task := &fakeCallTask{h: h}
		res, err := h.callTool(context.Background(), &mcp.CallRequest{Name: "fail500", Arguments: args, Task: task})
		require.NoError(t, err)
		assert.True(t, res.IsError)
		assert.NotNil(t, task.gotFailure)
	})
	t.Run("record refused", func(t *testing.T) {
		before := len(fw.requests())
		refused := &mcp.ProtocolError{Code: -32000, Message: "Server busy"}
		task := &fakeCallTask{h: h, admitErr: refused}
		res, err := h.callTool(context.Background(), &mcp.CallRequest{Name: "get_weather", Arguments: args, Task: task})
		assert.Nil(t, res)
		assert.Same(t, refused, err)
		assert.Zero(t, task.ended)
		assert.Len(t, fw.requests(), before, "nothing ran")
		assert.Zero(t, h.calls.TasksRunning())
	})
}
