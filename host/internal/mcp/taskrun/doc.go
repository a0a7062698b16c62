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
// It knows nothing of the request that made a task: package mcp turns a
// tools/call into a run (taskcall.go) and a run's outcome into the task's
// result, and passes the run the call's context.
package taskrun
