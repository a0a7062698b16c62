package metadata

import (
	"errors"
	"fmt"
)

// KeyTask, on a tool trigger, is a string holding a [TaskSupport] object:
// whether the tool may run as an MCP task (the tasks extension,
// io.modelcontextprotocol/tasks, SEP-2663) and the time to live and poll
// interval its tasks suggest. A funcmcp key: the Azure Functions host
// ignores it and runs the tool synchronously, as it always does.
const KeyTask = "task"

// Task support values: optional (a client that negotiated the tasks
// extension gets a task, others a synchronous call) or required (a
// 2026-07-28 client that did not negotiate it is refused with -32021;
// earlier revisions, which have no tasks, run the tool synchronously).
const (
	TaskOptional = "optional"
	TaskRequired = "required"
)

// TaskSupport is a tool's task declaration.
type TaskSupport struct {
	Support string `json:"support"`
	// TTLMs is how long a finished task stays readable, in milliseconds
	// (0: the host's default).
	TTLMs int64 `json:"ttlMs,omitempty"`
	// PollIntervalMs is the polling interval suggested to clients (0: the
	// host's default).
	PollIntervalMs int64 `json:"pollIntervalMs,omitempty"`
	// Deferred: the call starts synchronously, as for a client without
	// tasks (it may ask the client the 2026-07-28 way, ending with an
	// input-required result), and becomes a task only when the handler
	// asks the host to (see [HeaderTask]). Without it the host creates the
	// task before the handler runs.
	Deferred bool `json:"deferred,omitempty"`
	// Reruns is how many times the task may be run again, from the start
	// with the same arguments, on another instance when the instance
	// running it stops answering (0: never; the task then ends failed).
	// A tool declares it when running twice with the same arguments is
	// safe (idempotent) and gives the same result. Not with Deferred: a
	// re-run starts as a task, without the synchronous part.
	Reruns int `json:"reruns,omitempty"`
}

// Check reports what is wrong with a task declaration.
func (t *TaskSupport) Check() error {
	var errs []error
	if t.Support != TaskOptional && t.Support != TaskRequired {
		errs = append(errs, fmt.Errorf("%s: support %q is not %q or %q", KeyTask, t.Support, TaskOptional, TaskRequired))
	}
	if t.TTLMs < 0 || t.PollIntervalMs < 0 {
		errs = append(errs, errors.New(KeyTask+": ttlMs and pollIntervalMs must not be negative"))
	}
	if t.TTLMs > MaxTaskTTLMs {
		errs = append(errs, fmt.Errorf("%s: ttlMs %d is more than the maximum, %d (7 days)", KeyTask, t.TTLMs, int64(MaxTaskTTLMs)))
	}
	if t.PollIntervalMs > MaxTaskPollIntervalMs {
		errs = append(errs, fmt.Errorf("%s: pollIntervalMs %d is more than the maximum, %d (1 hour)", KeyTask, t.PollIntervalMs, int64(MaxTaskPollIntervalMs)))
	}
	if t.Reruns < 0 || t.Reruns > MaxTaskReruns {
		errs = append(errs, fmt.Errorf("%s: reruns %d is not between 0 and %d", KeyTask, t.Reruns, MaxTaskReruns))
	}
	if t.Reruns > 0 && t.Deferred {
		errs = append(errs, errors.New(KeyTask+": reruns does not go with deferred (a re-run starts as a task)"))
	}
	return errors.Join(errs...)
}

// MaxTaskReruns bounds [TaskSupport.Reruns]: a task runs at most
// MaxTaskReruns+1 times in all.
const MaxTaskReruns = 10

// The largest durations a task declaration may ask for: a declaration past
// them is refused at load (they would overflow a duration otherwise).
const (
	MaxTaskTTLMs          = 7 * 24 * 60 * 60 * 1000 // 7 days
	MaxTaskPollIntervalMs = 60 * 60 * 1000          // 1 hour
)

// Tasks under funchost. Beside the channel headers (see [HeaderNotifyURL])
// the host tells the worker whether the call is, or may become, a task:
//
//	X-Funcmcp-Task: running | offered
//
// "running": the client already has the task handle; requests to the
// client travel in stream mode and wait for the client's tasks/update,
// progress becomes the task's status message. "offered": the call runs
// synchronously (a tool whose declaration is Deferred), and the worker may
// POST {"type":"startTask"} ([NotificationStartTask]) to turn it into a
// task; the host then gives the client the task handle and answers 200
// with a [StartTaskReply], or 409 when it cannot. The Azure Functions host
// sends neither: there every call is synchronous.
const HeaderTask = "X-Funcmcp-Task"

// Values of [HeaderTask].
const (
	TaskStateRunning = "running"
	TaskStateOffered = "offered"
)

// NotificationStartTask asks the host to turn the call into a task (see
// [HeaderTask]); it has no other field.
const NotificationStartTask = "startTask"

// StartTaskReply is the host's answer to [NotificationStartTask]: the
// task's id and the input mode of the call from now on
// ([InputModeStream]).
type StartTaskReply struct {
	TaskID    string `json:"taskId"`
	InputMode string `json:"inputMode"`
}
