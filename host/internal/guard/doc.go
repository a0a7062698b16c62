// Package guard holds what the host refuses before it does any work, and
// how it stops taking work.
//
//   - [Guard.Check]: the Host header must name this listener (127.0.0.1,
//     localhost, [::1] or an allowed host name) and an Origin, when sent,
//     must be an allowed origin or any http(s) origin on an allowed host
//     name (DNS rebinding); otherwise 403. This is the host's one Origin
//     check: every endpoint, the MCP one and the legacy SSE ones, is
//     mounted behind it.
//   - [RequireJSON]: a POST body must be application/json (415).
//   - [Refuse]: the plain JSON-RPC refusal body of these checks (see
//     package jsonrpc).
//   - [LimitListener]: at most n open connections in all and m from one
//     client address. At a bound a new connection closes an idle keep-alive
//     one (the address's own at its bound; at the server's, one of the
//     address holding the most); when none is idle it is answered 503
//     naming the limit and closed at once instead of waiting unseen in the
//     backlog.
//   - [Deadlines]: a request's body must arrive within the read timeout
//     (lifted once it has), and its response must be written within a bound.
//   - [Calls]: the tool calls in flight. [Calls.Admit] refuses a call over
//     the bound with a JSON-RPC busy error; [Calls.AdmitTask] admits task
//     work (which outlives its request) within a per-owner and a global
//     bound below the call bound, so that slots stay for synchronous calls,
//     and its refusal names the bound reached; [Calls.Drainable] gives a call a
//     context that [Calls.StopWaiting] cancels with [ErrShuttingDown] when a
//     stopping host gives up waiting for it.
package guard
