package host

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/funcmcp/funcmcp/binding"
	"github.com/funcmcp/funcmcp/host/internal/catalog"
	"github.com/funcmcp/funcmcp/host/internal/invoke"
	"github.com/funcmcp/funcmcp/host/internal/mcp"
	"github.com/funcmcp/funcmcp/host/internal/mcp/taskrun"
	"github.com/funcmcp/funcmcp/host/internal/telemetry"
	"github.com/funcmcp/funcmcp/internal/jsonx"
	"github.com/funcmcp/funcmcp/metadata"
)

// mcpServer is what the MCP endpoint serves of this host: the tool lists
// (2026-07-28 clients see the natural output schemas), tools/call, the
// x-mcp-header arguments of a tool (checked against the Mcp-Param-*
// headers of 2026-07-28 calls), the task declarations, and the resources,
// templates, prompts and completions.
func (h *Host) mcpServer() mcp.Server {
	return mcp.Server{
		ToolsList:   h.cat.ToolsList,
		CallTool:    h.callTool,
		AdmitsTasks: true, // callTool calls CallRequest.Task.Admitted once the call has its slot
		Functions: &mcp.Functions{
			Lists:        h.lists,
			ReadResource: h.readResource,
			GetPrompt:    h.getPrompt,
			Complete:     h.complete,
		},
		Resolve: h.resolve,
	}
}

// resolve finds, once per request, what the app serves by what a request
// names (mcp.Server.Resolve): the tool, the prompt, the static resource or
// the template a URI matches, with the app's own name for it (telemetry
// labels spans and metrics with it and never with a client's text), the
// scopes it requires, and for a tool its task declaration and x-mcp-header
// arguments; nil when the app serves nothing by that name.
func (h *Host) resolve(kind mcp.TargetKind, name string) *mcp.Resolved {
	switch kind {
	case mcp.TargetTool:
		if t := h.cat.Lookup(name); t != nil {
			return h.tools[t]
		}
	case mcp.TargetPrompt:
		if p, ok := h.cat.Prompt(name); ok {
			return &mcp.Resolved{Known: p.Name, What: "prompt '" + p.Name + "'", RequiredScopes: p.RequiredScopes}
		}
	case mcp.TargetResource:
		if r, _, ok := h.cat.LookupResource(name); ok {
			return &mcp.Resolved{Known: r.URI, What: r.Kind() + " '" + r.URI + "'", RequiredScopes: r.RequiredScopes}
		}
	}
	return nil
}

// toolRecords makes, once, what the endpoint resolves each tool to (see
// resolve): its name, its scopes, its task declaration and its
// x-mcp-header arguments (found once per input schema that tools share),
// so that resolving a call allocates nothing.
func toolRecords(cat *catalog.Catalog) map[*catalog.Tool]*mcp.Resolved {
	out := map[*catalog.Tool]*mcp.Resolved{}
	bySchema := map[*binding.Schema][]mcp.ParamHeader{}
	for _, t := range cat.Tools() {
		in := t.Binding.Input
		ph, seen := bySchema[in]
		if !seen {
			ph = mcp.ParamHeadersOf(in.JSON())
			bySchema[in] = ph
		}
		r := &mcp.Resolved{Known: t.Name, What: "tool '" + t.Name + "'", ParamHeaders: ph, Entry: t}
		if tr := t.Binding.Trigger; tr != nil {
			r.RequiredScopes, r.Task = tr.RequiredScopes, tr.Task
		}
		out[t] = r
	}
	return out
}

// UnknownToolMessage is the -32602 message for a tools/call of a tool the
// host does not serve.
// The name is quoted safely: invalid UTF-8 is replaced, and it is cut.
func unknownToolMessage(name string) string {
	return fmt.Sprintf("Unknown tool: '%s'", jsonx.SafeText(name))
}

// missingArgumentsMessage is the message for required arguments that are
// absent or null.
func missingArgumentsMessage(names []string) string {
	return "One or more required tool properties are missing values. Please provide: " + strings.Join(names, ", ")
}

func (h *Host) callTool(ctx context.Context, req *mcp.CallRequest) (*metadata.CallToolResult, error) {
	// The tool the endpoint found when it read the request (its scopes
	// were checked then, by the scope link); a call it did not read (a
	// task run again on another instance) looks it up.
	t, _ := toolOf(req)
	if t == nil {
		t = h.cat.Lookup(req.Name)
	}
	if t == nil {
		return nil, &mcp.ProtocolError{Code: mcp.CodeInvalidParams, Message: unknownToolMessage(req.Name)}
	}
	if missing := t.Binding.MissingArguments(req.Arguments); len(missing) > 0 {
		msg := missingArgumentsMessage(missing)
		if metadata.InputErrorsAsResults(req.ProtocolVersion) {
			return metadata.ErrorResult(msg), nil
		}
		return nil, &mcp.ProtocolError{Code: mcp.CodeInvalidParams, Message: msg}
	}
	if req.Tool == nil {
		// A call the endpoint did not read: its arguments' bounds were not
		// checked (mcp.Options.CheckArguments checks those it reads).
		if err := h.cat.CheckArguments(req.Arguments); err != nil {
			return nil, err
		}
	}
	if res, err := h.checkInput(ctx, t, req); res != nil || err != nil {
		return res, err
	}
	// A call that runs as a task or may become one (req.Task) counts
	// against its owner's running tasks; the MCP side drives its task
	// (the record, the run's span, the task's end) through req.Task.
	ctx, iv, done, err := h.admit(ctx, t.Function, req.Task != nil, req.Owner, slog.String("tool", t.Name))
	if err != nil {
		return nil, err
	}
	defer done()
	if req.Task != nil {
		if ctx, err = req.Task.Admitted(ctx); err != nil {
			return nil, err // the task's record could not be made: nothing ran
		}
	}
	res, failure, err := h.invokeTool(ctx, t, iv, req)
	if req.Task != nil {
		res, err = req.Task.Ended(ctx, res, err, failure)
	}
	switch {
	case ctx.Err() != nil:
		if stopping := iv.cancelled(ctx); stopping != nil {
			return nil, stopping
		}
	case err != nil:
		iv.executed(ctx, "Failed", slog.String("reason", err.Error()))
	case req.Notify.InputPending():
		iv.executed(ctx, "Input required") // the call is answered with the client's requests
	case res.IsError:
		iv.executed(ctx, "Failed")
	default:
		iv.executed(ctx, "Succeeded")
	}
	return res, err
}

// toolOf is the catalog entry the endpoint found for a call's tool.
func toolOf(req *mcp.CallRequest) (*catalog.Tool, bool) {
	if req.Tool == nil {
		return nil, false
	}
	t, ok := req.Tool.Entry.(*catalog.Tool)
	return t, ok
}

// taskRuns traces the runs of tasks (taskrun.Options.Telemetry): each is
// a span, which the task's record names for later requests to link to,
// and each task's end is counted by its status.
type taskRuns struct{ tel *telemetry.Telemetry }

// StartRun starts the span of the work of a call of tool that runs as a
// task or may become one.
func (r taskRuns) StartRun(ctx context.Context, tool string) (context.Context, func(taskrun.RunEnd)) {
	ctx, run := r.tel.Span(ctx, telemetry.SpanTaskRun, tool)
	return ctx, func(e taskrun.RunEnd) {
		switch {
		case e.NotCreated:
			run.End(telemetry.ErrorTypeTaskNotCreated)
			return
		case e.TaskID == "": // it stayed a synchronous call
			run.End("")
			return
		}
		run.Set(telemetry.AttrTaskID, e.TaskID)
		run.Set(telemetry.AttrTaskStatus, e.Status)
		errorType := ""
		switch {
		case e.Status == "cancelled" || e.Status == "failed":
			errorType = e.Status
		case e.ToolError:
			errorType = telemetry.ErrorTypeTool
		}
		run.End(errorType)
		r.tel.TaskFinished(ctx, e.Status)
	}
}

// checkInput validates the arguments against the tool's input schema
// (compiled at load: nothing is compiled here), as the worker does before
// its handler. Under strict a mismatch is refused before anything is
// forwarded: JSON-RPC -32602 for revisions before 2025-11-25, an isError
// result from 2025-11-25 on (SEP-1303), with the same message. Under warn
// it is logged and the call goes on; off checks nothing.
func (h *Host) checkInput(ctx context.Context, t *catalog.Tool, req *mcp.CallRequest) (*metadata.CallToolResult, error) {
	raw := req.RawArguments
	if raw == nil && req.Arguments != nil {
		// A request built by hand, with the map only.
		var err error
		if raw, err = json.Marshal(req.Arguments); err != nil {
			return nil, &mcp.ProtocolError{Code: mcp.CodeInvalidParams, Message: "Invalid params: the arguments are not JSON."}
		}
	}
	timed := h.tel.Timed()
	issue := t.Binding.CheckInput(raw, h.cfg.Output)
	if issue == nil {
		timed.Done(ctx, telemetry.SpanValidateInput, t.Name, "", "")
		return nil, nil
	}
	ctx = timed.Done(ctx, telemetry.SpanValidateInput, t.Name, telemetry.ErrorTypeInputSchema, string(issue.Mode))
	level := slog.LevelError
	if issue.Mode == ValidationWarn {
		level = slog.LevelWarn
	}
	h.log.LogAttrs(ctx, level, issue.LogMessage(), slog.String("function", t.Function), slog.String("tool", t.Name))
	if issue.Mode != ValidationStrict {
		return nil, nil
	}
	if metadata.InputErrorsAsResults(req.ProtocolVersion) {
		return metadata.ErrorResult(issue.Error()), nil
	}
	return nil, &mcp.ProtocolError{Code: mcp.CodeInvalidParams, Message: issue.Error()}
}

// invokeTool runs one invocation of t on the worker and shapes its
// result, as a synchronous call answers it; failure is, when the function
// failed, the error a task ends failed with instead (a task tells a
// failure of the function from the tool's own error result).
func (h *Host) invokeTool(ctx context.Context, t *catalog.Tool, iv *invocation, req *mcp.CallRequest) (_ *metadata.CallToolResult, failure *mcp.ProtocolError, _ error) {
	id := iv.id
	fn := &invoke.Function{Name: t.Function, DataKey: t.DataKey, Tool: t.Name}
	call := &invoke.Call{
		Arguments:  req.Arguments,
		SessionID:  req.SessionID,
		ClientInfo: req.ClientInfo,
		Headers:    req.Headers,
		Transport:  req.Transport,
	}
	if id := req.Caller.Identity(); id != nil {
		call.Encoded = id // its identity headers, encoded once per token
	}
	in, err := h.inv.ToolRequest(fn, call, time.Now())
	if err != nil {
		return h.failed(ctx, t, id, err), nil, nil
	}
	h.traceLogs(ctx, req.Notify)
	offer, closeChannel := h.notify.Open(id, req.Notify)
	defer closeChannel()
	resp, err := h.inv.Send(ctx, fn, id, in, offer)
	if err != nil {
		failure = &mcp.ProtocolError{Code: mcp.CodeInternalError,
			Message: fmt.Sprintf("Internal error: the function failed (invocation %s); the host's log says why.", id)}
	}
	fr := failureOf(err)
	if fr != nil {
		failure = protocolError(fr)
	}
	if fr != nil && fr.Code == metadata.CodeMissingRequiredClientCapability {
		// The tool needs a capability the client did not declare: -32021 on
		// 2026-07-28, a tool error before (the code is not theirs).
		iv.workerLogs(ctx, fr.Logs)
		if mcp.IsModern(req.ProtocolVersion) {
			return nil, failure, failure
		}
		return metadata.ErrorResult(fr.Error), failure, nil
	}
	if err != nil {
		return h.failed(ctx, t, id, err), failure, nil // logs why
	}
	d, err := resp.Result(t.Binding.Trigger.UseResultSchema)
	if err != nil {
		iv.workerLogs(ctx, resp.Logs)
		return h.failed(ctx, t, id, err), nil, nil
	}
	// The worker's line about its output issue is logged once, below, at
	// the level of the host's own.
	iv.workerLogs(ctx, without(resp.Logs, d.Issue))
	timed := h.tel.Timed()
	workerIssue := d.Issue
	issue := t.Binding.ShapeResult(d, h.cfg.Output)
	if workerIssue != "" && (issue == nil || issue.LogMessage() != workerIssue) {
		// Under strict the worker answered with an isError result, which
		// the host does not check again.
		h.outputIssue(ctx, t, id, workerIssue)
	}
	if issue == nil {
		timed.Done(ctx, telemetry.SpanValidateOutput, t.Name, "", "")
	} else {
		vctx := timed.Done(ctx, telemetry.SpanValidateOutput, t.Name, telemetry.ErrorTypeOutputSchema, string(issue.Mode))
		h.tel.OutputInvalid(ctx, t.Name, string(issue.Mode))
		h.outputIssue(vctx, t, id, issue.LogMessage())
		if issue.Mode == ValidationStrict {
			return d.Result, nil, nil // the isError result naming the problems
		}
	}
	// The worker returns the object projection; 2026-07-28 clients get
	// the natural value.
	if err := t.Binding.ResultFor(req.ProtocolVersion, d.Result); err != nil && issue == nil {
		return h.failed(ctx, t, id, err), nil, nil
	} // under warn, a value that is not wrapped is delivered as is
	return d.Result, nil, nil
}

// outputIssue logs a result that broke its tool's output rules, found by
// the host or by the worker. It is a warning whatever the mode: the app's
// bug, answered with an isError result (strict) or delivered as is (warn),
// while the server goes on; the worker logs it at the same level, with the
// same attributes.
func (h *Host) outputIssue(ctx context.Context, t *catalog.Tool, id, msg string) {
	h.log.LogAttrs(ctx, slog.LevelWarn, msg,
		slog.String("function", t.Function), slog.String("tool", t.Name), slog.String("invocationId", id))
}

// without returns lines without those equal to line ("" leaves them all).
func without(lines []string, line string) []string {
	if line == "" || !slices.Contains(lines, line) {
		return lines
	}
	return slices.DeleteFunc(slices.Clone(lines), func(l string) bool { return l == line })
}

// failed logs why an invocation failed and returns the generic isError
// result the MCP extension gives.
func (h *Host) failed(ctx context.Context, t *catalog.Tool, id string, err error) *metadata.CallToolResult {
	if ctx.Err() != nil {
		// Cancelled (see callTool): logged once there, not as a failure.
		return &metadata.CallToolResult{Content: []json.RawMessage{t.FailureText}, IsError: true}
	}
	h.log.LogAttrs(ctx, slog.LevelError, fmt.Sprintf("invoking tool '%s' failed: %v", t.Name, err),
		slog.String("function", t.Function), slog.String("invocationId", id))
	return &metadata.CallToolResult{Content: []json.RawMessage{t.FailureText}, IsError: true}
}

// MaxNotificationsPerCall bounds how many notifications one invocation may
// send; past it the host answers 429 and forwards nothing more.
const MaxNotificationsPerCall = invoke.MaxNotificationsPerCall
