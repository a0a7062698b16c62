package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/funcmcp/funcmcp/worker"
)

// The fixtures of the tasks extension's scenarios (SEP-2663:
// tasks-lifecycle, tasks-capability-negotiation, tasks-wire-fields,
// tasks-request-state-removal, tasks-mrtr-input, tasks-request-headers,
// tasks-dispatch-and-envelope, tasks-required-task-error,
// tasks-mrtr-composition), with the names, arguments and results their
// descriptions ask for.

// maxComputeSeconds bounds slow_compute: the suite asks for at most 60.
const maxComputeSeconds = 600

// failPause and panicPause are how long failing_job and
// protocol_error_job run before they fail ("after ~1s", "a short moment"),
// so that the task is seen working first.
const (
	failPause  = time.Second
	panicPause = 200 * time.Millisecond
)

// taskPause is how long test_tool_with_task keeps running once it is a
// task, so that the client sees it working before it completes.
const taskPause = 300 * time.Millisecond

// The questions and schemas of the tasks fixtures.
var (
	confirmDeleteSchema = json.RawMessage(`{"type":"object","properties":{"confirm":{"type":"boolean","description":"Delete the file?"}},"required":["confirm"]}`)
	multiNameSchema     = json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","description":"Your name"}},"required":["name"]}`)
	multiConfirmSchema  = json.RawMessage(`{"type":"object","properties":{"confirm":{"type":"boolean","description":"Go ahead?"}},"required":["confirm"]}`)
)

// registerTaskTools adds the tasks fixtures: greet (synchronous only),
// slow_compute, failing_job, protocol_error_job, confirm_delete,
// multi_input and test_tool_with_task.
func registerTaskTools(app *worker.App) {
	app.ConfigureMcpTool("greet").
		WithDescription("Greets someone by name (never a task).").
		WithProperty("name", worker.String, "Who to greet", worker.Required).
		Handle(greet)

	app.ConfigureMcpTool("slow_compute").
		WithDescription("Computes for the given number of seconds, reporting progress every second; a task when the client allows it.").
		WithProperty("seconds", worker.Number, "How long to compute, in seconds (0 answers at once)", worker.Required).
		WithProperty("label", worker.String, "A label to find the result by", worker.Optional).
		WithTaskSupport(worker.TaskOptional, nil).
		Handle(slowCompute)

	app.ConfigureMcpTool("failing_job").
		WithDescription("Runs for about a second, then reports a tool error; only as a task.").
		WithTaskSupport(worker.TaskRequired, nil).
		Handle(func(ctx context.Context, _ *worker.ToolContext) (*worker.Result, error) {
			if !sleep(ctx, failPause) {
				return nil, ctx.Err()
			}
			return nil, errors.New("failing_job failed, as it always does")
		})

	app.ConfigureMcpTool("protocol_error_job").
		WithDescription("Crashes after a short moment: as a task, the task fails.").
		WithTaskSupport(worker.TaskOptional, nil).
		Handle(func(ctx context.Context, _ *worker.ToolContext) (*worker.Result, error) {
			if !sleep(ctx, panicPause) {
				return nil, ctx.Err()
			}
			panic("protocol_error_job crashed, as it always does")
		})

	app.ConfigureMcpTool("confirm_delete").
		WithDescription("Asks the user to confirm (elicitation), then deletes the file or keeps it.").
		WithProperty("filename", worker.String, "The file to delete", worker.Required).
		WithTaskSupport(worker.TaskOptional, nil).
		Handle(confirmDelete)

	app.ConfigureMcpTool("multi_input").
		WithDescription("Asks the user two things at once (two elicitations), then answers with both.").
		WithTaskSupport(worker.TaskOptional, nil).
		Handle(multiInput)

	// It asks the user's name first, synchronously (on MCP 2026-07-28 an
	// input-required result, then the call again with the answer), and
	// only then becomes a task.
	//docs:begin deferred
	app.ConfigureMcpTool("test_tool_with_task").
		WithDescription("Asks the user's name, then goes on as a task and greets them.").
		WithTaskSupport(worker.TaskRequired, &worker.TaskOptions{Deferred: true}).
		Handle(func(ctx context.Context, tc *worker.ToolContext) (*worker.Result, error) {
			el, err := tc.Elicit(ctx, askName, nameSchema, worker.InputKey("user_name"))
			if err != nil {
				return nil, err // ErrInputRequired: the call ends, and runs again with the answer
			}
			if err := tc.RunAsTask(ctx); err != nil { // ErrNotSupported: no task on offer
				tc.Logf("going on synchronously: %v", err)
			}
			if !sleep(ctx, taskPause) { // the long part, now that the client holds a task
				return nil, ctx.Err()
			}
			return worker.TextResult(fmt.Sprintf("Hello, %s!", field(el, "name", "stranger"))), nil
		})
	//docs:end deferred
}

func greet(_ context.Context, tc *worker.ToolContext) (*worker.Result, error) {
	var in struct {
		Name string `json:"name"`
	}
	if err := tc.BindArguments(&in); err != nil {
		return nil, err
	}
	return worker.TextResult(fmt.Sprintf("Hello, %s!", in.Name)), nil
}

// slowCompute waits the seconds asked for, one second at a time, reporting
// progress after each, and stops as soon as the call is cancelled.
func slowCompute(ctx context.Context, tc *worker.ToolContext) (*worker.Result, error) {
	var in struct {
		Seconds float64 `json:"seconds"`
		Label   string  `json:"label"`
	}
	if err := tc.BindArguments(&in); err != nil {
		return nil, err
	}
	if in.Seconds < 0 || in.Seconds > maxComputeSeconds || math.IsNaN(in.Seconds) {
		return nil, fmt.Errorf("seconds must be between 0 and %d, not %v", maxComputeSeconds, in.Seconds)
	}
	total := time.Duration(in.Seconds * float64(time.Second))
	for done := time.Duration(0); done < total; {
		d := min(time.Second, total-done)
		if !sleep(ctx, d) {
			return nil, fmt.Errorf("slow_compute %q stopped after %v: %w", in.Label, done, ctx.Err())
		}
		done += d
		tc.Progress(done.Seconds(), total.Seconds(), fmt.Sprintf("%s: %v of %v", in.Label, done, total))
	}
	return worker.TextResult(fmt.Sprintf("Computed %q in %v seconds", in.Label, in.Seconds)), nil
}

// confirmDelete asks the user once and reports what it did.
func confirmDelete(ctx context.Context, tc *worker.ToolContext) (*worker.Result, error) {
	var in struct {
		Filename string `json:"filename"`
	}
	if err := tc.BindArguments(&in); err != nil {
		return nil, err
	}
	el, err := tc.Elicit(ctx, fmt.Sprintf("Delete %s?", in.Filename), confirmDeleteSchema, worker.InputKey("confirm"))
	if err != nil {
		return nil, err
	}
	if ok, _ := el.Content["confirm"].(bool); ok && el.Action == "accept" {
		return worker.TextResult("Deleted " + in.Filename), nil
	}
	return worker.TextResult("Kept " + in.Filename), nil
}

// multiInput asks two questions together: a task shows both pending, and
// the client may answer them one at a time.
func multiInput(ctx context.Context, tc *worker.ToolContext) (*worker.Result, error) {
	answers, err := tc.RequestInput(ctx, map[string]worker.InputRequest{
		"name":    worker.ElicitationRequest("What is your name?", multiNameSchema),
		"confirm": worker.ElicitationRequest("Shall I go ahead?", multiConfirmSchema),
	})
	if err != nil {
		return nil, err
	}
	var name, confirm worker.ElicitResult
	if err := errors.Join(json.Unmarshal(answers["name"], &name), json.Unmarshal(answers["confirm"], &confirm)); err != nil {
		return nil, fmt.Errorf("reading the answers: %w", err)
	}
	ok, _ := confirm.Content["confirm"].(bool)
	return worker.TextResult(fmt.Sprintf("Name: %s, confirmed: %t", field(&name, "name", "stranger"), ok && confirm.Action == "accept")), nil
}
