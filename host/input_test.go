package host

import (
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/metadata"
)

// TestInputValidation shows funchost checking a call's arguments against
// the tool's input schema before it forwards the call, as the worker does
// before its handler: inputValidation from function.json, else host.json,
// else strict.
func TestInputValidation(t *testing.T) {
	const message = "Input of tool 'get_weather' does not match its input schema: at '/city' (/properties/city/type): got number, want string"
	tests := []struct {
		name, hostJSON string
		tool           metadata.OutputValidation // the tool's own setting
		version        string
		wantError      bool // JSON-RPC -32602
		wantIsError    bool // an isError result
		forwarded      bool
		log            string
	}{
		{"strict before 2025-11-25: -32602", `{"version":"2.0"}`, "", "2025-06-18", true, false, false, message},
		{"strict from 2025-11-25: isError (SEP-1303)", `{"version":"2.0"}`, "", "2025-11-25", false, true, false, message},
		{"strict at 2026-07-28 too", `{"version":"2.0"}`, "", "2026-07-28", false, true, false, message},
		{"warn from host.json: logged and forwarded", `{"version":"2.0","extensions":{"mcp":{"inputValidation":"warn"}}}`, "", "2025-06-18", false, false, true,
			message + " (called anyway: inputValidation is warn)"},
		{"off from function.json over host.json", `{"version":"2.0","extensions":{"mcp":{"inputValidation":"strict"}}}`, metadata.ValidationOff, "2025-06-18", false, false, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fw := newFakeWorker(t)
			root := t.TempDir()
			writeFile(t, root, HostFile, tt.hostJSON)
			writeTool(t, root, "get_weather", &metadata.ToolOptions{ToolName: "get_weather", Description: "Weather.", Properties: cityProperty,
				OutputSchema: weatherSchema, InputValidation: tt.tool})
			h, logs := newTestHost(t, root, fw.srv.URL, nil)
			srv := httptest.NewServer(h.Handler())
			defer srv.Close()

			reply := postMCP(t, srv.URL, tt.version, "tools/call", "get_weather", `{"name":"get_weather","arguments":{"city":5}}`)
			switch {
			case tt.wantError:
				assert.JSONEq(t, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":`+string(mustJSON(message))+`}}`, string(reply))
			case tt.wantIsError:
				res := callResult(t, reply)
				assert.True(t, res.IsError)
				require.Len(t, res.Content, 1)
				assert.JSONEq(t, string(metadata.TextContent(message)), string(res.Content[0]))
			default:
				assert.False(t, callResult(t, reply).IsError, "%s", reply)
			}
			assert.Equal(t, tt.forwarded, len(fw.requests()) == 1, "forwarded to the worker")
			if tt.log != "" {
				assert.Contains(t, logs.String(), tt.log)
			} else {
				assert.NotContains(t, logs.String(), "does not match its input schema")
			}
		})
	}
}
