// Package host is a Go stand-in for the Azure Functions host with its MCP
// extension: it serves the MCP functions of a custom-handler function app
// (mcpToolTrigger tools, mcpResourceTrigger resources and resource
// templates, mcpPromptTrigger prompts, their completions and MCP Apps
// views) over Streamable HTTP at /runtime/webhooks/mcp and over the legacy
// HTTP+SSE transport, for the MCP revisions 2024-11-05 to 2026-07-28, with
// tasks, resource subscriptions and list-change notifications, and, when
// asked, as an OAuth 2.1 resource server with OpenTelemetry traces and
// metrics.
//
// The wire contract with the other side is written once, in
// docs/contract.md of the repository (Go names in package metadata).
//
// # Loading
//
// [New] reads the script root: host.json (customHandler.description
// {defaultExecutablePath, arguments, workingDirectory, workerDirectory} with
// %VAR% expansion — a relative executable is joined to the app root only when
// that file exists, else it is looked up on PATH — and extensions.mcp
// {serverName, serverVersion, instructions, outputValidation}; keys match
// case-insensitively), local.settings.json Values (passed to the worker's
// environment, but for the host's function keys) and every
// <function>/function.json. These files are read only when they are regular
// files of at most 1 MiB. A function that function.json "disabled" or the
// app setting AzureWebJobs.<name>.Disabled disables is left out, as the
// Functions host leaves it out, and listed with the reason. Each mcpToolTrigger is
// loaded with binding.LoadTool (schemas are checked, and compiled once,
// before the host serves), each mcpResourceTrigger and mcpPromptTrigger
// with binding.LoadResource and binding.LoadPrompt under the extension's
// registration rules (package catalog). A tool
// that fails (an invalid outputSchema, a duplicate tool name — names compare
// case-insensitively —, …) is logged as one line naming the function, the
// tool, the file and the reason, and is not served; the other tools are. The
// tools/list arrays are encoded once, sorted by tool name, each tool as
// {"name","title"?,"description"?,"inputSchema","outputSchema"?,"_meta"?}
// with the output schema advertised verbatim: one array for clients before
// MCP 2026-07-28 (outputSchema, an object schema) and one for 2026-07-28
// clients (naturalOutputSchema where a tool has one, SEP-2106). For those
// clients a tool's wrapped result {"<field>": value} is unwrapped after it
// has been validated (binding.UnprojectResult).
//
// # The worker
//
// [New] starts the custom handler (defaultExecutablePath with its
// arguments) as soon as it has read host.json and local.settings.json, so
// that the worker starts while the functions load; until [Host.Run] has
// printed the function list and listens, what the worker prints and what
// is logged of its start are held back, and a host closed (or a New that
// fails) before it runs stops the worker. The worker gets the host's
// environment plus the local.settings.json Values (FUNCHOST_MASTER_KEY
// and FUNCHOST_MCP_EXTENSION_KEY left out of both) and
// FUNCTIONS_CUSTOMHANDLER_PORT, FUNCTIONS_HTTPWORKER_PORT (a free loopback
// port), FUNCTIONS_CUSTOMHANDLER_WORKER_ID, FUNCTIONS_HTTPWORKER_ID and
// FUNCTIONS_APP_ROOT_PATH. The host polls GET / (at once when the worker
// writes a line of output, else 2 ms apart at first, backing off to 10 ms,
// and every 25 ms after a second): any HTTP answer means ready, only a
// refused connection keeps waiting, and it gives up after
// [Options.StartupTimeout] or as soon as the process exits. The worker's
// stdout and stderr go to [Options.Output] line by line, prefixed
// "[handler] ". The worker runs in its own process group. On Linux it runs
// under a reaper (the host's executable started again as a child
// subreaper), which ends every process below it when the worker exits and
// when the host stops it or dies, however it dies: nothing the worker
// started outlives the host. On shutdown the host stops
// accepting, lets running calls finish within [Options.DrainTimeout] (those
// left get a JSON-RPC error), then the worker's group gets SIGTERM and a kill
// after [Options.StopTimeout]. With [Options.WorkerURL] no process is started;
// with [Options.WorkerHandler] (an app serving itself, package serve) none
// either, and every call is served by that handler in the host's process
// (a tools/call with no encoding, when the handler offers its tool caller:
// metadata.LocalTools).
//
// The host listens before the worker is ready: a call that comes while the
// worker starts waits for it and runs as soon as it answers its first probe.
// A worker that exits while the host runs is started again on a new port:
// calls made meanwhile wait for it (bounded by the longer of
// [Options.RestartWait] and [Options.StartupTimeout], within the call
// timeout), exit
// code 200 asks for a restart and is not counted (such restarts are at least
// a second apart), and a liveness probe (GET /, [Options.ProbeInterval]) kills
// and restarts a worker that stops answering. After the third failure within
// 30 minutes the host stays up as Unhealthy (with the reason on
// /admin/host/status): calls get an isError result and restarts go on with
// back-off doubling up to a minute.
//
// # Invocation
//
// A tools/call is sent as POST /{function} with no retries (a tool may not
// be idempotent): to an http:// worker over package invoke's own HTTP/1.1
// client, to any other through an azcore pipeline with telemetry off;
// either sets X-Azure-Functions-InvocationId (new for every call),
// X-Azure-Functions-HostVersion and User-Agent Azure-Functions-Host/<version>.
// A resource read, a prompt and a completion are sent the same way, with
// the invocation context of their kind (package metadata).
// The walk of one tools/call through the packages, function by function, is
// in docs/architecture.md ("How a request flows").
// The body is
//
//	{"Data":{"<trigger name>":<tool invocation context>},
//	 "Metadata":{"mcptoolargs":{…},"mcpsessionid":…,"sys":{"MethodName","UtcNow","RandGuid"}}}
//
// The tool invocation context ({name, arguments, sessionid, clientinfo,
// transport{name, sessionId, properties{headers}}}) is sent as a JSON object.
// The Azure Functions host sends it string-encoded instead; the funcmcp
// worker SDK accepts both.
//
// A non-2xx answer, a refused or broken connection, a timeout
// ([Options.CallTimeout]) or an answer that is not a JSON invocation response
// gives the client an isError result "An error occurred invoking '<tool>'."
// and the reason goes to the host log. A 2xx answer is decoded once: its Logs
// go to the host log and its ReturnValue becomes the tool result
// (binding.DecodeReturnValue), then the output schema is applied
// (binding.Tool.ShapeResult, the code the worker SDK runs before replying).
// When structuredContent breaks the schema, or the content breaks the tool's
// declared content kinds, outputValidation (the tool's own, else host.json's)
// decides: strict (the default) answers isError with "Output of tool
// '<tool>' does not match its output schema: at '<pointer>' (<keyword
// pointer>): <reason>", warn delivers the result and logs a warning, off
// checks nothing. A result whose envelope carries the digest of this schema
// and these bytes (binding.Schema.Digest) was validated by the worker and is
// not validated again. The text copy of structuredContent is added as
// textCopy says (json, none, summary).
//
// A worker's redirect is never followed (3xx is a failed call), the function
// key is never forwarded, and notifications/cancelled or a client that goes
// away cancels the request to the worker (logged as Cancelled, not Failed).
// Limits on arguments, calls in flight, connections and request deadlines
// are listed with [Options] and in the README.
//
// An unknown tool (names are matched exactly) is JSON-RPC error -32602
// "Unknown tool: '<name>'". Missing
// required arguments are -32602 "One or more required tool properties are
// missing values. Please provide: a, b" — or, for protocol revision
// 2025-11-25 and later, an isError result with that text (SEP-1303).
// Arguments that break the tool's input schema are refused the same way,
// before anything is forwarded, with binding.Tool.CheckInput's message,
// unless inputValidation (the tool's own, else host.json's) is warn (logged,
// forwarded) or off.
//
// # Notifications from the worker
//
// When the client of a tools/call can receive notifications (it accepts
// text/event-stream and sent a progressToken or chose a log level), the
// invocation request also carries X-Funcmcp-Notify-Url, -Token, -Progress
// and -Log-Level (see package metadata). The URL is on a loopback listener
// of the host's own, started on first use and stopped when Run returns or
// [Host.Close] is called (a Host used only through [Host.Handler] is closed
// by its user);
// it names the invocation and works only while the call runs, with the
// random bearer token of that call. Each POSTed metadata.Notification (at
// most metadata.MaxNotificationBytes, at most [MaxNotificationsPerCall] per
// invocation) is forwarded to the client as notifications/progress or
// notifications/message on the call's stream, before the result. The real
// Functions host sends no such headers, so a worker there sends nothing.
//
// # Changes the app announces
//
// The worker the host starts gets FUNCMCP_CHANGES_URL and
// FUNCMCP_CHANGES_KEY in its environment (see package metadata): a
// loopback listener of the host's own, started with the worker and stopped
// with the host, where any code of the worker process POSTs a change
// (worker.NotifyResourceUpdated, NotifyListChanged). Each change is
// checked (a resource's absolute URI, or a list), logged ("Change
// announced by the app") and passed on to the clients that listen, at most
// [Options.MaxChangesPerSecond]: past it a change waits its turn, merged
// with a change of the same resource or list that waits (bounded by
// [MaxPendingChanges]), and is never refused. A worker the host did not
// start ([Options.WorkerURL]) gets no channel.
//
// # HTTP
//
// [Host.Handler] serves the MCP endpoint at /runtime/webhooks/mcp, the
// legacy SSE endpoints, the protected resource metadata at [MetadataPath]
// when the host asks for access tokens, and GET /admin/host/status, which
// answers [Status]: {"state":"Starting"|"Running"|"Unhealthy"|"Stopping"|
// "Stopped","reason"?,"toolsServed":N,"toolsFailed":M,"resourcesServed":R,
// "promptsServed":P,"functions":[…],"errors":[…],"telemetry":{…}}, files
// named relative to the script root. toolsFailed counts every function
// that is not served because it failed to load, whatever its kind; errors
// holds the load failures and the latest problems met while running
// (worker exits, at most 50).
//
// Every endpoint is behind the edge (edge.go), before anything reads a
// header: the identity headers a client sent (X-MS-CLIENT-PRINCIPAL…,
// X-MS-TOKEN-…) are dropped, whether or not the host asks for tokens, and
// the request gets its one record of who sent it (package caller) with its
// client address, behind a trusted front end ([SettingTrustedProxies]) read
// from X-Forwarded-For. Then come the Host and Origin check, the access
// token check (when asked for) and the function key, which fill the
// record; the MCP endpoint reads it once per message.
//
// # Legacy SSE and several instances
//
// The legacy HTTP+SSE transport is served at /runtime/webhooks/mcp/sse
// (GET: the stream) and /runtime/webhooks/mcp/message (POST: 202, the reply
// on the stream), behind the same key check. Each host has a random
// instance id; a POST for a stream on another instance goes through the
// backplane that the app setting FUNCMCP_BACKPLANE names: memory (default,
// the hosts of one process), azurequeues (Azure Storage Queues and blobs on
// the AzureWebJobsStorage connection, a connection string or identity-based
// settings, queue mcp-backplane-<instance id>, created by Run before it
// serves and deleted when it stops) or redis (the FUNCMCP_REDIS
// connection). The POST is answered once the stream's instance said what
// became of the message. Instances that share work need the same session
// key (WEBSITE_AUTH_ENCRYPTION_KEY).
//
// # Packages
//
// Package host is the composition root: [Options] and their defaults, the
// settings and names it exports (settings.go), [New], [Host.Run],
// [Host.Handler], [Host.Status], [Host.Close], the routes, and the
// tools/call flow between the MCP front and the worker (call.go,
// functions.go, invocation.go, oauth.go, edge.go). Every other concern is
// a type of a package under host/internal, made in [New] with what it
// needs, which the Host keeps a field of: the change channel the app
// announces on (announce), the backplane with the legacy SSE traffic, the
// relay of changes and the task and request-state stores (instances), the
// status board and console (status), what the worker starts with and what
// its events do (launch), besides the MCP front (mcp), the worker client
// (invoke), the listeners' hub (notify) and the rest. Each package has one
// job and imports only packages of the layers below it; none imports
// host. The packages, their jobs and their layers are drawn in
// docs/architecture.md; tests/deps_test.go checks the drawing against the
// imports.
package host
