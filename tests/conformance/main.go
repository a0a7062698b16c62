// Command conformance is the function app that the MCP conformance suite
// (@modelcontextprotocol/conformance, installed in tests/node) is run
// against by `make conformance`. Its tools are the fixture tools the suite's
// server scenarios call, with exactly the names, arguments and results the
// suite's scenario source asks for (src/scenarios/server/tools.ts and
// json-schema-2020-12.ts of the suite); its resources, resource template and
// prompts are those of resources.ts, prompts.ts and completion.ts, with
// completions of test_prompt_with_arguments' arguments.
//
// The tools and the prompt that ask the client (sampling, elicitation,
// roots: on the call's stream before MCP 2026-07-28, as input-required
// results on it) and the SSE polling tool are in clientreq.go; the
// fixtures of the tasks extension's scenarios (tasks-*: greet,
// slow_compute, failing_job, protocol_error_job, confirm_delete,
// multi_input, test_tool_with_task) are in tasks.go. What the
// suite checks that funchost does not pass is listed with its reason in
// expected-failures/*.yaml.
package main

import (
	"github.com/funcmcp/funcmcp/serve"
	"github.com/funcmcp/funcmcp/worker"
)

// main serves under funchost as a custom handler, and with "serve" in one
// process (package serve): the suite runs against both.
func main() {
	serve.Main(newApp())
}

// newApp configures every fixture tool, resource and prompt.
func newApp() *worker.App {
	app := worker.New(nil)
	registerContentTools(app)
	registerNotifyingTools(app)
	registerListChangeTools(app)
	registerClientRequestTools(app)
	registerSchemaTools(app)
	registerHeaderTools(app)
	registerTaskTools(app)
	registerResources(app)
	registerPrompts(app)
	return app
}
