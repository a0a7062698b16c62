// Package funcmcptest serves a funcmcp app's MCP front in a test: the
// front funchost and "handler serve" serve (package serve), on an
// httptest server on 127.0.0.1, with the app's handlers called in the
// test's process. A test then calls a tool with any MCP client, the
// official Go SDK's among them, and sees exactly what a client sees:
// structuredContent, output-schema failures as isError results, progress
// and log notifications, JSON-RPC errors.
//
//	func TestTextStats(t *testing.T) {
//		srv := funcmcptest.Start(t, newApp(), nil)
//		res, err := srv.CallTool(t.Context(), "text_stats", map[string]any{"text": "a b"})
//		// or: transport := &mcp.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: srv.Client()}
//	}
//
// The server reads host.json and local.settings.json from the test's
// working folder (its package folder), as the app's own folder; without a
// host.json it serves with anonymous access. [Server.CallTool] is a small
// client of its own, so that a test needs no other module.
//
// The app runs in the test's process, whose environment it shares with the
// server, as with "handler serve": the local.settings.json Values become
// that environment (a variable already set wins), a change the app
// announces goes to the server started last, and the function-key
// variables leave it.
package funcmcptest
