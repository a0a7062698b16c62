// Package binding says what an mcpToolTrigger binding means: it parses the
// raw binding into a [Trigger], checks and compiles the tool's input and
// output schemas, validates structuredContent against the compiled output
// schema, and turns a worker's result envelope into an MCP CallToolResult.
//
// The worker SDK uses it to fail at build time and the host uses it to fail at
// load, so a schema one side accepts the other never rejects.
//
// # Schema checks
//
// [ParseSchema] applies, in order: not empty; valid JSON ([SyntaxError]); the
// MCP tool-schema shape rules of the Azure Functions MCP extension — root an
// object, "type" the string "object", "properties" an object and "required"
// an array when present ([ShapeError]); and a valid JSON Schema 2020-12
// document ([CompileError]). Compilation is offline: a remote or file $ref is
// never fetched. Compile once, validate many times. As in the MCP extension,
// non-string entries of the root "required" are accepted.
//
// # Triggers and tools
//
// [ParseTrigger] reads an mcpToolTrigger binding with its keys matched
// case-insensitively, as the Functions host matches them: "toolName" and the
// "description" key are required; "toolProperties", "metadata",
// "inputSchema", "outputSchema" and "naturalOutputSchema" are strings holding
// JSON. [LoadTool] adds the compiled schemas: the output schema when
// "outputSchema" is non-empty, the natural output schema when
// "naturalOutputSchema" is (it must then have outputSchema as its object
// projection, see [ProjectSchema]),
// the input schema from the worker ("useWorkerInputSchema") or built from the
// tool properties by [PropertiesSchema] exactly as the extension builds it.
// Every problem is a [ToolError] naming the function, the tool and the file.
//
// # Natural output schemas (SEP-2106)
//
// From MCP 2026-07-28 an output schema may be any JSON Schema 2020-12
// document; earlier clients and the Azure Functions host require an object.
// [ParseNaturalSchema] checks a natural schema, [ProjectSchema] makes its
// object projection (wrapping non-object schemas under one field and
// rewriting their internal $ref pointers), [ProjectValue] and
// [UnprojectValue] wrap and unwrap values to match, and [UnprojectResult]
// turns a wrapped tool result back into the natural one. The worker wraps,
// funchost unwraps for 2026-07-28 clients ([Tool.ResultFor]) and shows each
// client its schema ([Tool.AdvertisedOutputSchema]).
//
// # Results
//
// [DecodeReturnValue] turns a custom handler's ReturnValue into an MCP
// CallToolResult: the result envelope ("useResultSchema") with its
// call_tool_result, multi_content_result and single-block forms, or a plain
// value as one text block. [Tool.ShapeResult], which the worker SDK runs
// before replying and the host again on what it receives ([Tool.CheckResult]
// in a worker whose host shapes its reply again), then checks
// structuredContent against the compiled output schema (decoding it once,
// compiling only a schema deferred by [Compiler.Defer] that a value first
// needs the full validator for, and not at all when the result carries the
// worker's [Schema.Digest] of these bytes), checks the content against the
// declared content kinds ([CheckContentKinds]), may promote a plain JSON
// value that matches the schema to structuredContent, and adds the text copy
// ([metadata.AddTextCopy]). Decoding errors are [ResultError]; a broken
// result is an [OutputIssue] wrapping a [ValidationError] (each [Problem]
// with JSON pointers into the value and the schema) or a
// [ContentKindError]. [CheckContentBlock] is the one content-block check of
// both sides.
//
// # Resources, templates and prompts
//
// [LoadResource] and [LoadPrompt] decide whether an mcpResourceTrigger or
// mcpPromptTrigger binding can be served (every problem a [LoadError]); the
// worker SDK runs them on what it emits and the host at load. A [Registry]
// adds the extension's registration rules: unique static URIs and prompt
// names (case-insensitively), and no two templates of the same structure.
// [ParseURITemplate] builds a template's matcher exactly as the extension's
// ResourceUriHelper does, and [ValidateResourceURI] is its URI check. At
// serve time, [Resource.ListEntry] and [Prompt.ListEntry] are the list
// entries, [Resource.Match] and [Registry.LookupResource] find what serves
// a URI, [Prompt.MissingArguments] the required arguments a request lacks,
// and [Resource.DecodeReturnValue] and [Prompt.DecodeReturnValue] turn the
// worker's return value into the MCP result as the extension's binders do.
// [CompleteValues] answers a completion from a fixed list;
// [DecodeCompletionReturnValue] reads a worker's answer (see
// metadata.KeyCompletions for the contract).
package binding
