// Package backplane carries legacy-SSE client messages between host
// instances. A client's SSE stream lives on one instance; its POSTs may land
// on any. The instance that receives a POST for a client whose stream is
// elsewhere sends the JSON-RPC message to the owner's queue, and the owner's
// receive loop hands it to the stream.
//
// [Memory] connects the instances of one process (the default: one funchost
// needs nothing else). [Queue] uses Azure Storage Queues, one queue per
// instance named mcp-backplane-<instanceId>, created by Start and deleted by
// Stop. Its message bodies are base64 of {"ClientId","Message","Id"}, as the
// Azure Functions MCP extension writes them plus a sender id.
//
// Delivery through a Queue is at least once: a message is deleted only after
// it was handed over, and comes back after the visibility timeout otherwise.
// The receiver remembers the ids it delivered and drops a second copy. A
// message that cannot be decoded is logged and deleted. Storage errors while
// running are logged and retried with back-off; the loop recreates its queue
// when storage comes back without it.
package backplane
