package bench

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/tests/bench/internal/sdkbaseline"
)

// toolAnswer is what a tools/call answered: a JSON-RPC error, or a tool
// result.
type toolAnswer struct {
	Error  *json.RawMessage `json:"error"`
	Result struct {
		IsError           bool            `json:"isError"`
		StructuredContent json.RawMessage `json:"structuredContent"`
	} `json:"result"`
}

// callTool posts body to endpoint (statelessly, as the cold start does)
// and decodes the answer.
func callTool(t *testing.T, endpoint, body string) toolAnswer {
	t.Helper()
	client := newClient()
	defer client.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	h, err := mcpHeaders(client, endpoint)
	require.NoError(t, err)
	status, data, _, err := post(ctx, client, endpoint, []byte(body), h)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, status, "%s", data)
	var a toolAnswer
	require.NoError(t, json.Unmarshal(jsonPayload(data), &a), "%s", data)
	return a
}

// refused reports whether an answer is a JSON-RPC error or a tool error.
func (a toolAnswer) refused() bool { return a.Error != nil || a.Result.IsError }

// TestPeersDoTheSameWork checks that every server of the peers table does
// what funchost does for the benchmarks' tools/call: the same
// structuredContent for the same arguments, arguments that break the input
// schema refused, and (for the peer servers, which are given the schemas)
// an output that breaks the output schema refused: input and output
// validation are on in each.
func TestPeersDoTheSameWork(t *testing.T) {
	servers(t)
	endpoints := map[string]string{
		"funcmcp":       shared.host.endpoint(),
		"sdk-stateless": shared.sl.endpoint(),
		"sdk-stateful":  shared.sf.endpoint(),
	}
	for _, p := range shared.peers {
		endpoints[p.name] = p.endpoint
	}
	require.Contains(t, endpoints, colMCPGo)
	want := callTool(t, endpoints["funcmcp"], weatherCall)
	require.False(t, want.refused())
	require.NotEmpty(t, want.Result.StructuredContent)
	badInput := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"get_weather","arguments":{"city":"Oslo","days":"seven"}}}`
	for name, ep := range endpoints {
		t.Run(name, func(t *testing.T) {
			got := callTool(t, ep, weatherCall)
			assert.False(t, got.refused())
			assert.JSONEq(t, string(want.Result.StructuredContent), string(got.Result.StructuredContent))
			assert.True(t, callTool(t, ep, badInput).refused(), "arguments that break the input schema are refused")
		})
	}

	// get_weather with schemas the call cannot meet, a required property
	// it never has: in its arguments (input) or in the forecast (output).
	// The handler ignores the one and cannot add the other, so only the
	// server's validation refuses the call.
	strict := func(schema json.RawMessage) json.RawMessage {
		var m map[string]any
		require.NoError(t, json.Unmarshal(schema, &m))
		req, _ := m["required"].([]any)
		m["required"] = append(req, "station")
		props, _ := m["properties"].(map[string]any)
		if props == nil {
			props = map[string]any{}
		}
		props["station"] = map[string]any{"type": "string"}
		m["properties"] = props
		data, err := json.Marshal(m)
		require.NoError(t, err)
		return data
	}
	strictIn, strictOut := shared.weather, shared.weather
	strictIn.InputSchema = strict(shared.weather.InputSchema)
	strictOut.OutputSchema = strict(shared.weather.OutputSchema)
	for _, s := range peerServers {
		for what, tool := range map[string]sdkbaseline.Tool{"input": strictIn, "output": strictOut} {
			t.Run(what+" schema/"+s.name, func(t *testing.T) {
				file, err := writeJSON("weather-strict-"+what+".json", []sdkbaseline.Tool{tool})
				require.NoError(t, err)
				p, err := startPeer(s, file)
				require.NoError(t, err)
				defer p.stop()
				got := callTool(t, p.endpoint, weatherCall)
				assert.True(t, got.refused(), "a call that breaks the %s schema is refused: %s", what, got.Result.StructuredContent)
			})
		}
	}
}
