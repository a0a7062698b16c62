// Package taskrun runs the MCP tasks of one endpoint and answers for all of
// them from the task store every instance shares (package tasks): it owns
// the tasks running on this instance ([Run], made by [Service.NewRun]),
// their heartbeats, status messages and input requests written to their
// records, the verdict on a task whose instance stopped answering (ended
// failed, or claimed and run again here when its tool allows reruns,
// [Service.OnRerun]), and the answers to tasks/get, tasks/update and
// tasks/cancel ([Service.Get], [Service.Answer], [Service.Cancel]).
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
// It knows nothing of the request that made a task: package mcp turns a
// tools/call into a run (taskcall.go) and a run's outcome into the task's
// result, and passes the run the call's context.
package taskrun
