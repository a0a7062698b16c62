package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/funcmcp/funcmcp/host/internal/ids"
	"github.com/funcmcp/funcmcp/host/internal/jsonrpc"
	"github.com/funcmcp/funcmcp/host/internal/owner"
)

// Status is a task's state (SEP-2663).
type Status string

// The statuses. Completed, failed and cancelled are terminal.
const (
	StatusWorking       Status = "working"
	StatusInputRequired Status = "input_required"
	StatusCompleted     Status = "completed"
	StatusFailed        Status = "failed"
	StatusCancelled     Status = "cancelled"
)

// Terminal reports whether s is a final status.
func (s Status) Terminal() bool {
	return s == StatusCompleted || s == StatusFailed || s == StatusCancelled
}

// Task is one task's record. Everything a client sees of a task, and what
// the instance running it needs to hear from others, is here.
type Task struct {
	ID string
	// Scope is the client that created the task: only requests of the same
	// scope see or touch it; others are told it does not exist.
	Scope string
	// Owner is who the task counts against in the store's limits (see
	// package owner): the most specific identity of the request that made
	// it.
	Owner owner.ID
	// Tool and Function name what runs; Instance the host instance that
	// runs it.
	Tool, Function, Instance string
	// Trace is the W3C traceparent of the task's run span, when the host
	// that made it traces (telemetry on): later requests about the task
	// link to it. "" otherwise.
	Trace string

	Status        Status
	StatusMessage string
	Created       time.Time
	Updated       time.Time
	// Heartbeat is when the instance running the task last said it still
	// does; a task not terminal whose heartbeat is long past ran on an
	// instance that stopped.
	Heartbeat time.Time
	// TTL is how long after its creation the task stays readable.
	TTL time.Duration
	// PollInterval is the interval suggested to the client.
	PollInterval time.Duration

	// InputRequests are the requests to the client still unanswered, by
	// key (each {"method","params"}); InputResponses the answers delivered
	// by tasks/update that the running tool has not taken yet.
	InputRequests  map[string]json.RawMessage
	InputResponses map[string]json.RawMessage

	// Result is the tool's result (a CallToolResult object) once
	// completed; Error the protocol error once failed. A result is never
	// changed in place once set (it is replaced whole): stores and readers
	// share one copy of it.
	Result json.RawMessage
	Error  *jsonrpc.Error
	// CancelRequested is set by tasks/cancel; the running instance stops
	// the work and settles the task as cancelled.
	CancelRequested bool
	// InstanceLost: the task was ended failed because the instance running
	// it was judged stopped (its heartbeat went stale); a result that
	// instance produces later is discarded.
	InstanceLost bool

	// Attempt is the run of the task under way or last made (1 the
	// first; 0 in a record made before attempts were counted means 1);
	// Attempts how many runs the tool allows in all (0 or 1: the task is
	// never run again). Rerun is what the host needs to run the task
	// again on another instance (the call, encoded by the host, opaque
	// here); nil when it may not be.
	Attempt, Attempts int
	Rerun             json.RawMessage
}

// RunNumber is the run under way or last made, counting from 1.
func (t *Task) RunNumber() int { return max(t.Attempt, 1) }

// CanRunAgain reports whether the task, not terminal, may be run once more
// on another instance.
func (t *Task) CanRunAgain() bool {
	return !t.Status.Terminal() && len(t.Rerun) > 0 && t.RunNumber() < t.Attempts
}

// Expires is when the task stops being readable.
func (t *Task) Expires() time.Time { return t.Created.Add(t.TTL) }

// clone returns a copy that shares no map with t; the result, which is
// never changed in place, is shared.
func (t *Task) clone() *Task {
	c := *t
	c.InputRequests = cloneMap(t.InputRequests)
	c.InputResponses = cloneMap(t.InputResponses)
	c.Rerun = append(json.RawMessage(nil), t.Rerun...)
	if t.Rerun == nil {
		c.Rerun = nil
	}
	if t.Error != nil {
		e := *t.Error
		c.Error = &e
	}
	return &c
}

func cloneMap(m map[string]json.RawMessage) map[string]json.RawMessage {
	if m == nil {
		return nil
	}
	out := make(map[string]json.RawMessage, len(m))
	for k, v := range m {
		out[k] = append(json.RawMessage(nil), v...)
	}
	return out
}

// ErrNotFound is a task that does not exist, has expired, or belongs to
// another client.
var ErrNotFound = errors.New("no such task")

// ErrInvalidID is a task id not of the form [NewID] makes.
var ErrInvalidID = errors.New("not a task id")

// Store keeps task records. Implementations are safe for concurrent use by
// several instances; Update is atomic per task.
type Store interface {
	// Create stores a new task; it returns only once a Get of its id, from
	// any instance, finds it. A store over one of its limits refuses with
	// an *owner.LimitError and stores nothing.
	Create(ctx context.Context, t *Task) error
	// Get returns a copy of the task, ErrNotFound when it does not exist or
	// has expired (an expired task found by a read is removed then, not at
	// the next sweep) or its id is not of the form NewID makes (found so
	// without reading storage).
	Get(ctx context.Context, id string) (*Task, error)
	// Update applies change to the latest copy and stores the result,
	// again when another writer changed the task meanwhile; it returns the
	// stored copy. An error from change is returned as it is, and nothing
	// is stored; a change that changes nothing may store nothing. A store
	// that keeps large results apart need not read one for an update:
	// change (and the copy returned) may then see Result nil, and a Result
	// left nil keeps the stored one. Get returns the task whole.
	Update(ctx context.Context, id string, change func(t *Task) error) (*Task, error)
	// Sweep removes the tasks expired before now.
	Sweep(ctx context.Context, now time.Time) error
}

// idLength is the length of a task id: [NewID] makes idLength characters
// of ids.LowerAlnum.
const idLength = 26

// NewID returns a new task id: 26 random lower-case letters and digits.
func NewID() string { return ids.Random(ids.LowerAlnum, idLength) }

// ValidID reports whether id has the form of the ids [NewID] makes. A store
// finds no task of any other id without reading anything.
func ValidID(id string) bool { return ids.Is(id, ids.LowerAlnum, idLength) }
