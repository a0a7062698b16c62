// Package metadata is the wire contract between a funcmcp function app and the
// host that serves it: the function.json model, the mcpToolTrigger key names,
// the metadata pipeline that writes a tool's binding, the custom-handler
// invocation envelopes, the tool invocation context and the tool result
// envelope; and the MCP method table ([Methods], [LookupMethod]): every MCP
// method and notification with its static facts (revisions, capability,
// target, scope check, span name, task support, caching, how it reaches the
// worker), the one place the host and the worker read them from.
//
// It depends on the standard library and the module's internal/jsonx (the
// JSON rules every side shares) only, so both sides of the contract (the
// worker SDK that emits function.json at build time and the host that reads
// it) share one definition and cannot drift apart. The worker derives the
// methods it answers from the table ([WorkerAnswers]), and the host's MCP
// front, OAuth guard, telemetry and scopes read its facts, so that a new
// method is one entry here plus its serve func in the host.
//
// The contract itself — function.json keys, the invocation request and
// reply, the direct reply, the call channel, requests to the client, tasks —
// is written once, in docs/contract.md of the repository; this package holds
// its Go names and code.
//
// # function.json
//
// A function app is a folder with host.json and one sub-folder per function,
// each holding a function.json. [ReadApp] and [ReadFunction] load them;
// [WriteFunction] writes one. A [Binding] is an ordered JSON object: keys the
// pipeline does not know survive a read/write round trip in place.
//
// # The mcpToolTrigger binding
//
// An MCP tool is a function whose trigger binding has type [TypeMcpToolTrigger].
// The keys [KeyToolProperties], [KeyMetadata], [KeyInputSchema] and
// [KeyOutputSchema] hold JSON encoded as strings; [KeyUseWorkerInputSchema] and
// [KeyUseResultSchema] are booleans and only ever written as true. There is no
// flag next to [KeyOutputSchema]: the key present means a schema, absent means
// none.
//
// # The pipeline
//
// [Emit] runs the binding-builder steps in a fixed order (add tool properties,
// add metadata, resolve input schema, resolve output schema, resolve result
// schema, build) over a function, taking each tool's [ToolOptions]. The output
// is deterministic: keys keep their position, new keys are appended in step
// order and schema text is compact.
//
// # Resources, prompts and MCP Apps
//
// [TypeMcpResourceTrigger] (a static resource, or a resource template when
// its uri holds {variable} expressions) and [TypeMcpPromptTrigger] carry the
// keys the extension's attribute binders read (see kinds.go for the source
// they were checked against). [NewResourceFunction], [NewPromptFunction]
// and [NewAppViewFunction] write one function each; [EmitResources] and
// [EmitPrompts] complete existing bindings. The invocation contexts are
// [ResourceInvocationContext] and [PromptInvocationContext]; the return
// envelopes [ResourceResult] ({"content"}) and [PromptResult]
// ({"content","type"}); a failed invocation is answered with a
// [FailureReply].
//
// funcmcp adds, in keys the Azure Functions host ignores: completions
// ([KeyCompletions], with the worker asked through [HeaderMethod], see
// completion.go), tool annotations ([KeyAnnotations]) and icons on tools and
// resources ([KeyIcons], which the extension reads on prompts only).
package metadata
