package taskrun

import (
	"bytes"
	"context"

	"github.com/funcmcp/funcmcp/host/internal/jsonrpc"
	"github.com/funcmcp/funcmcp/host/internal/notify"
	"github.com/funcmcp/funcmcp/host/internal/tasks"
)

// PublishingStore is the task store of a handler with a hub: every write
// that makes a task or changes its status or status message publishes a
// TaskStatus change, from whichever instance wrote it, so a listener with
// the task's id hears it on any instance (see package mcp, listen.go).
type PublishingStore struct {
	tasks.Store
	Pub notify.Publisher // hears every change
}

func (s PublishingStore) Create(ctx context.Context, t *tasks.Task) error {
	if err := s.Store.Create(ctx, t); err != nil {
		return err
	}
	s.Pub.Publish(Change(t))
	return nil
}

func (s PublishingStore) Update(ctx context.Context, id string, change func(t *tasks.Task) error) (*tasks.Task, error) {
	var before tasks.Status
	var beforeMsg string
	t, err := s.Store.Update(ctx, id, func(t *tasks.Task) error {
		// The last run of change is the one stored.
		before, beforeMsg = t.Status, t.StatusMessage
		return change(t)
	})
	if err == nil && t != nil && (t.Status != before || t.StatusMessage != beforeMsg) {
		s.Pub.Publish(Change(t))
	}
	return t, err
}

// Change is the change a task's new state makes: the task as
// notifications/tasks carries it, without its result (which a listener's
// instance reads from the store, see package mcp, listen.go) and without its
// input requests; the task's scope is the owner who may hear it.
func Change(t *tasks.Task) notify.Change {
	var b bytes.Buffer
	b.WriteByte('{')
	AppendFields(&b, t)
	if t.Status == tasks.StatusFailed && t.Error != nil {
		if e, err := jsonrpc.AppendErrorMember(b.AvailableBuffer(), t.Error.Code, t.Error.Message, t.Error.Data); err == nil {
			b.Write(e)
		}
	}
	b.WriteByte('}')
	return notify.Change{Kind: notify.TaskStatus, TaskID: t.ID, Owner: t.Scope, Task: b.Bytes()}
}
