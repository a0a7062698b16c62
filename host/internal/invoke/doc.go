// Package invoke calls the worker and carries its calls back.
//
// [Client] sends one invocation as the custom-handler protocol says: POST
// /{function} with the body [Body] (a tool call, with the caller's
// identity headers spliced in as [Call.Encoded] encoded them) or
// [ContextBody] (a resource read, a prompt, a completion) builds, with no
// retries (a tool may not be idempotent), a worker's redirect never
// followed, and the X-Azure-Functions-InvocationId,
// X-Azure-Functions-HostVersion and User-Agent headers. To a worker at an
// http:// address it goes over the package's own HTTP/1.1 client (hop.go:
// the request written and the answer read on the calling goroutine, over
// kept-alive connections); to any other, through an azcore pipeline with
// telemetry off. With telemetry on, [Options.Trace] wraps each invocation
// in its span and its trace context travels in the POST's headers. The
// invocation id, the call channel's [Offer] (an argument of
// [Client.Invoke]) and the trace headers reach the request through the
// call's context, under keys private to this package. A 2xx answer is
// decoded once into a [Reply], either form (the direct reply a funcmcp
// worker sends, or today's {Outputs, Logs, ReturnValue}); the direct reply
// to a resource, prompt or completion request ([Function.Encoded]) keeps
// the worker's result object as it is ([Reply.Encoded]). A call that never
// reached the worker because it is being restarted waits for the new one
// (bounded). Every other failure is an [*Error]: the caller logs its
// reason and gives the client only a generic failure.
//
// [Hub] is the call channel back from the worker: while a call runs, its
// worker may POST to a loopback listener of the host's own, on a URL
// naming the invocation with a bearer token of that call only ([Hub.Open]
// makes the [Offer] whose headers the request carries): progress and log
// notifications, requests to the MCP client (elicitation, sampling, roots,
// answered with the client's reply or, on 2026-07-28, kept for an
// input-required result), closing a resumable stream, and turning the call
// into a task. The hub hands each to the call's [Notifier] (the contract of
// package peer, which package mcp keeps), bounded in size and number, and
// turns the Notifier's errors (peer.ErrNotRequested, …) into the status
// codes the worker reads. [Hub.Close] stops its listener.
package invoke
