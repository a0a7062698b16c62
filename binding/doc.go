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
// never fetched. Compile once, validate many times.
package binding
