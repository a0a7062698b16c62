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
// extension gets a task, others a synchronous call) or required (a client
// that did not negotiate it is refused with -32021).
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
	return errors.Join(errs...)
}
