package mcp

import (
	"bytes"
	"context"

	"github.com/funcmcp/funcmcp/host/internal/jsonrpc"
	"github.com/funcmcp/funcmcp/host/internal/notify"
	"github.com/funcmcp/funcmcp/host/internal/tasks"
)

// publishingStore is the task store of a handler with a hub: every write
// that makes a task or changes its status or status message publishes a
// TaskStatus change, from whichever instance wrote it, so a listener with
// the task's id hears it on any instance (see listen.go).
type publishingStore struct {
	tasks.Store
	pub notify.Publisher
}

func (s publishingStore) Create(ctx context.Context, t *tasks.Task) error {
	if err := s.Store.Create(ctx, t); err != nil {
		return err
	}
	s.pub.Publish(taskChange(t))
	return nil
}

func (s publishingStore) Update(ctx context.Context, id string, change func(t *tasks.Task) error) (*tasks.Task, error) {
	var before tasks.Status
	var beforeMsg string
	t, err := s.Store.Update(ctx, id, func(t *tasks.Task) error {
		// The last run of change is the one stored.
		before, beforeMsg = t.Status, t.StatusMessage
		return change(t)
	})
	if err == nil && t != nil && (t.Status != before || t.StatusMessage != beforeMsg) {
		s.pub.Publish(taskChange(t))
	}
	return t, err
}

// taskChange is the change a task's new state makes: the task as
// notifications/tasks carries it, without its result (which a listener's
// instance reads from the store, see listener.taskParams) and without its
// input requests; the task's scope is the owner who may hear it.
func taskChange(t *tasks.Task) notify.Change {
	var b bytes.Buffer
	b.WriteByte('{')
	appendTaskFields(&b, t)
	if t.Status == tasks.StatusFailed && t.Error != nil {
		if e, err := jsonrpc.AppendErrorMember(b.AvailableBuffer(), t.Error.Code, t.Error.Message, t.Error.Data); err == nil {
			b.Write(e)
		}
	}
	b.WriteByte('}')
	return notify.Change{Kind: notify.TaskStatus, TaskID: t.ID, Owner: t.Scope, Task: b.Bytes()}
}
