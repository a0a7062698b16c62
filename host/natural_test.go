package host

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/binding"
	"github.com/funcmcp/funcmcp/metadata"
)

// The natural output schema of the "primes" tool below and its projection,
// as function.json carries them.
const (
	primesNatural   = `{"type":"array","items":{"$ref":"#/$defs/prime"},"$defs":{"prime":{"type":"integer","minimum":2}}}`
	primesProjected = `{"type":"object","properties":{"primes":{"type":"array","items":{"$ref":"#/properties/primes/$defs/prime"},"$defs":{"prime":{"type":"integer","minimum":2}}}},"required":["primes"]}`
)

// TestNaturalOutputSchemaPerRevision serves one tool with an array output
// to every revision: legacy clients see the object projection and the
// wrapped value the worker returns, 2026-07-28 clients the natural schema
// and value.
func TestNaturalOutputSchemaPerRevision(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, HostFile, `{"version":"2.0"}`)
	writeTool(t, root, "primes", &metadata.ToolOptions{
		ToolName: "primes", Description: "Primes.", Properties: []metadata.ToolProperty{},
		OutputSchema: primesProjected, NaturalOutputSchema: primesNatural,
	})
	worker := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(metadata.InvocationResponse{Outputs: map[string]json.RawMessage{}, ReturnValue: envelopeReturn(`{"primes":[2,3,5]}`)})
	}))
	t.Cleanup(worker.Close)
	h, logs := newTestHost(t, root, worker.URL, nil)
	srv := httptest.NewServer(h.Handler())
	t.Cleanup(srv.Close)

	natural, err := binding.ParseNaturalSchema(primesNatural)
	require.NoError(t, err)
	projected, err := binding.ParseSchema(binding.OutputSchema, primesProjected)
	require.NoError(t, err)

	for _, version := range []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			modern := version == "2026-07-28"
			list := postMCP(t, srv.URL, version, "tools/list", "", `{}`)
			var tools struct {
				Result struct {
					Tools []struct {
						OutputSchema json.RawMessage `json:"outputSchema"`
					} `json:"tools"`
				} `json:"result"`
			}
			require.NoError(t, json.Unmarshal(list, &tools), string(list))
			require.Len(t, tools.Result.Tools, 1)
			call := callResult(t, postMCP(t, srv.URL, version, "tools/call", "primes", `{"name":"primes"}`))
			require.False(t, call.IsError, "%s", call.Content)
			require.Len(t, call.Content, 1)
			var text struct{ Text string }
			require.NoError(t, json.Unmarshal(call.Content[0], &text))

			schema, value := projected, `{"primes":[2,3,5]}`
			wantSchema := primesProjected
			if modern {
				schema, value, wantSchema = natural, `[2,3,5]`, primesNatural
			}
			assert.Equal(t, wantSchema, string(tools.Result.Tools[0].OutputSchema))
			assert.JSONEq(t, value, string(call.StructuredContent))
			assert.JSONEq(t, value, text.Text, "the text copy mirrors what the client gets")
			_, err := schema.ValidateJSON(call.StructuredContent)
			assert.NoError(t, err, "structuredContent validates against the schema this client was shown")
		})
	}
	assert.NotContains(t, logs.String(), "level=ERROR")
}

// postMCP sends one request the way a client of version does (the modern
// envelope and headers for 2026-07-28) and returns the JSON-RPC reply.
func postMCP(t *testing.T, url, version, method, name, params string) []byte {
	t.Helper()
	if version == "2026-07-28" {
		params = strings.TrimSuffix(params, "}")
		if params != "{" {
			params += ","
		}
		params += `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}`
	}
	body := `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":` + params + `}`
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, url+MCPPath, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("MCP-Protocol-Version", version)
	req.Header.Set("Mcp-Method", method)
	if name != "" {
		req.Header.Set("Mcp-Name", name)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(data))
	return data
}
