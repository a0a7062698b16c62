package worker_test

import (
	"context"
	"fmt"
	"time"

	"github.com/funcmcp/funcmcp/worker"
)

func ExampleApp_ConfigureMcpTool() {
	app := worker.New(nil)
	app.ConfigureMcpTool("get_weather").
		WithDescription("Current weather for a city.").
		WithProperty("city", worker.String, "The city name.", worker.Required).
		WithProperty("units", worker.String.Enum("celsius", "fahrenheit"), "Temperature units.", worker.Optional).
		WithOutputSchema(`{"type":"object","properties":{"temp":{"type":"number"}},"required":["temp"]}`).
		WithMetadata("version", "1.0").
		Handle(func(ctx context.Context, tc *worker.ToolContext) (*worker.Result, error) {
			return &worker.Result{StructuredContent: map[string]float64{"temp": 21.5}}, nil
		})
	fns, err := app.Functions()
	if err != nil {
		fmt.Println(err)
		return
	}
	data, _ := fns[0].Encode()
	fmt.Printf("%s/function.json:\n%s", fns[0].Name, data)
	// Output:
	// get_weather/function.json:
	// {
	//   "bindings": [
	//     {
	//       "name": "context",
	//       "type": "mcpToolTrigger",
	//       "direction": "in",
	//       "toolName": "get_weather",
	//       "description": "Current weather for a city.",
	//       "toolProperties": "[{\"propertyName\":\"city\",\"propertyType\":\"string\",\"description\":\"The city name.\",\"isRequired\":true,\"isArray\":false,\"enumValues\":[]},{\"propertyName\":\"units\",\"propertyType\":\"string\",\"description\":\"Temperature units.\",\"isRequired\":false,\"isArray\":false,\"enumValues\":[\"celsius\",\"fahrenheit\"]}]",
	//       "metadata": "{\"version\":\"1.0\"}",
	//       "outputSchema": "{\"type\":\"object\",\"properties\":{\"temp\":{\"type\":\"number\"}},\"required\":[\"temp\"]}",
	//       "useResultSchema": true
	//     }
	//   ]
	// }
}

type Forecast struct {
	City string    `json:"city" jsonschema:"The city name"`
	Days []Day     `json:"days"`
	At   time.Time `json:"at"`
}

type Day struct {
	High float64 `json:"high"`
	Note string  `json:"note,omitempty"`
}

func ExampleAddTool() {
	app := worker.New(nil)
	worker.AddTool(app, "forecast", func(ctx context.Context, tc *worker.ToolContext, in struct {
		City string `json:"city" jsonschema:"The city name"`
		Days int    `json:"days,omitempty" jsonschema:"How many days"`
	}) (*worker.Result, Forecast, error) {
		return nil, Forecast{City: in.City}, nil
	}).WithDescription("Forecast for a city.")
	fns, err := app.Functions()
	if err != nil {
		fmt.Println(err)
		return
	}
	data, _ := fns[0].Encode()
	fmt.Printf("%s", data)
	// Output:
	// {
	//   "bindings": [
	//     {
	//       "name": "context",
	//       "type": "mcpToolTrigger",
	//       "direction": "in",
	//       "toolName": "forecast",
	//       "description": "Forecast for a city.",
	//       "toolProperties": "[{\"propertyName\":\"city\",\"propertyType\":\"string\",\"description\":\"The city name\",\"isRequired\":true,\"isArray\":false,\"enumValues\":[]},{\"propertyName\":\"days\",\"propertyType\":\"integer\",\"description\":\"How many days\",\"isRequired\":false,\"isArray\":false,\"enumValues\":[]}]",
	//       "inputSchema": "{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\",\"description\":\"The city name\"},\"days\":{\"type\":\"integer\",\"description\":\"How many days\"}},\"required\":[\"city\"],\"additionalProperties\":false}",
	//       "outputSchema": "{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\",\"description\":\"The city name\"},\"days\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"properties\":{\"high\":{\"type\":\"number\"},\"note\":{\"type\":\"string\"}},\"required\":[\"high\"],\"additionalProperties\":false}},\"at\":{\"type\":\"string\",\"format\":\"date-time\"}},\"required\":[\"city\",\"days\",\"at\"],\"additionalProperties\":false}",
	//       "useWorkerInputSchema": true,
	//       "useResultSchema": true
	//     }
	//   ]
	// }
}

// Example_guarantees sets how arguments and results are checked, for the app
// and for one tool; the settings are written to function.json, so funchost
// applies the same.
func Example_guarantees() {
	draw := func(ctx context.Context, tc *worker.ToolContext) (*worker.Result, error) {
		return &worker.Result{Content: []worker.Content{worker.Image([]byte{0x89, 'P', 'N', 'G'}, "image/png"), worker.Text("a chart")}}, nil
	}
	//docs:begin options
	app := worker.New(&worker.Options{
		InputValidation:  worker.ValidationStrict, // "" = host.json's, else strict
		OutputValidation: worker.ValidationStrict, // "" = host.json's, else strict
		TextCopy:         worker.TextCopyJSON,     // "" = host.json's, else json
	})
	app.ConfigureMcpTool("chart").
		WithProperty("values", worker.Number.Array(), "The bar heights.", worker.Required).
		WithContentKinds("image/png", "text/plain"). // every result holds both, and nothing else
		WithInputValidation(worker.ValidationWarn).  // this tool only
		WithOutputValidation(worker.ValidationWarn). // this tool only
		WithTextCopy(worker.TextCopySummary).        // this tool only
		Handle(draw)
	//docs:end options
	fns, err := app.Functions()
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, key := range []string{"contentKinds", "inputValidation", "outputValidation", "textCopy"} {
		v, _ := fns[0].Bindings[0].LookupString(key)
		fmt.Printf("%s: %s\n", key, v)
	}
	// Output:
	// contentKinds: ["image/png","text/plain"]
	// inputValidation: warn
	// outputValidation: warn
	// textCopy: summary
}
