package worker

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/funcmcp/funcmcp/metadata"
)

// InTask reports whether the call runs as an MCP task (the tasks
// extension): the client holds a task handle and polls it, the handler's
// progress is the task's status message, and its requests to the client
// wait for the client's tasks/update. Only funchost runs tasks.
func (tc *ToolContext) InTask() bool {
	return tc.notify != nil && tc.notify.inTask.Load()
}

// RunAsTask turns a call of a tool declared with TaskOptions.Deferred into
// an MCP task: the client gets its task handle now and the handler goes
// on, its result becoming the task's. Before it the call is synchronous —
// on MCP 2026-07-28 a request to the client ends it with an input-required
// result and the handler runs again with the answer —, after it requests
// to the client wait for the client's answer (tasks/update). It returns
// nil once the call is a task (at once when it already was).
//
// When the host or the client offers no task for this call (a client that
// did not negotiate the tasks extension, a tool not declared Deferred, the
// real Azure Functions host) it returns an error wrapping [ErrNotSupported]
// and the call goes on synchronously.
func (tc *ToolContext) RunAsTask(ctx context.Context) error {
	n := tc.notify
	if n == nil {
		return notSupported("running the call as a task: the host does not offer tasks")
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	switch n.task {
	case metadata.TaskStateRunning:
		return nil
	case metadata.TaskStateOffered:
	default:
		return notSupported("running the call as a task: the host does not offer it for this call")
	}
	body, err := metadata.Marshal(&metadata.Notification{Type: metadata.NotificationStartTask})
	if err != nil {
		return fmt.Errorf("running the call as a task: %w", err)
	}
	status, reply, err := n.exchangeLocked(ctx, body)
	switch {
	case err != nil:
		return fmt.Errorf("running the call as a task: %w", err)
	case status == http.StatusConflict:
		n.task = ""
		return notSupported("running the call as a task: " + string(reply))
	case status != http.StatusOK:
		return fmt.Errorf("running the call as a task: the host answered %d %s", status, http.StatusText(status))
	}
	var r metadata.StartTaskReply
	if err := json.Unmarshal(reply, &r); err != nil {
		return fmt.Errorf("running the call as a task: reading the host's answer: %w", err)
	}
	n.task = metadata.TaskStateRunning
	tc.ClientRequests.setInputMode(r.InputMode)
	n.inTask.Store(true)
	return nil
}
