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
// ([Stream.WriteTask]); the tasks themselves come from a [TaskNotices]
// (the Server's, reading them through the endpoint's Server.ReadTask).
//
// [Sessions] owns the resource subscriptions of legacy sessions (sealed
// tokens otherwise kept nowhere), bounded in bytes per owner, per address
// and in all, in number and in time, and the listener of each session's GET
// stream while one is open here.
//
// [Server] serves the streams given narrow inputs: the hub, the sessions'
// table, who the client is (owner, address, task scope) and what the
// endpoint serves ([Offer]) and reads of its tasks, which the endpoint
// fills as funcs. [Server.Listen] serves subscriptions/listen: it reads
// the params, decides what is honoured (the filter), opens the listener,
// writes the acknowledgement, the tasks' states, the notifications and the
// result or error that ends the stream, with keep-alives and a write
// timeout; [Server.ServeSession] serves a legacy session's GET stream;
// [Sessions.Follow] serves resources/subscribe and resources/unsubscribe.
// What they refuse before a stream opens is a [Refusal], which the
// endpoint answers as the request asked (a JSON-RPC error, or an HTTP
// status); a GET stream's refusals, always plain, are written here.
//
// Package mcp decides what a request is and who sent it (listen.go there:
// newListeners, serveListen, serveSubscribe, and the dispatcher for the
// GET stream) and writes the refusals; this package keeps the state and
// serves the streams.
package listen
