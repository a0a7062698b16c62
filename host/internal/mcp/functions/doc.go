// Package functions serves what the MCP front serves besides tools: the
// [Functions] an app gives (its resources, resource templates, prompts and
// completions), the requests the front passes them ([ReadRequest],
// [PromptRequest], [CompleteRequest], each with its [Caller]), and their
// results ([Result], or a worker's result object checked once by
// [EncodedResult] and spliced in as it is).
//
// A [Server] answers resources/list, resources/templates/list,
// resources/read, prompts/list, prompts/get and completion/complete for the
// core (package mcp): [Server.Read] reads a request's params (exact member
// names; the arguments bounded by CheckArguments first) and answers a list
// at once, a page at a time behind an opaque cursor; a call's function runs
// with [Call.Run] in the context the core gives, and [Outcome.Answer] builds
// its result object (resultType, the cache hints and the server info for a
// modern revision, given as values by the core) or its *jsonrpc.Error. The
// core keeps what needs the exchange: the cancellable context, the Notifier
// and input answers of prompts/get, the input-required result, and writing
// the reply. [Functions.Advertises] says which capabilities the app's
// functions advertise. The package keeps no state of its own.
package functions
