package main

import (
	"context"

	"github.com/funcmcp/funcmcp/worker"
)

// jsonSchema202012 is the input schema the json-schema-2020-12 scenario
// expects to find, keyword for keyword, in tools/list.
const jsonSchema202012 = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "$defs": {
    "address": {
      "$anchor": "addressDef",
      "type": "object",
      "properties": {"street": {"type": "string"}, "city": {"type": "string"}}
    }
  },
  "properties": {
    "name": {"type": "string"},
    "address": {"$ref": "#/$defs/address"},
    "contactMethod": {"type": "string", "enum": ["phone", "email"]},
    "phone": {"type": "string"},
    "email": {"type": "string"}
  },
  "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
  "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
  "then": {"required": ["phone"]},
  "else": {"required": ["email"]},
  "additionalProperties": false
}`

// registerSchemaTools adds json_schema_2020_12_tool (json-schema-2020-12).
func registerSchemaTools(app *worker.App) {
	app.ConfigureMcpTool("json_schema_2020_12_tool").
		WithDescription("Tool with JSON Schema 2020-12 features").
		WithInputSchema(jsonSchema202012).
		Handle(func(context.Context, *worker.ToolContext) (*worker.Result, error) {
			return worker.TextResult("ok"), nil
		})
}
