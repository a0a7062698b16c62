// Package serve makes a funcmcp app serve MCP itself, in one process,
// through the same front as funchost: an app that imports it runs
//
//	handler serve [--port N] [--host ADDR]
//
// which serves the app's tools, resources and prompts at
// /runtime/webhooks/mcp (and the legacy SSE endpoints) with host.json and
// local.settings.json read from the working folder, as funchost reads
// them: the same method table and chain, checks, limits, keys, OAuth,
// telemetry, tasks, notifications and backplanes. The catalog is the
// app's own metadata (what emit-metadata would write, read in memory, no
// function folder needed) and every call goes to the app's handlers in
// the process, with no connection in between; a tools/call is handed to
// the tool with nothing encoded (metadata.LocalTools), except when the
// app's telemetry is on, which wraps the handler to make its spans.
//
// An app opts in by calling [Main] instead of worker.App.Main:
//
//	func main() {
//		app := worker.New(nil)
//		// … tools …
//		serve.Main(app) // "serve" serves MCP; anything else is app.Main's
//	}
//
// Every other command of the app is unchanged: with no arguments it is a
// custom handler (under funchost or the Azure Functions host), and
// emit-metadata DIR writes its function folders. An app that does not
// import this package links none of the host.
package serve
