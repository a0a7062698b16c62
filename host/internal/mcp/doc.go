// Package mcp is the host's MCP protocol front: the Streamable HTTP
// endpoint ([NewHandler]) and the legacy HTTP+SSE transport
// ([NewLegacySSE]) for the revisions 2024-11-05 to 2026-07-28, with sealed
// sessions and request states instead of a server-side session map,
// notifications and requests to the client during a call ([Notifier]),
// resumable streams, input-required rounds and MCP tasks. What it serves
// comes from a [Server], a struct of funcs the host fills in: the package
// knows no function, worker or schema (it splices the tool lists it is
// given, and its callers check arguments and results).
//
// # The core and its sub-packages
//
// This package is the core: the method table, the chain, dispatch,
// initialize, tools/list and tools/call, and the glue that hands every
// other job to the sub-package that keeps its state, which this one
// imports and which never imports it (tests/deps_test.go checks the
// layering, mcpFrontImports):
//
//   - wire: the message decoder and the modern envelope, the Mcp-Param
//     headers, the Accept framing, the SSE framer and writer, the buffer
//     pool, the in-process recorder, the prepared tools/list arrays, the
//     arguments digest.
//   - sessions: the sealed sessions of the legacy revisions
//     (sessions.Keeper mints and opens them, checks their owner and picks
//     a request's revision) and their logging/setLevel choices.
//   - legacysse: the legacy HTTP+SSE transport, its streams and inboxes;
//     it reaches the handler through legacysse.Endpoint (legacy.go here).
//   - listen: the notification streams (listen.Server: subscriptions/listen
//     and a session's GET stream) and the legacy sessions' subscriptions
//     (listen.Sessions); listen.go here fills the server once.
//   - clientreq: the client-request channel: a call's Notifier, the calls
//     a client may cancel (clientreq.Calls, clientreq.Run), the requests
//     waiting for an answer and their ids, the resumable streams
//     (clientreq.Store.ServeResume) and the request states of
//     input-required rounds (clientreq.States.ReadInput, InputRequired).
//   - functions: resources, prompts and completions: functions.Server
//     reads their params, pages the lists, runs the app's function and
//     builds the result; functions.go here gives it the exchange's context
//     and Notifier and writes its answer.
//   - taskrun: MCP task runs: a call launched as a task
//     (taskrun.Service.Launch), the life of its task (taskrun.Work, the
//     [CallTask] that [Server.CallTool] drives), the task methods
//     (taskrun.Service.Serve), reruns and the tasks' wire forms; tasks.go
//     here checks the extension, lends a run the core's tools/call
//     (taskCalls) and writes the answers.
//
// The names the host uses (NewLegacySSE, TaskOptions, the defaults) stay
// spelled as this package's, as aliases of the sub-packages'.
//
// # Method table and middleware
//
// Every method is one entry of the method table: its static facts are a
// [metadata.MethodSpec] of metadata's table (its name, the revisions that
// have it, its capability, the params member its Mcp-Name header mirrors,
// what it names, whether its modern result carries cache hints, whether it
// may run as a task), joined in methods.go with what only this package
// knows: its handler and whether it comes before a session. Legacy and
// modern routing, the header checks, the target an [Exchange] names and the
// capabilities of initialize and server/discover are read from the table.
//
// Every request and notification the endpoint decodes, whatever carries it
// (a post, an element of a batch, a legacy SSE stream, a 2026-07-28
// request, a call that becomes a task, the retry of an input-required call),
// is one [Exchange] passed through one chain: the request log (at debug
// level), then the links of [Options.Middleware], then the dispatcher that
// reads the revision and runs the method's handler (chain.go). The
// exchange is the request's record: what it names is resolved once against
// the app ([Exchange.Target], [Server.Resolve]) and its owner worked out
// once ([Exchange.Owner]); every link and step reads them. A [Middleware]
// sees the method, the target, the owner, the revision, the transport, the
// status and the outcome, and may answer instead of the handler with a
// JSON-RPC error ([Exchange.Fail]) or an HTTP status and headers
// ([Exchange.Refuse]: 401/403 with WWW-Authenticate, 429 with Retry-After,
// …). What the endpoint refuses before the handler (a body that is not one
// JSON-RPC message, an id or params that cannot be read, a batch refused
// whole, a subscriptions/listen request over its size, a method other than
// POST) passes the chain with its answer decided ([Exchange.Refused]), and
// so do the GET streams of a resumed call and of a session
// ([Exchange.Stream]). What does not pass: a client's response to a
// request of ours (routed by its id, clientreq.go) and the legacy SSE
// stream itself, whose messages do pass.
//
// # Endpoint contract
//
// The handler speaks the Streamable HTTP transport of the legacy MCP
// revisions 2024-11-05, 2025-03-26, 2025-06-18 and 2025-11-25
// ([SupportedVersions], negotiated by initialize) and of the modern revision
// 2026-07-28 ([ModernVersions], no initialize), on the one endpoint. No
// session state is kept on the server for either, but for the resource
// subscriptions of legacy sessions (listen.Sessions, bounded per owner,
// per client address and in all).
//
//   - POST carries the messages. GET with Last-Event-ID resumes a call's
//     stream; GET with a session, when [Options.Notify] is set, opens the
//     session's stream of notifications (list changes, the resources it
//     subscribed to: see package listen). Any other method, and GET otherwise,
//     gets 405 with "Allow: POST" and a JSON-RPC error body (-32000 "Method
//     not allowed"); there is no DELETE.
//   - The Host and Origin headers are not checked here: the host mounts
//     the handler (and the legacy transport) behind package guard, whose
//     one check answers 403 to a request from an unexpected Host or Origin
//     (DNS rebinding) before it reaches the handler.
//   - The Accept header chooses the framing of a response: when it lists
//     text/event-stream the reply is one SSE event ("event: message") and the
//     stream ends (a tools/call that notifies sends its notifications as
//     earlier events of the same stream, see below); otherwise, when it lists application/json (or */*) the
//     reply is a single JSON object. An Accept header with neither gets 406.
//   - The body is one JSON-RPC 2.0 message of at most [Options.MaxBodyBytes]
//     (413 beyond). Malformed JSON is 400 with -32700; a message that is not
//     a JSON-RPC 2.0 request, notification or response is 400 with -32600.
//     Notifications and client responses are accepted with 202 and no body.
//   - A batch (a JSON array) is accepted only from a 2025-03-26 client, the
//     one revision that allows them: the replies come back as one array, in
//     order (202 when there are none). Any other revision's batch is 400 with
//     -32600. initialize and modern requests cannot be batched. A batch
//     holds at most [Options.MaxBatchMessages] messages and its replies at
//     most [Options.MaxBatchReplyBytes]: past that a reply is replaced by a
//     -32000 error and the requests after it are not run.
//   - Every message is read by one decoder, in one pass of jsonx.Scanner,
//     with member names matched exactly; a name repeated in any case is
//     refused (-32600 in the envelope, -32602 in params or params._meta), so
//     that no reader — the batch splitter, the legacy SSE router, the
//     handler — sees another message in the same bytes. An id that cannot be
//     echoed safely (invalid UTF-8, a lone surrogate escape, a number beyond
//     a float64) is refused with -32600.
//   - notifications/cancelled cancels only calls of its sender's scope: the
//     legacy SSE stream a message came on, else the session sealed in its
//     Mcp-Session-Id. A 2026-07-28 call and a legacy call without a session
//     have no scope: closing the request cancels them, no notification does.
//
// # Modern requests (2026-07-28)
//
// A request whose params._meta carries io.modelcontextprotocol/protocolVersion
// is modern: it is served from what it carries, statelessly, and never needs
// a session (an Mcp-Session-Id header is ignored and none is minted). The
// checks, in order, each answered with HTTP 400 and no call made:
//
//   - an MCP-Protocol-Version header that differs from the _meta version:
//     -32020 (HeaderMismatch);
//   - a _meta version that is not a modern revision served here: -32022
//     (UnsupportedProtocolVersion) with data {supported, requested}, where
//     supported lists every revision served, newest first;
//   - a missing MCP-Protocol-Version or Mcp-Method header, an Mcp-Method
//     that differs from the method, and for tools/call (also prompts/get,
//     resources/read) a missing Mcp-Name or one that differs from
//     params.name (params.uri) once its =?base64?…?= form is decoded: -32020;
//   - for a tools/call of a tool that declares x-mcp-header arguments
//     ([Resolved.ParamHeaders]), an argument present in the body whose
//     Mcp-Param-<Name> header is missing, malformed or different: -32020;
//   - a malformed envelope (io.modelcontextprotocol/clientCapabilities
//     missing or not an object, clientInfo not an object, a logLevel or
//     progressToken of the wrong type): -32602.
//
// A request without the envelope whose MCP-Protocol-Version header names a
// modern revision is 400 with -32602 (404 with -32601 for a method that
// revision lacks): it is never quietly served as a legacy one.
//
// Modern methods are server/discover (supportedVersions, the capabilities
// the method table derives, instructions, ttlMs, cacheScope), tools/list
// (the list of [Server.ToolsList], with ttlMs and cacheScope from
// [Options.CacheTTL] and [Options.CacheScope]), tools/call (its
// [CallRequest.Meta] holds the parsed envelope), the resources, prompts and
// completion methods when [Server.Functions] is given, and tasks/get,
// tasks/update and tasks/cancel. Every modern result carries
// "resultType":"complete" and _meta io.modelcontextprotocol/serverInfo. Any
// other method — ping, initialize, logging/setLevel — is HTTP 404 with
// -32601, as 2026-07-28 asks.
//
// # Legacy requests (2024-11-05 … 2025-11-25)
//
//   - initialize negotiates the protocol version (the client's when it is
//     a legacy revision, else [LatestVersion]) and returns an Mcp-Session-Id
//     header. The id is a stateless token: {"id":"<16 chars>","v":"<version>",
//     "c":{"name":…,"version":…}} (name and version cut to
//     [MaxClientInfoBytes] each) sealed with AES-256-GCM by
//     [Options.Sealer] (see package auth) with an expiry
//     ([Options.SessionLifetime]), so a later request carries its own
//     protocol state and hosts sharing the key accept each other's sessions;
//     initialize is optional and a bare tools/call works. Behind the
//     access token check the token also holds "o", the owner ID of the
//     principal (Exchange.Owner) that initialized, and the session serves that
//     principal only, whatever token of theirs. A session header that does
//     not open (forged, changed, another key) or belongs to another
//     principal is 400 with -32000 "Invalid client state."; an expired one
//     is 404, after which clients initialize again.
//   - The protocol version of a request is its MCP-Protocol-Version header
//     (a revision not served: 400, -32000, data {supported, requested}),
//     else the session token's version, else 2025-03-26. It reaches the tool
//     in [CallRequest.ProtocolVersion].
//   - Methods: initialize, ping, logging/setLevel, tools/list (the bytes of
//     [Server.ToolsList] spliced in unchanged, no pagination), tools/call,
//     and the resources, prompts and completion methods when
//     [Server.Functions] is given. Any other method is answered with HTTP
//     200 and -32601.
//     server/discover without the modern envelope is such a method, so a
//     client that probes it without _meta falls back to initialize.
//   - A tools/call error that is a [*ProtocolError] becomes that JSON-RPC
//     error; any other error is logged and answered with -32603.
//   - Notifications during a call: a tools/call of a client that accepts
//     text/event-stream and asked for progress (_meta.progressToken) or log
//     messages (logging/setLevel for its session on legacy revisions, which
//     initialize advertises as the logging capability; the request's
//     _meta["io.modelcontextprotocol/logLevel"] on modern ones) gets a
//     [Notifier] in [CallRequest.Notify]. Its notifications/progress and
//     notifications/message go out on the call's stream before the result.
//
// Every response echoes the request id verbatim (number or string) and is
// encoded without HTML escaping. The tool list is validated once per slice
// that [Server.ToolsList] returns and never re-encoded; the tools/call path
// builds its reply directly into a pooled buffer; a resource read, prompt or
// completion whose [Result] is [Encoded] (the worker's result object,
// checked once by [EncodedResult]) is spliced in as it is.
//
// # Legacy HTTP+SSE
//
// [NewLegacySSE] serves the 2024-11-05 transport over the same handler; the
// transport itself, its streams and their inboxes are package legacysse,
// which reaches the handler through legacyEndpoint (legacy.go): each
// message comes with its stream's origin and passes the chain like a POST.
package mcp
