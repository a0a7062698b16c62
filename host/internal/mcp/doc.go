// Package mcp serves MCP tools over the Streamable HTTP transport as one
// stateless JSON-RPC endpoint. It knows nothing about functions, workers or
// schemas: a [Tools] implementation supplies the encoded tool list and runs
// calls, and [NewHandler] turns it into an [net/http.Handler] that the host
// mounts at /runtime/webhooks/mcp.
//
// # Endpoint contract
//
// The handler speaks the Streamable HTTP transport of MCP revisions
// 2024-11-05, 2025-03-26, 2025-06-18 and 2025-11-25 ([SupportedVersions]),
// the way the Azure Functions MCP extension does: every POST is answered on
// its own, and no session state is kept on the server.
//
//   - Only POST is served. Any other method gets 405 with "Allow: POST" and a
//     JSON-RPC error body (-32000 "Method not allowed"); there is no
//     standalone GET stream and no DELETE.
//   - An Origin header whose host is not localhost, 127.0.0.1 or [::1] and
//     not the request's Host is refused with 403 (DNS rebinding).
//   - The Accept header chooses the framing of a response: when it lists
//     text/event-stream the reply is one SSE event ("event: message") and the
//     stream ends; otherwise, when it lists application/json (or */*) the
//     reply is a single JSON object. An Accept header with neither gets 406.
//   - The body is one JSON-RPC 2.0 message of at most [Options.MaxBodyBytes]
//     (413 beyond). Malformed JSON is 400 with -32700, a batch array or a
//     message that is not a JSON-RPC 2.0 request, notification or response is
//     400 with -32600. Notifications and client responses are accepted with
//     202 and no body.
//   - initialize negotiates the protocol version (the client's when it is
//     supported, else [LatestVersion]) and returns an Mcp-Session-Id header.
//     The id is a stateless token, base64url of
//     {"id":"<16 chars>","v":"<version>","c":{"name":…,"version":…}}, so a
//     later request carries its own protocol state; initialize is optional
//     and a bare tools/call works. A session header that does not parse is
//     400 with -32000 "Invalid client state.".
//   - The protocol version of a request is its MCP-Protocol-Version header
//     (unsupported: 400, -32000, data {supported, requested}), else the
//     session token's version, else 2025-03-26. It reaches the tool in
//     [CallRequest.ProtocolVersion].
//   - Methods: initialize, ping, tools/list (the bytes of
//     [Tools.ToolsList] spliced in unchanged, no pagination) and tools/call.
//     Any other method, server/discover included, is answered with HTTP 200
//     and -32601, so clients that probe the 2026-07-28 revision fall back to
//     initialize.
//   - A tools/call error that is a [*ProtocolError] becomes that JSON-RPC
//     error; any other error is logged and answered with -32603.
//
// Every response echoes the request id verbatim (number or string) and is
// encoded without HTML escaping. The tool list is validated once per slice
// that [Tools.ToolsList] returns and never re-encoded; the tools/call path
// builds its reply directly into a pooled buffer.
package mcp
