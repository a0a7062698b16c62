package bench

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

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
	// A server of its own tools (the sample serving itself) cannot be
	// given these schemas: it is package serve, funchost's front in one
	// process; its input check is the bad-input call above, and
	// funcmcptest's TestOfficialClientSeesWhatAClientSees shows that front
	// making a result that breaks the output schema an error result.
	for _, s := range peerServers {
		if s.ownTools {
			continue
		}
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

// TestPeersTableReadsRounds: a ratio of the peers table is the run's ratio
// followed by the minimum, median and maximum of the rounds' ratios, a
// server not measured (the one-process slot) reads "–", and a goal is met
// on the run's ratio.
func TestPeersTableReadsRounds(t *testing.T) {
	r := peerRow{what: "tools/call throughput, c=16", unit: "calls/s",
		value: map[string]float64{colFunchost: 300, colSDK: 100, colMCPGo: 200},
		rounds: []map[string]float64{
			{colFunchost: 3, colSDK: 1, colMCPGo: 2},
			{colFunchost: 2, colSDK: 1, colMCPGo: 4},
			{colFunchost: 4, colSDK: 1, colMCPGo: 2},
		},
		goals: []peerGoal{{colFunchost, colSDK, true, 2.5}, {colFunchost, colMCPGo, false, 1.2}, {colOneProcess, colMCPGo, true, 1.3}}}
	assert.Equal(t, "3× (2 / 3 / 4)", ratioCell(r, colFunchost, colSDK))
	assert.Equal(t, "1.5× (0.5 / 1.5 / 2)", ratioCell(r, colFunchost, colMCPGo))
	assert.Equal(t, "–", ratioCell(r, colOneProcess, colMCPGo))
	assert.Equal(t, "funchost ≥ 2.5× SDK: yes; funchost ≤ 1.2× mcp-go: no; one process ≥ 1.3× mcp-go: –", goalsCell(r))

	peerTable.mu.Lock()
	saved := peerTable.rows
	peerTable.rows = []peerRow{r}
	peerTable.mu.Unlock()
	defer func() {
		peerTable.mu.Lock()
		peerTable.rows = saved
		peerTable.mu.Unlock()
	}()
	var out strings.Builder
	printPeers(&out)
	assert.Contains(t, out.String(), "| funchost | SDK | mcp-go | one process |")
	assert.Contains(t, out.String(), "| tools/call throughput, c=16 | calls/s | 300 | 100 | 200 | – | 3× (2 / 3 / 4) | 1.5× (0.5 / 1.5 / 2) | – | – |")
}

// TestSwitchesCountSleeps: a thread of this process that sleeps is
// switched out each time, and the count of the process's switches, every
// thread's, says so.
func TestSwitchesCountSleeps(t *testing.T) {
	before := switches(os.Getpid())
	for range 20 {
		time.Sleep(time.Millisecond)
	}
	after := switches(os.Getpid())
	assert.GreaterOrEqual(t, after-before, int64(20), "20 sleeps, each a switch at least")
	assert.Zero(t, switches(-1), "no such process")
}
