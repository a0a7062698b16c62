// Package bench compares funcmcp with the official MCP Go SDK
// (github.com/modelcontextprotocol/go-sdk v1.8.0) and with
// github.com/mark3labs/mcp-go v1.2.1 doing the same work, on one machine, in
// one run, and prints two tables at the end (`make bench`): the ratios to
// the SDK, and the peers table (funchost, the SDK, mcp-go and a column for
// the one-process mode, with funchost/SDK and funchost/mcp-go ratios and
// their minimum, median and maximum over the interleaved rounds).
//
// The programs are built once per test binary into a temporary folder and
// run as processes on 127.0.0.1: cmd/funchost serving the sample app (which
// starts the sample worker, function-app-sample), and tests/bench/sdkserver,
// the SDK baseline, once stateless and once with sessions. The baseline
// serves the same get_weather computation (package
// function-app-sample/weather) through the SDK's typed AddTool, with the
// input and output schemas funchost advertises, so both sides validate the
// same output against the same schema. tests/bench/mcpgoserver, a module of
// its own (mcp-go stays out of funcmcp's go.mod), serves the same tools with
// mcp-go, stateless, with WithInputSchemaValidation and
// WithOutputSchemaValidation; TestPeersDoTheSameWork checks that every
// server answers the same structuredContent and that the peers' validation
// is on. A further server joins the peers table as an entry of peerServers:
// a command line and the output line that says it listens.
//
// Benchmarks whose names say tools/call make real calls: a raw HTTP client
// sends the JSON-RPC request and checks the answer. Micro-benchmarks say in
// their name what they leave out (_NoCall, _InProcess…).
//
//   - BenchmarkToolsCall: throughput, p50/p99 and server CPU per call (read
//     from /proc/<pid>/task/*/schedstat of the server processes: funchost +
//     worker, or the SDK server) and its threads' context switches per call
//     (/proc/<pid>/task/*/status, in the peers table) at concurrency 1 and
//     16, the targets
//     interleaved in rotating chunks; beside them the same invocation posted
//     to the worker directly and a bare loopback round trip, from which the
//     cost of the funchost tier is expressed in round trips.
//   - BenchmarkToolsCallWithToken: what access tokens cost: server CPU per
//     tools/call of funchost (+ worker) as a resource server called with a
//     valid token (keys and validation cached) over the same without
//     authorization, interleaved; goal at most 1.05×.
//   - BenchmarkToolsList: listing 1,000 and 10,000 tools (all pages).
//   - BenchmarkStartup: process start to the first successful tools/call:
//     the sample app (every peer server too), and 1,000 function.json
//     files, shared and distinct schemas.
//   - BenchmarkMemory_c64: the largest Pss and VmRSS of every server's
//     processes under 64 callers.
//   - BenchmarkValidateOutput_NoCall: decoding and validating 200 B, 2 KiB
//     and 64 KiB outputs, beside the SDK's schema library.
//   - BenchmarkIdleSessions_InProcess: heap and goroutines per idle session.
//   - BenchmarkToolsCall_InProcessHost: allocations per call with the
//     server in the benchmark's process; fails if a call compiles a schema.
//
// Figures on a shared machine are noisy: read the ratios, which come from
// runs interleaved in one process, and the load average printed with each
// row. Nothing here asserts a time.
package bench
