package worker

import (
	"context"

	"github.com/funcmcp/funcmcp/metadata"
	"sort"
	"strings"
)

// InvocationKind names what a handler run serves.
type InvocationKind string

// The kinds of handler runs a [Hook] sees.
const (
	// KindTool: a tool's handler, for a synchronous call.
	KindTool InvocationKind = "tool"
	// KindTask: a tool's handler, for a call the host runs as an MCP task
	// from its start (a Deferred call that becomes a task later is a
	// KindTool run).
	KindTask InvocationKind = "task"
	// KindResource: a resource's or a resource template's read function.
	KindResource InvocationKind = "resource"
	// KindPrompt: a prompt's handler.
	KindPrompt InvocationKind = "prompt"
	// KindCompletion: a completion function (a fixed list runs none).
	KindCompletion InvocationKind = "completion"
	// KindClientRequest: a handler asking the MCP client (Elicit,
	// CreateMessage, ListRoots, RequestInput), inside that handler's run.
	KindClientRequest InvocationKind = "client request"
)

// Invocation describes one handler run to a [Hook].
type Invocation struct {
	Kind InvocationKind
	// Function is the function whose handler runs (for a client request,
	// the one whose handler asks).
	Function string
	// Name is what the run serves: the tool's name, the resource's URI, the
	// prompt's name, the completed argument's name, or the methods of a
	// client request (comma-separated, in key order).
	Name string
	// InvocationID is the host's id of the invocation ("" when it sent
	// none).
	InvocationID string

	// transport is how the MCP request reached the host (its headers), nil
	// when unknown: the telemetry hook continues a client's traceparent
	// from there when the host sent none.
	transport *metadata.Transport
}

// Hook wraps every handler run of the app ([Options.Hooks]): tools (and
// tasks), resource reads, prompts, completion functions and requests to the
// MCP client. It runs the handler by calling next (at most once) with the
// context the handler should get, and returns what the handler returned,
// or an error of its own instead (then a hook that does not call next must
// return an error). A panic in a hook is the handler's panic. Cross-cutting
// concerns (tracing, metrics, authorization, logging) go here without
// touching a handler. The invocation must not be kept past the call.
type Hook func(ctx context.Context, inv *Invocation, next func(ctx context.Context) error) error

// runHooks runs run inside the app's hooks, the first outermost. Without
// hooks it is run directly, at no cost.
func (a *App) runHooks(ctx context.Context, inv *Invocation, run func(ctx context.Context) error) error {
	if len(a.hooks) == 0 {
		return run(ctx)
	}
	next := run
	for i := len(a.hooks) - 1; i >= 0; i-- {
		hook, inner := a.hooks[i], next
		next = func(ctx context.Context) error { return hook(ctx, inv, inner) }
	}
	return next(ctx)
}

// requestNames is the Name of a client request: its methods in key order.
func requestNames(reqs map[string]InputRequest) string {
	keys := make([]string, 0, len(reqs))
	for k := range reqs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	methods := make([]string, len(keys))
	for i, k := range keys {
		methods[i] = reqs[k].Method
	}
	return strings.Join(methods, ",")
}
