package host

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/funcmcp/funcmcp/host/internal/mcp"
)

func TestParamHeadersFromSchema(t *testing.T) {
	schema := `{"type":"object","properties":{
		"region":{"type":"string","x-mcp-header":"Region"},
		"query":{"type":"string"},
		"where":{"type":"object","properties":{"zone":{"type":"string","x-mcp-header":"Zone"}}},
		"list":{"type":"array","items":{"type":"object","properties":{"no":{"type":"string","x-mcp-header":"No"}}}},
		"empty":{"type":"string","x-mcp-header":""}},
		"allOf":[{"properties":{"hidden":{"type":"string","x-mcp-header":"Hidden"}}}],
		"x-mcp-header":"Root"}`
	assert.Equal(t, []mcp.ParamHeader{
		{Name: "Region", Path: []string{"region"}},
		{Name: "Zone", Path: []string{"where", "zone"}},
	}, paramHeaders(json.RawMessage(schema)), "only properties reachable through properties alone")
	assert.Nil(t, paramHeaders(json.RawMessage(`{"type":"object"}`)))
}
