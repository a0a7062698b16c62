package main

import (
	"context"
	"fmt"

	"github.com/funcmcp/funcmcp/worker"
)

// customHeadersSchema mirrors region and priority into Mcp-Param-Region and
// Mcp-Param-Priority headers (x-mcp-header, SEP-2243), which the
// http-custom-header-server-validation scenario sends right and wrong.
const customHeadersSchema = `{
  "type": "object",
  "properties": {
    "region": {"type": "string", "description": "Plain ASCII string value", "x-mcp-header": "Region"},
    "priority": {"type": "integer", "description": "Integer value", "x-mcp-header": "Priority"},
    "query": {"type": "string", "description": "No x-mcp-header annotation"}
  },
  "required": ["region", "query"]
}`

// registerHeaderTools adds test_custom_headers.
func registerHeaderTools(app *worker.App) {
	app.ConfigureMcpTool("test_custom_headers").
		WithDescription("A tool whose region and priority arguments travel in Mcp-Param-* headers too").
		WithInputSchema(customHeadersSchema).
		Handle(func(_ context.Context, tc *worker.ToolContext) (*worker.Result, error) {
			region, _ := tc.Argument("region")
			return worker.TextResult(fmt.Sprintf("region %s", region)), nil
		})
}
