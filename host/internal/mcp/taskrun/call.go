package taskrun

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/funcmcp/funcmcp/host/internal/jsonrpc"
	"github.com/funcmcp/funcmcp/host/internal/owner"
	"github.com/funcmcp/funcmcp/host/internal/tasks"
	"github.com/funcmcp/funcmcp/metadata"
)

// A call's task. A request whose _meta clientCapabilities declare the
// extension, calling a tool that supports tasks, gets a task: the core
// hands the call over ([Service.Launch]), which stores a record in the
// task store every instance shares, runs the invocation on its own, past
// the request, and has the request answer the task's handle ([Created]).
// A tool declared Deferred first runs as a synchronous call (asking the
// input-required way) and becomes a task when its handler asks for it.
// What runs the tool, and the request it gets, stay the core's: the call
// comes with an [Invocation].

// CallTask is the task side of a tools/call that runs as a task or may
// become one (mcp.CallRequest.Task, a *Work): the steps of its work, which
// mcp.Server.CallTool drives, so that the app's side of a call reads
// nothing of its task. CallTool admits the call (for a call with a Task,
// against its owner's running tasks), then calls Admitted, runs the tool
// and calls Ended with what it ran to.
type CallTask interface {
	// Admitted runs once the call has its slot: it starts the run's span
	// and makes the task's record when it waits for admission (see
	// mcp.Server.AdmitsTasks). The work runs under the context it
	// returns; an error (the record could not be made: nothing may run)
	// is the call's.
	Admitted(ctx context.Context) (context.Context, error)
	// Ended runs once the work is over: res and err are what the call
	// answers as a synchronous call, failure the error its task ends
	// failed with when the function failed (nil otherwise). It returns
	// the call's outcome: for a call that runs as a task, failure in
	// place of the isError result.
	Ended(ctx context.Context, res *metadata.CallToolResult, err error, failure *jsonrpc.Error) (*metadata.CallToolResult, error)
}

var _ CallTask = (*Work)(nil)

// Invocation is what the core lends the run of a call: Invoke runs the
// tool (the core's tools/call), Encode encodes its result as the task
// keeps it, as the synchronous call would have answered it.
type Invocation struct {
	Invoke func(context.Context) (*metadata.CallToolResult, error)
	Encode func(*metadata.CallToolResult) ([]byte, error)
}

// Call is a tools/call that runs as a task or may become one, as the core
// hands it over ([Service.Launch]).
type Call struct {
	// Tool is the tool called, Support its task declaration.
	Tool    string
	Support *metadata.TaskSupport
	// Owner is the verified owner of the request: the task is theirs (see
	// [Scope]).
	Owner owner.ID
	// OnAdmission: the record is made once the host admits the call
	// ([Run.MakeOnAdmission]), not before the call runs.
	OnAdmission bool
	// Kept is the call as a run on another instance needs it, kept when
	// the tool allows reruns; Args are its arguments, encoded when Kept
	// has none.
	Kept RerunCall
	Args map[string]json.RawMessage
	// Attach gives the call its run (what it reports to, its CallTask)
	// before anything runs, and returns how to run it.
	Attach func(*Run) Invocation
}

// Launched is how a call launched as a task stands when its request
// answers: Refused when the task could not be made (nothing ran), Task
// when it was made (the request answers its handle, [Created]), Left when
// the client left before either (nothing to answer); otherwise the call
// ended before it became a task, with Result and Err, which the request
// answers as a synchronous call.
type Launched struct {
	Refused *jsonrpc.Error
	Task    *tasks.Task
	Left    bool
	Result  *metadata.CallToolResult
	Err     error
}

// Launch runs call as a task from the start or, for a deferred tool,
// synchronously until its handler makes it one. The call runs on a
// goroutine with a context of its own (with reqCtx's values); until the
// task exists, the request ending (reqCtx) ends the call. Launch returns
// once the task exists, the call ended first, or the request ended.
func (s *Service) Launch(reqCtx context.Context, c Call) Launched {
	ctx, cancel := context.WithCancelCause(context.WithoutCancel(reqCtx))
	run := s.NewRun(ctx, cancel, Scope(c.Owner), c.Owner, c.Tool, c.Support)
	inv := c.Attach(run)
	s.keep(run, &c)
	if !c.Support.Deferred {
		if c.OnAdmission {
			run.MakeOnAdmission() // made by CallTask.Admitted, once the call has its slot
		} else if _, err := run.Start(ctx); err != nil {
			cancel(err)
			return Launched{Refused: s.NotCreated(c.Tool, err)}
		}
	}
	// Until the task exists, the client leaving ends the call.
	stop := context.AfterFunc(reqCtx, func() {
		if !run.On() {
			cancel(context.Cause(reqCtx))
		}
	})
	defer stop()
	var (
		ended Launched
		done  = make(chan struct{})
	)
	go func() {
		defer close(done)
		ended.Result, ended.Err = run.Work().RunCall(ctx, cancel, inv)
	}()
	select {
	case <-run.Started():
	case <-done:
	case <-reqCtx.Done():
		return Launched{Left: true}
	}
	if run.On() {
		return Launched{Task: run.Created()}
	}
	return ended
}

// keep keeps in run what its record needs to run the call again, when the
// tool allows reruns and the call is small enough.
func (s *Service) keep(run *Run, c *Call) {
	if c.Support.Reruns <= 0 {
		return
	}
	rc := c.Kept
	if rc.Arguments == nil && c.Args != nil {
		rc.Arguments, _ = json.Marshal(c.Args)
	}
	data, err := rc.Encode()
	if err != nil {
		s.log.Warn("mcp: a task's call is too large to keep for a run on another instance: it runs once",
			"tool", c.Tool, "bytes", len(data), "limit", MaxRerunBytes)
		return
	}
	run.KeepForRerun(data, c.Support.Reruns+1)
}

// RunCall runs the work of a task (or of a call that may become one)
// through [Work.Run]: inv runs the tool, and the task's record keeps its
// outcome as the synchronous call would have answered it.
func (w *Work) RunCall(ctx context.Context, cancel context.CancelCauseFunc, inv Invocation) (*metadata.CallToolResult, error) {
	return w.Run(ctx, cancel, inv.Invoke, func(res *metadata.CallToolResult, err error) (json.RawMessage, *jsonrpc.Error) {
		return w.run.outcome(inv, res, err)
	})
}

// outcome is what a task's record keeps of the call: the result as the
// synchronous call would have answered it (inv.Encode), or the protocol
// error.
func (r *Run) outcome(inv Invocation, res *metadata.CallToolResult, err error) (json.RawMessage, *jsonrpc.Error) {
	if err != nil {
		if pe, ok := errors.AsType[*jsonrpc.Error](err); ok {
			return nil, pe
		}
		if errors.Is(err, ErrHostStopping) {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "The host stopped while the task was running."}
		}
		r.s.log.Error("mcp tools/call failed", "tool", r.tool, "error", err)
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "Internal error"}
	}
	if res == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "Internal error: the tool returned no result."}
	}
	out, aerr := inv.Encode(res)
	if aerr != nil {
		r.s.log.Error("mcp tools/call failed", "tool", r.tool, "error", aerr)
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "Internal error"}
	}
	return out, nil
}

// OnRerun has this instance run again the tasks of stopped instances
// whose tools allow it (see [Service.runAgain]): support gives the task
// declaration of a tool this instance serves (nil when it serves none of
// that name), and attach makes the call again from what task t's record
// keeps (rc, with its arguments args), gives it its run and returns how to
// run it. Set before the service is used.
func (s *Service) OnRerun(support func(tool string) *metadata.TaskSupport,
	attach func(t *tasks.Task, rc RerunCall, args map[string]json.RawMessage, run *Run) Invocation) {
	s.prepareRerun = func(t *tasks.Task) func(claimed *tasks.Task) {
		return s.prepare(t, support, attach)
	}
}

// prepare prepares the run again of task t (see Service.prepareRerun):
// nil when this instance does not serve its tool with reruns, or the kept
// call does not read.
func (s *Service) prepare(t *tasks.Task, support func(tool string) *metadata.TaskSupport,
	attach func(t *tasks.Task, rc RerunCall, args map[string]json.RawMessage, run *Run) Invocation) func(claimed *tasks.Task) {
	ts := support(t.Tool)
	if ts == nil || ts.Reruns <= 0 {
		return nil
	}
	rc, args, err := DecodeRerun(t.Rerun)
	if err != nil {
		s.log.Error("mcp: a task's kept call does not read: it is not run again", "task", t.ID, "tool", t.Tool, "error", err)
		return nil
	}
	return func(claimed *tasks.Task) {
		ctx, cancel := context.WithCancelCause(context.Background())
		run := s.Adopt(ctx, cancel, claimed)
		if run == nil {
			cancel(ErrHostStopping) // claimed, not run: another instance judges it again
			return
		}
		inv := attach(claimed, rc, args, run)
		go func() { _, _ = run.Work().RunCall(ctx, cancel, inv) }()
	}
}
