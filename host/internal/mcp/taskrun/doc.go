// Package taskrun runs the MCP tasks of one endpoint (the tasks extension,
// io.modelcontextprotocol/tasks, SEP-2663, on 2026-07-28) and answers for
// all of them from the task store every instance shares (package tasks):
// it owns the tasks running on this instance ([Run], made by
// [Service.NewRun]), their heartbeats, status messages and input requests
// written to their records, the verdict on a task whose instance stopped
// answering (ended failed, or claimed and run again here when its tool
// allows reruns, [Service.OnRerun]), and the task methods.
//
// A task belongs to the verified owner of the request that made it
// ([Scope]): a request of another owner is told it does not exist. Task
// ids are 128 random bits, what keeps unauthenticated clients' tasks
// apart. The client polls tasks/get, answers the task's input requests
// with tasks/update and may cancel it with tasks/cancel; any instance
// answers those from the store: [Service.Serve] reads their params
// (through the core's reading of the wire, [JSON]), reads or writes the
// record ([Service.Get], [Service.Answer], [Service.Cancel]) and returns
// the [Answer], whose task whole [Service.AppendResult] encodes; the core
// checks that the client declared the extension ([Declared]) and writes
// the answer.
//
// A tools/call of a client that declared the extension, for a tool that
// supports tasks, is handed over as a [Call] ([Service.Launch]): the
// service makes the run, keeps the call for a rerun when its tool allows
// them ([RerunCall]), makes the record (or has it made on admission), runs
// the call on its own goroutine past the request and tells the core what
// to answer ([Launched]: the task's handle, [Created], or the call's own
// outcome when it ended first). The core lends the run what only it has,
// an [Invocation]: its tools/call, and the encoding of a result. A task of
// a stopped instance run again here gets its call back from the core the
// same way ([Service.OnRerun]).
//
// It also holds the tasks' wire forms (the members every task result
// shares, [AppendHead]; a task whole as notifications/tasks carries it,
// [Detailed]), the change a task's write publishes to listeners
// ([PublishingStore], [Change]) and the one encoding of a task shared by
// every listener writing it ([Shared]).
//
// It drives the life of a call's task ([Work], the mcp.CallTask of a
// tools/call that runs as a task or may become one): once the host
// admitted the call, [Work.Admitted] starts the run's span (through
// [Options.Telemetry]) and makes the record ([Run.Admit]; a refused record
// is [Service.NotCreated]'s error); once the tool ran, [Work.Ended] puts
// the function's failure in place of the isError result for a task, ends
// the span with the task's id and status and counts its end ([RunEnd]);
// [Work.Run] runs the work on its own goroutine and stores its outcome
// ([Run.Finish]). The host that runs the tool reads nothing of the task.
// A call kept for a rerun is a [RerunCall].
//
// It knows nothing of the request that made a task, nor of its framing:
// package mcp (tasks.go) hands over a task method's request or a
// tools/call with the call's context, writes the answers, and builds the
// call a run invokes.
package taskrun
