// Command brokenapp is a function app with deliberately broken tools, for the
// end-to-end tests: a tool whose output breaks its own output schema, a tool
// that panics, and one good tool that must keep working next to them. The
// tests add hand-written function folders with invalid output schemas to its
// app folder.
package main

import (
	"context"
	"strings"

	"github.com/funcmcp/funcmcp/worker"
)

// countSchema requires an integer count; bad_output returns a string there.
const countSchema = `{"type":"object","properties":{"count":{"type":"integer"},"label":{"type":"string"}},"required":["count","label"]}`

// EchoIn is echo's arguments.
type EchoIn struct {
	Text string `json:"text" description:"Text to echo."`
}

// EchoOut is echo's result.
type EchoOut struct {
	Echo   string `json:"echo"`
	Length int    `json:"length"`
}

func main() {
	app := worker.New(nil)
	app.ConfigureMcpTool("bad_output").
		WithDescription("Returns structuredContent that breaks its own output schema.").
		WithOutputSchema(countSchema).
		Handle(func(context.Context, *worker.ToolContext) (*worker.Result, error) {
			return &worker.Result{StructuredContent: map[string]any{"count": "three", "label": "three"}}, nil
		})
	app.ConfigureMcpTool("panics").
		WithDescription("Panics on every call.").
		WithProperty("reason", worker.String, "What to panic with.", worker.Optional).
		Handle(func(context.Context, *worker.ToolContext) (*worker.Result, error) {
			panic("deliberate panic in the panics tool")
		})
	worker.AddTool(app, "echo", func(_ context.Context, _ *worker.ToolContext, in EchoIn) (*worker.Result, EchoOut, error) {
		return nil, EchoOut{Echo: strings.ToUpper(in.Text), Length: len(in.Text)}, nil
	}).WithDescription("Echoes its text in upper case, with its length.")
	app.Main()
}
