package main

import (
	"context"
	"time"

	"github.com/funcmcp/funcmcp/worker"
)

// step is the pause between two notifications, as the suite's scenario
// descriptions ask ("after ~50ms").
const step = 50 * time.Millisecond

// registerNotifyingTools adds the tools that notify the client while they
// run (tools-call-with-logging, tools-call-with-progress, and
// server-stateless's test_logging_tool).
func registerNotifyingTools(app *worker.App) {
	app.ConfigureMcpTool("test_tool_with_logging").
		WithDescription("Sends three info log messages while it runs.").
		Handle(func(ctx context.Context, tc *worker.ToolContext) (*worker.Result, error) {
			for i, msg := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
				if i > 0 && !sleep(ctx, step) {
					return nil, ctx.Err()
				}
				tc.ClientLog(worker.LevelInfo, msg)
			}
			return worker.TextResult("Tool with logging executed successfully"), nil
		})

	// server-stateless (2026-07-28) calls test_logging_tool without a log
	// level in _meta and checks that no notifications/message arrives.
	app.ConfigureMcpTool("test_logging_tool").
		WithDescription("Sends one info log message.").
		Handle(func(_ context.Context, tc *worker.ToolContext) (*worker.Result, error) {
			tc.ClientLog(worker.LevelInfo, "test_logging_tool ran")
			return worker.TextResult("logged"), nil
		})

	app.ConfigureMcpTool("test_tool_with_progress").
		WithDescription("Reports progress 0, 50 and 100 of 100 while it runs.").
		Handle(func(ctx context.Context, tc *worker.ToolContext) (*worker.Result, error) {
			for i, done := range []float64{0, 50, 100} {
				if i > 0 && !sleep(ctx, step) {
					return nil, ctx.Err()
				}
				tc.Progress(done, 100, "")
			}
			return worker.TextResult("Tool with progress executed successfully"), nil
		})
}

// registerListChangeTools adds the tools server-stateless (2026-07-28)
// calls while a subscriptions/listen stream is open, and then expects
// notifications/tools/list_changed (or prompts) on that stream, and only
// on one that asked for it. Each announces that its list changed; the
// list itself stays as it is, which a client reading it again sees.
func registerListChangeTools(app *worker.App) {
	for name, list := range map[string]worker.List{
		"test_trigger_tool_change":   worker.ToolsList,
		"test_trigger_prompt_change": worker.PromptsList,
	} {
		app.ConfigureMcpTool(name).
			WithDescription("Announces that the " + string(list) + " list changed.").
			Handle(func(ctx context.Context, _ *worker.ToolContext) (*worker.Result, error) {
				if err := worker.NotifyListChanged(ctx, list); err != nil {
					return nil, err
				}
				return worker.TextResult("announced that the " + string(list) + " list changed"), nil
			})
	}
}

// sleep waits d, or less when ctx ends first; it reports whether it waited
// the whole time.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
