// Package backplane carries legacy-SSE client messages (and clients'
// responses to the requests of running calls) between host instances. A
// client's SSE stream lives on one instance; its POSTs may land on any.
// The instance that receives a POST for a stream elsewhere sends the
// message to the owner with [Backplane.Send], which returns once the
// owner decided its [Outcome]: Taken, Full or Gone.
//
// [Memory] connects the instances of one process (the default: one
// funchost needs nothing else). [Queue] uses Azure Storage Queues, one
// queue per instance named mcp-backplane-<instanceId> with a heartbeat in
// its metadata, and a blob container of the same name for messages too
// large for a queue message. [Redis] uses one list per instance, popped
// with BLPOP, and a heartbeat key that expires.
//
// Every backplane shares the receiving side: a message its stream's full
// inbox refuses is held, with every later one of the same stream behind
// it, and offered again until taken, so nothing accepted is lost and a
// stream's messages keep their order. A message is deleted from its queue
// only once its outcome is decided. Duplicates (a queue message whose
// lease ran out) are dropped by id.
//
// Liveness: an instance whose heartbeat is older than StaleBeats
// heartbeats may be paused: Send fails at once with an error matching
// ErrUnsure (the client may retry). Older than DeadBeats it is dead: Send
// fails with an error matching ErrUnknownInstance (the stream is gone).
// Every Queue instance removes queues and containers whose heartbeat is
// older than RemoveBeats. Records that storage lost (restarted empty, or
// swept while the instance was paused) are made again on use: an instance
// makes its queue, container or heartbeat key again when it finds it
// gone, and a sender makes a live peer's lost container; while this
// instance's own records were lost lately, a peer's missing ones mean
// ErrUnsure, not gone.
//
// Broadcasts: every backplane is a [Broadcaster]. Broadcast sends bytes
// it does not read (a change clients listen for, in its wire form) to
// every other live instance, at most once each; each instance hands what
// it receives to the OnBroadcast of its options, off its receive loop
// through a bounded buffer. Queue enqueues one message in each live
// instance's queue; Redis publishes on RedisBroadcastChannel.
//
// The queue backplane reaches storage through queueStore and blobStore
// (queue_store.go): the Azure clients in production, an in-memory store
// in tests. Its jobs are in files of their own: sending (queue_send.go),
// receiving (queue_receive.go), liveness and the sweep
// (queue_liveness.go), broadcasts (queue_broadcast.go).
//
// Every Send and Broadcast, its storage calls included, ends within its
// outcome timeout; so does every storage call of the receive loop. What a
// Send leaves to do (a lost queue made again, a refused body deleted)
// goes to a worker, never runs on the Send. Message and instance ids are
// checked before any storage call. A queue is polled on a schedule that
// follows the traffic (see pollSchedule): client messages, and broadcasts
// within a burst (a lone one, a timer's change, leaves it idle).
package backplane
