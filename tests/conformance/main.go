// Command conformance is the function app that the MCP conformance suite
// (@modelcontextprotocol/conformance, installed in tests/node) is run
// against by `make conformance`. Its tools are the fixture tools the suite's
// server scenarios call, with exactly the names, arguments and results the
// suite's scenario source asks for (src/scenarios/server/tools.ts and
// json-schema-2020-12.ts of the suite); its resources, resource template and
// prompts are those of resources.ts, prompts.ts and completion.ts, with
// completions of test_prompt_with_arguments' arguments.
//
// Tools the suite calls that this app does not have are for features the
// project does not offer (a tool sending sampling or elicitation requests to
// the client, input-required results); expected-failures/*.yaml lists them
// with their reasons.
package main

import (
	"github.com/funcmcp/funcmcp/worker"
)

func main() {
	newApp().Main()
}

// newApp configures every fixture tool, resource and prompt.
func newApp() *worker.App {
	app := worker.New(nil)
	registerContentTools(app)
	registerNotifyingTools(app)
	registerSchemaTools(app)
	registerHeaderTools(app)
	registerResources(app)
	registerPrompts(app)
	return app
}
