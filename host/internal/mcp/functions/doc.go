// Package functions holds what the MCP front serves besides tools: the
// [Functions] an app gives (its resources, resource templates, prompts and
// completions), the requests the front passes them ([ReadRequest],
// [PromptRequest], [CompleteRequest], each with its [Caller]), their
// results ([Result], or a worker's result object checked once by
// [EncodedResult] and spliced in as it is), and the readers of those
// methods' params: the list cursors ([MakeCursor], [ParseCursor]) and
// completion/complete's params ([DecodeCompleteParams]). The core
// (package mcp) answers the methods; this package keeps no state.
package functions
