package listen

import (
	"bytes"
	"context"
	"net/http"
	"time"

	"github.com/funcmcp/funcmcp/host/internal/mcp/wire"
	"github.com/funcmcp/funcmcp/host/internal/notify"
	"github.com/funcmcp/funcmcp/metadata"
)

// Notification methods written on the streams.
const (
	notifyAcknowledged     = metadata.NotifyAcknowledged
	notifyToolsChanged     = metadata.NotifyToolsListChanged
	notifyPromptsChanged   = metadata.NotifyPromptsListChanged
	notifyResourcesChanged = metadata.NotifyResourcesListChanged
	notifyResourceUpdated  = metadata.NotifyResourcesUpdated
	notifyTasks            = metadata.NotifyTasks
)

// MetaSubscriptionID tags every message of a subscriptions/listen stream
// with the listen request's id.
const MetaSubscriptionID = "io.modelcontextprotocol/subscriptionId"

// Defaults of the streams.
const (
	// DefaultListenKeepAlive is the interval of the ": keep-alive"
	// comments of an idle listen or GET stream.
	DefaultListenKeepAlive = 25 * time.Second
	// DefaultListenWriteTimeout bounds one write to a listening client: a
	// client that stops reading is dropped once it passes.
	DefaultListenWriteTimeout = time.Minute
	// MaxListenRequestBytes bounds the body of a subscriptions/listen
	// request: its stream keeps it while it is open. What it follows is
	// bounded tighter (notify.Limits.SubscriptionBytes); this leaves room
	// for _meta and escapes.
	MaxListenRequestBytes = 128 << 10
	// StreamCost is what an open stream holds besides what it
	// follows and its request (its goroutine, its connection's buffers),
	// charged to the listener bytes (notify.Limits.Bytes).
	StreamCost = 16 << 10
)

// TaskNotices gives the task a notifications/tasks carries for a change
// of a task: the change's, or the record whole (see Server.taskNotice);
// release gives it back once written.
type TaskNotices func(ctx context.Context, c notify.Change, scope string) (task []byte, release func())

// Stream is one stream a listener writes to: a subscriptions/listen
// stream, or a legacy session's GET stream.
type Stream struct {
	out   *wire.SSEWriter
	l     *notify.Listener
	wake  chan struct{}
	subID []byte // the listen request's id (JSON); nil on a legacy stream
	scope string // the task scope of the request (tasks it may read)
	tasks TaskNotices
}

// NewStream returns a stream tagged with subID (the listen request's id,
// nil for a session's stream) whose tasks of scope are given by tasks.
// Its listener is set by [Stream.Listen] and its writer by [Stream.Open].
func NewStream(subID []byte, scope string, tasks TaskNotices) *Stream {
	return &Stream{wake: make(chan struct{}, 1), subID: subID, scope: scope, tasks: tasks}
}

// Listen sets the listener the stream writes; its Wake is [Stream.Signal].
func (ls *Stream) Listen(l *notify.Listener) { ls.l = l }

// Open sets the writer of the stream.
func (ls *Stream) Open(out *wire.SSEWriter) { ls.out = out }

// Out is the writer of the stream.
func (ls *Stream) Out() *wire.SSEWriter { return ls.out }

// Signal wakes the stream: its listener has something.
func (ls *Stream) Signal() {
	select {
	case ls.wake <- struct{}{}:
	default:
	}
}

// Run writes what the listener hears until ctx ends or the listener
// does; it returns why it stopped (the listener's error, else the
// context's or the write's).
func (ls *Stream) Run(ctx context.Context) error {
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ls.l.Done():
			return ls.l.Err()
		case <-ls.wake:
		}
		if err := ls.flush(ctx); err != nil {
			return err
		}
	}
}

// flush writes every change waiting.
func (ls *Stream) flush(ctx context.Context) error {
	for {
		c, ok := ls.l.Next()
		if !ok {
			return nil
		}
		if c.Kind == notify.TaskStatus {
			task, release := ls.tasks(ctx, c, ls.scope)
			err := ls.WriteTask(task)
			release()
			if err != nil {
				return err
			}
			continue
		}
		msg := RenderChange(c, ls.subID)
		if msg == nil {
			continue
		}
		if err := ls.out.Event(wire.EventMessage, msg); err != nil {
			return err
		}
	}
}

// WriteTask writes the notifications/tasks of task (its JSON object
// whole), tagged with the stream's subscription id. task is written as it
// is, never copied into the message: every listener of a task shares it
// (see taskrun.Shared).
func (ls *Stream) WriteTask(task []byte) error {
	if len(task) < 2 || task[0] != '{' {
		return nil
	}
	const head = `{"jsonrpc":"2.0","method":"` + notifyTasks + `","params":`
	var tail bytes.Buffer
	if ls.subID != nil {
		if len(task) > 2 {
			tail.WriteByte(',')
		}
		tail.WriteString(`"_meta":{"` + MetaSubscriptionID + `":`)
		tail.Write(ls.subID)
		tail.WriteByte('}')
	}
	tail.WriteString("}}")
	return ls.out.EventParts(wire.EventMessage, []byte(head), task[:len(task)-1], tail.Bytes())
}

// RenderChange writes the notification of a change of a list or a
// resource; subID tags it (a listen stream). nil when there is nothing to
// write.
func RenderChange(c notify.Change, subID []byte) []byte {
	var b bytes.Buffer
	b.WriteString(`{"jsonrpc":"2.0","method":`)
	params := func() {
		if subID != nil {
			b.WriteString(`"_meta":{"` + MetaSubscriptionID + `":`)
			b.Write(subID)
			b.WriteByte('}')
		}
	}
	switch c.Kind {
	case notify.ToolsListChanged, notify.PromptsListChanged, notify.ResourcesListChanged:
		method := map[notify.Kind]string{notify.ToolsListChanged: notifyToolsChanged,
			notify.PromptsListChanged: notifyPromptsChanged, notify.ResourcesListChanged: notifyResourcesChanged}[c.Kind]
		appendString(&b, method)
		if subID != nil {
			b.WriteString(`,"params":{`)
			params()
			b.WriteByte('}')
		}
	case notify.ResourceUpdated:
		appendString(&b, notifyResourceUpdated)
		b.WriteString(`,"params":{"uri":`)
		appendString(&b, c.URI)
		if subID != nil {
			b.WriteByte(',')
			params()
		}
		b.WriteByte('}')
	default: // a task's change goes on a listen stream only (Stream.WriteTask)
		return nil
	}
	b.WriteByte('}')
	return b.Bytes()
}

// Acknowledgement is the first message of a listen stream: what is
// honoured, the filter f the hub accepted (so its URIs and task ids are
// within the listener's bounds: the message is as bounded), with the lists
// of URIs and of task ids when uris and taskIDs; tagged with the
// subscription id.
func Acknowledgement(f notify.Filter, uris, taskIDs bool, subID []byte) []byte {
	var b bytes.Buffer
	b.WriteString(`{"jsonrpc":"2.0","method":"` + notifyAcknowledged + `","params":{"notifications":{`)
	member := func(name string) {
		if b.Bytes()[b.Len()-1] != '{' {
			b.WriteByte(',')
		}
		b.WriteString(`"` + name + `":`)
	}
	for _, flag := range []struct {
		name string
		on   bool
	}{{"toolsListChanged", f.ToolsListChanged}, {"promptsListChanged", f.PromptsListChanged}, {"resourcesListChanged", f.ResourcesListChanged}} {
		if flag.on {
			member(flag.name)
			b.WriteString("true")
		}
	}
	list := func(name string, l []string) {
		member(name)
		b.WriteByte('[')
		for i, s := range l {
			if i > 0 {
				b.WriteByte(',')
			}
			appendString(&b, s)
		}
		b.WriteByte(']')
	}
	if uris {
		list("resourceSubscriptions", f.Resources)
	}
	if taskIDs {
		list("taskIds", f.Tasks)
	}
	b.WriteString(`},"_meta":{"` + MetaSubscriptionID + `":`)
	b.Write(subID)
	b.WriteString("}}}")
	return b.Bytes()
}

// RequestHeld is what the stream of request r keeps of it while open: its
// body (at most MaxListenRequestBytes; all of it when its length was not
// announced).
func RequestHeld(r *http.Request) int64 {
	if r.ContentLength >= 0 {
		return min(r.ContentLength, MaxListenRequestBytes)
	}
	return MaxListenRequestBytes
}

// appendString writes s as a JSON string.
func appendString(b *bytes.Buffer, s string) {
	b.Write(metadata.AppendJSONString(b.AvailableBuffer(), s))
}
