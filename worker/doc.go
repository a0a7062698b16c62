// Package worker is the funcmcp SDK for function apps: a Go program that is
// an Azure Functions custom handler whose functions are MCP tools, with
// output schemas and structured results, and MCP resources, resource
// templates, prompts and MCP Apps.
//
// The wire contract with the other side is written once, in
// docs/contract.md of the repository (Go names in package metadata).
//
// # Quick start
//
//	type WeatherIn struct {
//		City  string `json:"city" jsonschema:"The city name"`
//		Units string `json:"units,omitempty" enum:"celsius,fahrenheit"`
//	}
//	type Weather struct {
//		City string  `json:"city"`
//		Temp float64 `json:"temp" jsonschema:"Temperature in the requested units"`
//	}
//
//	func main() {
//		app := worker.New(nil)
//		worker.AddTool(app, "get_weather", func(ctx context.Context, tc *worker.ToolContext, in WeatherIn) (*worker.Result, Weather, error) {
//			tc.Logf("weather for %s", in.City)
//			return nil, Weather{City: in.City, Temp: 21.5}, nil
//		}).WithDescription("Current weather for a city.")
//
//		app.ConfigureMcpTool("echo").
//			WithDescription("Echoes a message.").
//			WithProperty("message", worker.String, "The message", worker.Required).
//			Handle(func(ctx context.Context, tc *worker.ToolContext) (*worker.Result, error) {
//				var in struct{ Message string `json:"message"` }
//				if err := tc.BindArguments(&in); err != nil {
//					return nil, err
//				}
//				return worker.TextResult(in.Message), nil
//			})
//		app.Main()
//	}
//
// Build time: generate the function folders next to host.json, e.g. with
//
//	//go:generate go run . emit-metadata ../dist/app
//
// which runs "<app> emit-metadata DIR" and writes DIR/<function>/function.json
// for every tool (or, on any configuration problem, writes nothing, prints
// every problem and exits 1). Run time: the Functions host (or funchost)
// starts the program with no arguments and FUNCTIONS_CUSTOMHANDLER_PORT set;
// [App.Main] serves the custom-handler protocol on 127.0.0.1 until SIGINT or
// SIGTERM.
//
// # Configuration
//
// [App.ConfigureMcpTool] returns the tool's [ToolBuilder]; calls for the same
// name accumulate. Builders only record: [App.Build], [App.Functions],
// [App.EmitMetadata] and the serve mode report every problem of every tool
// together (errors.Join), each a *[ConfigError] naming the tool and wrapping
// the rule broken (ErrEmptyToolName, ErrInvalidFunctionName, ErrNoHandler,
// ErrDuplicateFunction, …, or the schema errors of package binding:
// *binding.SyntaxError, *binding.ShapeError, *binding.CompileError). Schemas
// are checked with binding.ParseSchema, the same check the host applies.
//
// # Schemas from Go types
//
// [AddTool] infers the input schema from In and the output schema from Out
// with github.com/google/jsonschema-go's ForType, as the official MCP Go SDK
// does, so the same type gives the same schema: json tags name the
// properties, fields without omitempty/omitzero are required, a
// `jsonschema:"…"` tag is the description, structs do not allow additional
// properties and pointers allow null. funcmcp departs from ForType only
// where its users rely on more, or where ForType does not describe what
// encoding/json writes:
//   - a slice is {"type":"array"}, never ["null","array"] (type arrays break
//     some clients): a nil slice is sent as [] and a nil map as {}, at any
//     depth of the value;
//   - `description:"…"` is an alias of the jsonschema tag, and `enum:"a,b"`
//     (on a string field or a slice of strings) gives the allowed values;
//   - time.Time is {"type":"string","format":"date-time"};
//   - a recursive struct is defined once under $defs and referenced by $ref
//     ("#" for the root type), where ForType rejects the cycle;
//   - []byte is a base64 string, types with MarshalJSON any value and types
//     with MarshalText strings.
//
// ForType's limits stay: maps need string keys, and a ",string" json option
// is not reflected in the schema.
//
// In must describe an object. Its schema is emitted as inputSchema (with
// useWorkerInputSchema: true) and its top-level fields as toolProperties, so
// hosts that predate worker input schemas still list the arguments. A struct
// or map Out is the structured result, with an object schema. Any other Out
// has its natural schema (an array, a scalar…; SEP-2106), emitted as
// naturalOutputSchema, while outputSchema holds its object projection and
// the value is sent wrapped as {"result": value} (WithOutputField renames
// the field); funchost gives MCP 2026-07-28 clients the natural form. An
// explicit WithOutputSchema may be any JSON Schema 2020-12 document and is
// treated the same way. Explicit WithInputSchema/WithOutputSchema calls win
// over inferred schemas.
//
// # Output guarantees
//
// Before replying, the server checks every result with the code funchost
// uses (package binding, on the function.json the app emits): the
// structuredContent against the output schema (checked at start-up and
// compiled once: then, or, when the quick checks vouch for it, the first
// time a value needs more than the check on JSON text), and the content
// against the kinds declared with
// [ToolBuilder.WithContentKinds]. So the promise holds under the Azure
// Functions host too, which checks nothing. [OutputValidation] says what a
// broken result becomes (strict: an isError result naming the tool and the
// JSON pointer of each problem; warn: delivered and logged; off); [TextCopy]
// says which text goes with structuredContent (json, none, summary). Both
// are set for the app in [Options] or in host.json (extensions.mcp
// outputValidation and textCopy, which funchost reads too) and per tool with
// [ToolBuilder.WithOutputValidation] and [ToolBuilder.WithTextCopy], which
// are written to function.json for funchost. A validated result carries a
// digest of the schema and the exact bytes checked, so funchost does not
// validate the same bytes against the same schema again.
//
// # Invocation
//
// POST /{function} receives {"Data":{"context":<tool invocation context>},
// "Metadata":{…}}; the context may be JSON-encoded as a string any number of
// times. The reply is 200 with {"Outputs":{},"Logs":[…],
// "ReturnValue":"<result envelope as a JSON string>"}: typed results are a
// call_tool_result with structuredContent and its text copy; a single text
// result is type text. When the request's Accept lists
// metadata.MediaTypeDirectResult (funchost does), the reply is the
// metadata.DirectReply instead, the same result encoded once. In the
// host's own process (package serve) the handler also takes tool calls
// with no encoding at all (metadata.LocalTools), unless the app's
// telemetry wraps it, so that every call makes the worker's span. Handler
// errors, panics and arguments that do not decode into In become isError
// results (a [*CapabilityError] excepted, see Asking the client); the
// process keeps serving. An unknown function is 404, a
// malformed body 400 and a body over Options.MaxBodyBytes 413, each with
// {"error":"…"}; a broken configuration answers every request with 500
// (see [App.Handler]). A POST for a resource, resource template, prompt or
// MCP Apps view function is served by its kind, and so is one that names
// an MCP method in metadata.HeaderMethod (a completion): the methods the
// worker answers are read from metadata's method table
// (metadata.WorkerAnswers), any other is 400.
//
// # Resources, prompts and MCP Apps
//
// [App.ConfigureMcpResource] serves a resource at a static URI, or a
// resource template when the URI holds {variable} expressions
// ("test://items/{id}"): the handler gets the requested URI and the
// variables' values ([ResourceContext.Variable]) and returns text
// ([TextResource]) or binary contents ([BlobResource]).
// [App.ConfigureMcpPrompt] (or the typed [AddPrompt], whose arguments are
// the string fields of a struct) serves a prompt: the handler gets the
// arguments and returns messages ([UserMessage], [AssistantMessage] with
// [Text], [Image], [EmbeddedResource], …). [ToolBuilder.AsMcpApp] gives a
// tool a UI view (SEP-1865): the tool is advertised with _meta.ui and a
// function named "functions--mcpapp-<tool>" serves the view at
// ui://<tool>/view, as the Azure Functions MCP extension's worker does.
// Their function.json keys are the ones the extension reads
// (mcpResourceTrigger, mcpPromptTrigger); Build checks each with
// binding.LoadResource / binding.LoadPrompt and a binding.Registry, the
// checks a host applies at load (URI and template rules, structurally
// equal templates, names unique case-insensitively, MIME types, icons).
//
// Beyond the extension, in keys the Functions host ignores (so it does not
// advertise them): completions of prompt arguments and template variables
// ([PromptBuilder.WithCompletion], [PromptBuilder.WithCompletionFunc]; the
// contract with the host is in package metadata, completion.go), tool
// annotations ([ToolBuilder.WithAnnotations]) and icons on tools and
// resources.
//
// A read or get is answered with the envelope the extension's binders read
// ({"content"} for resources, {"content","type":"get_prompt_result"} for
// prompts), checked by decoding it back with package binding before it is
// sent. A handler error, a panic or a prompts/get without a required
// argument fails the invocation: HTTP 500 with a metadata.FailureReply
// whose code is the JSON-RPC error the host should answer with.
//
// # Progress and log messages
//
// While it runs, a handler can report progress with [ToolContext.Progress]
// and send log messages to the MCP client with [ToolContext.ClientLog] and
// [ToolContext.ClientLogf] (at a [LogLevel]). funchost forwards them as
// notifications/progress and notifications/message on the call's stream,
// before the result, when the client asked for them (a progressToken; a log
// level). They travel over a channel funchost offers each invocation in
// request headers (metadata.HeaderNotifyURL and the others: a loopback URL
// and a bearer token); each send waits for funchost, at most 5 seconds, and
// never fails the tool. The real Azure Functions host offers no channel:
// there these calls do nothing ([ToolContext.Notifies] is false).
//
// # Asking the client
//
// A tool or prompt handler can ask the MCP client through the same
// channel ([ClientRequests], part of [ToolContext] and [PromptContext]):
// the user ([ClientRequests.Elicit]), the client's model
// ([ClientRequests.CreateMessage]) or its roots ([ClientRequests.ListRoots]),
// several at once with [ClientRequests.RequestInput]. On MCP revisions
// before 2026-07-28 each call waits for the answer on the call's stream; on
// 2026-07-28 (SEP-2322) an unanswered request ends the run with
// [ErrInputRequired] and the handler runs again, from the start, with the
// answers. A request the client has no capability for returns a
// [*CapabilityError] before anything is sent; a handler that returns it
// fails the invocation with HTTP 500 and a metadata.FailureReply of code
// metadata.CodeMissingRequiredClientCapability naming the capability. Under
// the real Azure Functions host every request returns [ErrNotSupported].
// [ToolContext.CloseSSEStream] asks funchost to end the client's response
// stream while the tool keeps running (SSE polling); the client resumes it.
//
// # Announcing changes
//
// Any code of the app, inside an invocation or not (a timer goroutine,
// another function of the custom handler), may tell the MCP clients that
// listen that a resource changed ([NotifyResourceUpdated]) or that the
// tools, prompts or resources list changed ([NotifyListChanged]); under
// funchost the change reaches the clients subscribed to it on every
// instance. The channel is the worker process's, offered by funchost in
// the environment; [CanNotifyChanges] reports whether there is one. Under
// the real Azure Functions host there is none, and both return an error
// matching [ErrNotSupported] at once; a bad change matches [ErrBadChange].
// Past funchost's rate a change waits its turn (merged with a change of the
// same resource or list that waits) and is not refused; a host that
// refuses one for its rate gives [ErrTooManyChanges].
//
// # Tasks
//
// A tool declared with [ToolBuilder.WithTaskSupport] ([TaskOptional] or
// [TaskRequired], with an optional TTL and poll interval in [TaskOptions])
// may run as an MCP task (the tasks extension, SEP-2663) under funchost: a
// client that negotiated the extension gets a task handle at once and polls
// it, while the handler runs in the background. The handler stays the same:
// [ToolContext.InTask] reports that it runs as a task, its progress becomes
// the task's status message, and its requests to the client wait for the
// client's tasks/update. With TaskOptions.Deferred the call starts
// synchronously and becomes a task when the handler calls
// [ToolContext.RunAsTask], which returns an error matching
// [ErrNotSupported] when no task is on offer. A handler's error is a tool
// error (the task completes with an isError result); a panic in a task fails
// it (HTTP 500, code -32603). The real Azure Functions host ignores the
// declaration and runs every call synchronously.
//
// # Hooks
//
// [Options.Hooks] wrap every handler run of the app, without touching a
// handler: a tool call ([KindTool], or [KindTask] when the call runs as a
// task), a resource read, a prompt, a completion function, and each request
// a handler sends the MCP client ([KindClientRequest], inside its handler's
// run). A [Hook] gets the [Invocation] (kind, function, name, invocation id)
// and runs the handler by calling next with the context the handler should
// get; what it returns is what the handler returned, or its own error
// instead. Tracing, metrics, authorization and logging go there.
//
// # Telemetry
//
// Telemetry is opt-in, so that an app without it links none of the
// OpenTelemetry SDK: [Options].Telemetry set to the one of the package
// github.com/funcmcp/funcmcp/worker/otel exports OpenTelemetry traces and
// metrics over OTLP/HTTP as the OTEL_* variables say, when the environment
// names an OTLP endpoint (OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT; funchost passes its environment and
// local.settings.json Values on, the Functions host its app settings) and
// OTEL_SDK_DISABLED is not "true" (funchost sets it when host.json leaves
// telemetry off). A hook, outermost of the app's, opens a
// span around every handler run ("execute_tool {tool}" for a tool)
// continuing the W3C traceparent funchost sends on the invocation, else the
// MCP client's traceparent among the invocation's transport headers
// ([Invocation.ClientHeader]); the handler's context carries it, and the
// global tracer and meter providers are set, so a tool's own spans
// (otel.Tracer) nest under it. Another [Telemetry] can be plugged in the
// same way. See docs/telemetry.md.
package worker
