// Command hardapp is the function app of the hardening tests (tests/
// hardening_test.go): tools that show what a host must guard against.
//
//	spawn     starts three processes as detaching programs do (a child, an
//	          orphan, a process in a session of its own) and returns their pids
//	slow      waits "ms" milliseconds, or until the call is cancelled, and says which
//	slow_task slow, run as an MCP task when the client negotiated tasks
//	env_keys  lists the host's key variables found in its environment
//	check     takes a city (a string) and days (1 to 7)
//
// The app checks no arguments itself (worker.Options.InputValidation off,
// which function.json does not carry), as a worker in another language
// might not: what refuses bad arguments is the host.
package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/funcmcp/funcmcp/worker"
)

func main() {
	app := worker.New(&worker.Options{InputValidation: worker.ValidationOff})
	app.ConfigureMcpTool("spawn").
		WithDescription("Starts three sleeping processes and returns their pids.").
		Handle(spawn)
	app.ConfigureMcpTool("slow").
		WithDescription("Waits, or stops when cancelled.").
		WithProperty("ms", worker.Integer, "How long to wait.", worker.Required).
		Handle(slow)
	app.ConfigureMcpTool("slow_task").
		WithDescription("Waits, or stops when cancelled; a task when the client can.").
		WithProperty("ms", worker.Integer, "How long to wait.", worker.Required).
		WithTaskSupport(worker.TaskOptional, &worker.TaskOptions{PollInterval: time.Second, TTL: time.Hour}).
		Handle(slow)
	app.ConfigureMcpTool("env_keys").
		WithDescription("Lists the host's key variables found in the environment.").
		Handle(func(context.Context, *worker.ToolContext) (*worker.Result, error) {
			keys := []string{}
			for _, kv := range os.Environ() {
				if name, _, _ := strings.Cut(kv, "="); strings.HasPrefix(name, "FUNCHOST_") && strings.HasSuffix(name, "_KEY") {
					keys = append(keys, name)
				}
			}
			return &worker.Result{StructuredContent: map[string]any{"keys": keys}}, nil
		})
	app.ConfigureMcpTool("check").
		WithDescription("Takes a city and a number of days.").
		WithProperty("city", worker.String, "The city.", worker.Required).
		WithInputSchema(`{"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer","minimum":1,"maximum":7}},"required":["city"]}`).
		Handle(func(context.Context, *worker.ToolContext) (*worker.Result, error) {
			return &worker.Result{StructuredContent: map[string]any{"checked": true}}, nil
		})
	app.Main()
}

func spawn(context.Context, *worker.ToolContext) (*worker.Result, error) {
	child := exec.Command("sleep", "300")
	if err := child.Start(); err != nil {
		return nil, err
	}
	out, err := exec.Command("sh", "-c", "sleep 300 >/dev/null 2>&1 & echo $!").Output()
	if err != nil {
		return nil, err
	}
	orphan, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		return nil, err
	}
	session := exec.Command("sleep", "300")
	session.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := session.Start(); err != nil {
		return nil, err
	}
	return &worker.Result{StructuredContent: map[string]any{"worker": os.Getpid(), "pids": []int{child.Process.Pid, orphan, session.Process.Pid}}}, nil
}

func slow(ctx context.Context, tc *worker.ToolContext) (*worker.Result, error) {
	var ms int
	_ = json.Unmarshal(tc.Arguments["ms"], &ms)
	select {
	case <-time.After(time.Duration(ms) * time.Millisecond):
		return &worker.Result{StructuredContent: map[string]any{"outcome": "finished"}}, nil
	case <-ctx.Done():
		return &worker.Result{StructuredContent: map[string]any{"outcome": "cancelled"}}, nil
	}
}
