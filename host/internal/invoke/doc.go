// Package invoke calls the worker and carries its calls back.
//
// [Client] sends one tool invocation as the custom-handler protocol says:
// POST /{function} with the body [Body] builds, through an azcore pipeline
// with no retries (a tool may not be idempotent), telemetry off, a worker's
// redirect never followed, and the X-Azure-Functions-InvocationId,
// X-Azure-Functions-HostVersion and User-Agent headers. A 2xx answer is
// decoded once into a [Reply], either form (the direct reply a funcmcp
// worker sends, or today's {Outputs, Logs, ReturnValue}). A call that never
// reached the worker because it is being restarted waits for the new one
// (bounded). Every other failure is an [*Error]: the caller logs its
// reason and gives the client only a generic failure.
//
// [Hub] is the call channel back from the worker: while a call runs, its
// worker may POST progress and log notifications to a loopback listener of
// the host's own, on a URL naming the invocation with a bearer token of
// that call only ([Hub.Open] makes the [Offer] whose headers the request
// carries). The hub forwards each to the client's [Notifier], bounded in
// size and number. [Hub.Close] stops its listener. Client requests from
// the worker (elicitation, sampling, roots) will travel the same channel.
package invoke
