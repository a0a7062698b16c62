// Package listen holds the streams that carry notifications to clients and
// what they need kept: on 2026-07-28 a subscriptions/listen stream carries
// what its filter asked for, tagged with the listen request's id; before
// it, a legacy session's GET stream carries the list_changed notifications
// and the updates of the resources the session subscribed to.
//
// A [Stream] is a listener of the hub (package notify) and the writer of
// its response: the hub queues each change on the listeners that asked for
// it (bounded) and wakes them; the stream's own request goroutine writes
// what waits ([Stream.Run]) and sleeps otherwise, with keep-alives from a
// timer. It renders the changes ([RenderChange], [Acknowledgement]) and
// writes a task's notification around the task's shared bytes
// ([Stream.WriteTask]); the tasks themselves come from a [TaskNotices] the
// endpoint gives it.
//
// [Sessions] owns the resource subscriptions of legacy sessions (sealed
// tokens otherwise kept nowhere), bounded in bytes per owner, per address
// and in all, in number and in time, and the listener of each session's GET
// stream while one is open here.
//
// Package mcp decides what a request asks and answers it (listen.go there:
// serveListen, serveSessionStream, serveSubscribe); this package keeps the
// state and writes the streams.
package listen
