package worker_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/funcmcp/funcmcp/worker"
)

// printFunctions prints the function.json of each function whose name
// holds one of names.
func printFunctions(app *worker.App, names ...string) {
	fns, err := app.Functions()
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, f := range fns {
		for _, n := range names {
			if strings.Contains(f.Name, n) {
				data, _ := f.Encode()
				fmt.Printf("%s/function.json:\n%s", f.Name, data)
			}
		}
	}
}

func ExampleApp_ConfigureMcpResource() {
	app := worker.New(nil)
	app.ConfigureMcpResource("test://items/{id}").
		WithName("item").
		WithDescription("One item, by id.").
		WithMimeType("application/json").
		WithCompletion("id", "apple", "apricot", "banana").
		Handle(func(ctx context.Context, rc *worker.ResourceContext) (*worker.ResourceResult, error) {
			return worker.TextResource(fmt.Sprintf(`{"id":%q}`, rc.Variable("id"))), nil
		})
	printFunctions(app, "items")
	// Output:
	// test_items_id/function.json:
	// {
	//   "bindings": [
	//     {
	//       "name": "context",
	//       "type": "mcpResourceTrigger",
	//       "direction": "in",
	//       "uri": "test://items/{id}",
	//       "resourceName": "item",
	//       "description": "One item, by id.",
	//       "mimeType": "application/json",
	//       "completions": "{\"id\":{\"values\":[\"apple\",\"apricot\",\"banana\"]}}"
	//     }
	//   ]
	// }
}

func ExampleApp_ConfigureMcpPrompt() {
	app := worker.New(nil)
	app.ConfigureMcpPrompt("review_code").
		WithDescription("Asks for a code review.").
		WithArgument("code", "The code to review.", worker.Required).
		WithArgument("tone", "How to say it.", worker.Optional).
		WithCompletion("tone", "kind", "blunt").
		Handle(func(ctx context.Context, pc *worker.PromptContext) (*worker.PromptResult, error) {
			code, _ := pc.Argument("code")
			return &worker.PromptResult{Messages: []worker.PromptMessage{
				worker.UserMessage(worker.EmbeddedResource("file:///main.go", "text/x-go", code)),
				worker.UserMessage(worker.Text("Please review the code above.")),
			}}, nil
		})
	printFunctions(app, "review_code")
	// Output:
	// review_code/function.json:
	// {
	//   "bindings": [
	//     {
	//       "name": "context",
	//       "type": "mcpPromptTrigger",
	//       "direction": "in",
	//       "promptName": "review_code",
	//       "description": "Asks for a code review.",
	//       "promptArguments": "[{\"name\":\"code\",\"description\":\"The code to review.\",\"required\":true},{\"name\":\"tone\",\"description\":\"How to say it.\",\"required\":false}]",
	//       "completions": "{\"tone\":{\"values\":[\"kind\",\"blunt\"]}}",
	//       "useResultSchema": true
	//     }
	//   ]
	// }
}

type TripArgs struct {
	City string `json:"city" jsonschema:"The city to visit"`
	Days string `json:"days,omitempty" jsonschema:"How many days"`
}

func ExampleAddPrompt() {
	app := worker.New(nil)
	worker.AddPrompt(app, "plan_trip", func(ctx context.Context, pc *worker.PromptContext, in TripArgs) (*worker.PromptResult, error) {
		return worker.TextPromptResult("Plan " + in.Days + " days in " + in.City + "."), nil
	})
	printFunctions(app, "plan_trip")
	// Output:
	// plan_trip/function.json:
	// {
	//   "bindings": [
	//     {
	//       "name": "context",
	//       "type": "mcpPromptTrigger",
	//       "direction": "in",
	//       "promptName": "plan_trip",
	//       "promptArguments": "[{\"name\":\"city\",\"description\":\"The city to visit\",\"required\":true},{\"name\":\"days\",\"description\":\"How many days\",\"required\":false}]",
	//       "useResultSchema": true
	//     }
	//   ]
	// }
}

func ExampleToolBuilder_AsMcpApp() {
	app := worker.New(nil)
	app.ConfigureMcpTool("show_chart").
		WithDescription("Shows a chart.").
		AsMcpApp(func(a *worker.AppBuilder) {
			a.WithView(worker.ViewFromHTML("<!doctype html><p>chart</p>")).
				WithBorder(true).
				WithCSP(func(c *worker.CSPBuilder) { c.LoadResourcesFrom("https://cdn.example.com") })
		}).
		Handle(func(ctx context.Context, tc *worker.ToolContext) (*worker.Result, error) {
			return worker.TextResult("drawn"), nil
		})
	printFunctions(app, "show_chart")
	// Output:
	// functions--mcpapp-show_chart/function.json:
	// {
	//   "bindings": [
	//     {
	//       "name": "context",
	//       "type": "mcpResourceTrigger",
	//       "direction": "In",
	//       "uri": "ui://show_chart/view",
	//       "resourceName": "show_chart_view",
	//       "mimeType": "text/html;profile=mcp-app"
	//     }
	//   ]
	// }
	// show_chart/function.json:
	// {
	//   "bindings": [
	//     {
	//       "name": "context",
	//       "type": "mcpToolTrigger",
	//       "direction": "in",
	//       "toolName": "show_chart",
	//       "description": "Shows a chart.",
	//       "toolProperties": "[]",
	//       "metadata": "{\"ui\":{\"resourceUri\":\"ui://show_chart/view\",\"visibility\":[\"model\",\"app\"]}}",
	//       "useResultSchema": true
	//     }
	//   ]
	// }
}

func ExampleToolBuilder_WithAnnotations() {
	app := worker.New(nil)
	app.ConfigureMcpTool("list_notes").
		WithDescription("Lists the notes.").
		WithAnnotations(worker.ToolAnnotations{ReadOnlyHint: new(true), OpenWorldHint: new(false)}).
		Handle(func(ctx context.Context, tc *worker.ToolContext) (*worker.Result, error) {
			return worker.TextResult("none"), nil
		})
	printFunctions(app, "list_notes")
	// Output:
	// list_notes/function.json:
	// {
	//   "bindings": [
	//     {
	//       "name": "context",
	//       "type": "mcpToolTrigger",
	//       "direction": "in",
	//       "toolName": "list_notes",
	//       "description": "Lists the notes.",
	//       "toolProperties": "[]",
	//       "annotations": "{\"readOnlyHint\":true,\"openWorldHint\":false}",
	//       "useResultSchema": true
	//     }
	//   ]
	// }
}
