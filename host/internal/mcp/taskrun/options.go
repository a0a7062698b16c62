package taskrun

import (
	"context"
	"time"

	"github.com/funcmcp/funcmcp/host/internal/tasks"
	"github.com/funcmcp/funcmcp/metadata"
)

// Task defaults.
const (
	// DefaultTaskTTL is how long a task stays readable after its creation
	// when its tool suggests nothing.
	DefaultTaskTTL = time.Hour
	// MaxTaskTTL bounds the time to live a tool may ask for (a longer one
	// is refused at load, see metadata.MaxTaskTTLMs).
	MaxTaskTTL = metadata.MaxTaskTTLMs * time.Millisecond
	// DefaultTaskPollInterval is the poll interval suggested to clients
	// when the tool suggests nothing.
	DefaultTaskPollInterval = time.Second
	// DefaultTaskHeartbeat is how often the instance running a task
	// refreshes its record; see [Options.Heartbeat].
	DefaultTaskHeartbeat = 5 * time.Second
	// staleBeats heartbeats missed make a task's instance suspect, and as
	// many more seen unchanged make it count as gone (see judgeStopped).
	staleBeats = 3
	// statusEvery is how often, at most, a running task stores its latest
	// progress as its status message.
	statusEvery = time.Second
	// inputPoll is how often a task waiting for its client's answers reads
	// its record, for answers that reach another instance.
	inputPoll = 250 * time.Millisecond
)

// Options turn tasks on (see [Options.Tasks]).
type Options struct {
	// Store keeps the task records; every instance of the app must share
	// it. Required.
	Store tasks.Store
	// TTL and PollInterval are the defaults for tools that suggest none;
	// 0 means DefaultTaskTTL and DefaultTaskPollInterval.
	TTL, PollInterval time.Duration
	// Traceparent, when set (telemetry on), gives the W3C traceparent of
	// the span of a context: a task's record keeps the one of the context
	// it was made under (its run), and a later tasks/get links to it
	// ([Exchange.LinkedTrace]).
	Traceparent func(context.Context) string
	// Heartbeat is how often an instance running a task refreshes the
	// task's record and reads it for a cancellation made on another
	// instance. A task whose record went three heartbeats without a
	// refresh is suspect; an instance that then reads the same heartbeat
	// for three more, with no trouble reaching the store meanwhile, judges
	// its instance stopped and ends it failed, or claims it and runs it
	// again when its tool declares reruns (see Service.runAgain). 0 means
	// DefaultTaskHeartbeat.
	Heartbeat time.Duration
	// Telemetry, when set (telemetry on), traces the work of each call
	// that runs as a task or may become one ([Work]): its span, and the
	// count of tasks ended by status.
	Telemetry RunTelemetry
}
