package binding_test

import (
	"encoding/json"
	"fmt"

	"github.com/funcmcp/funcmcp/binding"
	"github.com/funcmcp/funcmcp/metadata"
)

const functionJSON = `{
  "bindings": [
    {
      "name": "context",
      "type": "mcpToolTrigger",
      "direction": "in",
      "toolName": "get_weather",
      "description": "Current weather for a city.",
      "toolProperties": "[{\"propertyName\":\"city\",\"propertyType\":\"string\",\"description\":\"City name.\",\"isRequired\":true,\"isArray\":false,\"enumValues\":[]}]",
      "outputSchema": "{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\"},\"temp\":{\"type\":\"number\"}},\"required\":[\"city\",\"temp\"]}",
      "useResultSchema": true
    }
  ]
}`

// A host loads a tool from its function.json: the trigger is parsed and both
// schemas are checked and compiled once.
func ExampleLoadTool() {
	const file = "app/get_weather/function.json"
	fn, err := metadata.ParseFunction("get_weather", file, []byte(functionJSON))
	if err != nil {
		fmt.Println(err)
		return
	}
	tool, err := binding.LoadTool(fn, fn.ToolTriggers()[0], file)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("tool:", tool.Trigger.ToolName)
	fmt.Println("input schema:", tool.Input)
	fmt.Println("output schema:", tool.Output)
	fmt.Println("required:", tool.Required)
	fmt.Println("missing:", tool.MissingArguments(map[string]json.RawMessage{"city": json.RawMessage("null")}))
	// Output:
	// tool: get_weather
	// input schema: {"type":"object","properties":{"city":{"type":"string","description":"City name."}},"required":["city"]}
	// output schema: {"type":"object","properties":{"city":{"type":"string"},"temp":{"type":"number"}},"required":["city","temp"]}
	// required: [city]
	// missing: [city]
}

// A broken output schema names the function, the tool, the file and the rule.
func ExampleTrigger_OutputSchema() {
	b := &metadata.Binding{}
	_ = json.Unmarshal([]byte(`{"type":"mcpToolTrigger","name":"context","toolName":"get_weather","description":null,
		"outputSchema":"{\"type\":\"array\",\"items\":{\"type\":\"number\"}}"}`), b)
	fn := &metadata.Function{Name: "get_weather", Bindings: []*metadata.Binding{b}}
	trig, err := binding.ParseTrigger(fn, b, "app/get_weather/function.json")
	if err != nil {
		fmt.Println(err)
		return
	}
	_, err = trig.OutputSchema()
	fmt.Println(err)
	// Output:
	// function "get_weather", tool "get_weather" (app/get_weather/function.json): output schema must have a root "type" property with value "object"
}

// ParseSchema applies the checks in order: not empty, valid JSON, the MCP
// shape rules, then JSON Schema 2020-12 (offline).
func ExampleParseSchema() {
	for _, text := range []string{
		``,
		`{"type":"object",`,
		`[{"type":"string"}]`,
		`{"type":"Object"}`,
		`{"type":"object","required":"city"}`,
		`{"type":"object","properties":{"temp":{"type":"number","minimum":"zero"}}}`,
		`{"type":"object","properties":{"city":{"$ref":"https://example.com/city.json"}}}`,
		`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`,
	} {
		s, err := binding.ParseSchema(binding.OutputSchema, text)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Println("ok:", s)
	}
	// Output:
	// output schema: schema is empty
	// output schema is not valid JSON: unexpected end of JSON input
	// output schema must be a JSON object
	// output schema must have a root "type" property with value "object"
	// output schema "required" must be a JSON array when present
	// output schema is not a valid JSON Schema 2020-12 document: at '/properties/temp/minimum': got string, want number
	// output schema is not a valid JSON Schema 2020-12 document: "https://example.com/city.json" cannot be loaded: only references within the schema and the standard metaschemas resolve; nothing is fetched
	// ok: {"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}
}

// A worker's result envelope is decoded once, then checked against the
// output schema. A valid result gets the text copy of its structuredContent
// for older clients; under strict validation (the default) a broken one
// becomes an isError result that names the tool and the JSON pointer.
func ExampleTool_ShapeResult() {
	schema, _ := binding.ParseSchema(binding.OutputSchema, `{"type":"object","properties":{"temp":{"type":"number"}},"required":["temp"]}`)
	tool := &binding.Tool{Trigger: &binding.Trigger{ToolName: "get_temp"}, Output: schema}

	for _, structured := range []string{`{"temp":21.5}`, `{"temp":"warm"}`} {
		envelope, _ := json.Marshal(metadata.ToolResult{
			Type:              metadata.ResultTypeMultiContent,
			Content:           `[{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"}]`,
			StructuredContent: &structured,
		})
		value, _ := json.Marshal(string(envelope)) // ReturnValue is the envelope as a JSON string
		d, err := binding.DecodeReturnValue(value, true)
		if err != nil {
			fmt.Println(err)
			continue
		}
		if issue := tool.ShapeResult(d, metadata.OutputSettings{}); issue != nil {
			fmt.Println("issue:", issue.Mode)
		}
		out, _ := json.Marshal(d.Result)
		fmt.Println(string(out))
	}
	// Output:
	// {"content":[{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"},{"type":"text","text":"{\"temp\":21.5}"}],"structuredContent":{"temp":21.5}}
	// issue: strict
	// {"content":[{"type":"text","text":"Output of tool 'get_temp' does not match its output schema: at '/temp' (/properties/temp/type): got string, want number"}],"isError":true}
}

// PropertiesSchema builds the input schema from toolProperties exactly as the
// MCP extension does.
func ExamplePropertiesSchema() {
	fmt.Println(string(binding.PropertiesSchema([]metadata.ToolProperty{
		{PropertyName: "city", PropertyType: "string", Description: "City name.", IsRequired: true},
		{PropertyName: "unit", PropertyType: "string", EnumValues: []string{"C", "F"}},
		{PropertyName: "days", PropertyType: "integer", IsArray: true},
	})))
	// Output:
	// {"type":"object","properties":{"city":{"type":"string","description":"City name."},"unit":{"type":"string","enum":["C","F"],"description":""},"days":{"type":"array","items":{"type":"integer"},"description":""}},"required":["city"]}
}
