package host

import (
	"encoding/json"
	"sort"
	"strings"

	"github.com/funcmcp/funcmcp/host/internal/mcp"
)

// ParamHeaders gives the MCP endpoint the x-mcp-header arguments of a tool,
// which it checks against the Mcp-Param-* headers of 2026-07-28 calls.
func (s toolSet) ParamHeaders(name string) []mcp.ParamHeader {
	if t := s.h.reg.lookup(name); t != nil {
		return t.paramHeaders
	}
	return nil
}

// paramHeaders finds the properties of an input schema marked
// "x-mcp-header": "<Name>" (SEP-2243) that are statically reachable from the
// root through "properties" alone, in path order.
func paramHeaders(schema json.RawMessage) []mcp.ParamHeader {
	var out []mcp.ParamHeader
	var walk func(schema json.RawMessage, path []string)
	walk = func(schema json.RawMessage, path []string) {
		var node struct {
			Properties map[string]json.RawMessage `json:"properties"`
			Header     *string                    `json:"x-mcp-header"`
		}
		if json.Unmarshal(schema, &node) != nil {
			return
		}
		if node.Header != nil && *node.Header != "" && len(path) > 0 {
			out = append(out, mcp.ParamHeader{Name: *node.Header, Path: path})
		}
		for name, prop := range node.Properties {
			walk(prop, append(path[:len(path):len(path)], name))
		}
	}
	walk(schema, nil)
	sort.Slice(out, func(i, j int) bool { return strings.Join(out[i].Path, "\x00") < strings.Join(out[j].Path, "\x00") })
	return out
}
