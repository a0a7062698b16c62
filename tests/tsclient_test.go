package tests

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tsReport is what tests/node/ts-client.mjs prints.
type tsReport struct {
	Connected       bool   `json:"connected"`
	ProtocolVersion string `json:"protocolVersion"`
	ServerInfo      struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	} `json:"serverInfo"`
	Instructions string `json:"instructions"`
	Tools        []struct {
		Name         string          `json:"name"`
		Title        string          `json:"title"`
		Description  string          `json:"description"`
		InputSchema  json.RawMessage `json:"inputSchema"`
		OutputSchema json.RawMessage `json:"outputSchema"`
	} `json:"tools"`
	ListError *tsError `json:"listError"`
	Calls     []struct {
		Name   string          `json:"name"`
		OK     bool            `json:"ok"`
		Result json.RawMessage `json:"result"`
		Error  *tsError        `json:"error"`
	} `json:"calls"`
}

type tsError struct {
	Code    *int   `json:"code"`
	Name    string `json:"name"`
	Message string `json:"message"`
}

type tsCall struct {
	Name      string         `json:"name"`
	Arguments map[string]any `json:"arguments"`
}

// The TypeScript clients ts-client.mjs drives, and the npm package of each.
const (
	tsClientV1     = "v1"      // @modelcontextprotocol/sdk 1.x
	tsClientV2Auto = "v2-auto" // @modelcontextprotocol/client 2.x, versionNegotiation auto
)

var tsClientPackages = map[string]string{
	tsClientV1:     "@modelcontextprotocol/sdk",
	tsClientV2Auto: "@modelcontextprotocol/client",
}

// runTSClient runs ts-client.mjs with one of the clients against an endpoint
// and decodes its report.
func runTSClient(t *testing.T, client, endpoint string, calls []tsCall) *tsReport {
	t.Helper()
	node, dir := nodeBin(t, tsClientPackages[client])
	callsJSON, err := json.Marshal(calls)
	require.NoError(t, err)
	code, stdout, stderr := runNode(t, node, dir, "ts-client.mjs", endpoint, string(callsJSON), client)
	var report tsReport
	require.NoError(t, json.Unmarshal([]byte(stdout), &report), "exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	require.Equal(t, 0, code, "ts-client.mjs failed: listError %+v\nstderr:\n%s", report.ListError, stderr)
	return &report
}

// TestTypeScriptSDKClient runs the official TypeScript SDK client (1.32.2)
// against the sample. That client validates structuredContent against the
// advertised outputSchema itself and rejects the whole tools/list if any
// schema is not a root object, so a clean run is a real interop check.
func TestTypeScriptSDKClient(t *testing.T) {
	t.Parallel()
	testTSClient(t, tsClientV1, []string{"2025-06-18", "2025-11-25"}, false)
}

// TestTypeScriptSDKClientServe is TestTypeScriptSDKClient against the
// sample serving itself in one process (`handler serve`).
func TestTypeScriptSDKClientServe(t *testing.T) {
	t.Parallel()
	testTSClient(t, tsClientV1, []string{"2025-06-18", "2025-11-25"}, true)
}

// TestTypeScriptV2Client runs the official TypeScript client 2.4.0 with
// versionNegotiation auto: it probes server/discover, must end on 2026-07-28,
// and then sees natural output schemas (arrays for the list tools) and
// validates every natural structuredContent against them with Ajv 2020-12.
func TestTypeScriptV2Client(t *testing.T) {
	t.Parallel()
	testTSClient(t, tsClientV2Auto, []string{"2026-07-28"}, false)
}

// TestTypeScriptV2ClientServe is TestTypeScriptV2Client against the sample
// serving itself in one process (`handler serve`).
func TestTypeScriptV2ClientServe(t *testing.T) {
	t.Parallel()
	testTSClient(t, tsClientV2Auto, []string{"2026-07-28"}, true)
}

// testTSClient calls every sample tool and a few bad calls with a
// TypeScript client, which must negotiate one of versions; the sample is
// served by funchost, or by itself in one process (serve).
func testTSClient(t *testing.T, client string, versions []string, serve bool) {
	nodeBin(t, tsClientPackages[client]) // fail fast, before starting anything, when the clients are not installed
	app := sample(t)
	h := startSampleHost(t, app, serve)
	declared := readOutputSchemas(t, app)
	modern := versions[0] == "2026-07-28"
	if modern {
		declared = readNaturalOutputSchemas(t, app)
	}

	var calls []tsCall
	for _, st := range sampleTools {
		calls = append(calls, tsCall{Name: st.name, Arguments: st.args})
	}
	bad := []struct {
		call     tsCall
		wantCode int    // JSON-RPC error code, 0 for an isError result
		want     string // in the error message or the result's content
	}{
		{call: tsCall{Name: "no_such_tool", Arguments: map[string]any{}}, wantCode: -32602, want: "no_such_tool"},
		{call: tsCall{Name: "mortgage_payment", Arguments: map[string]any{"principal": 1000, "annual_rate_percent": 5, "years": 0}}, want: "years must be between 1 and 50"},
		{call: tsCall{Name: "bar_chart", Arguments: map[string]any{"values": []any{1, -1}}}, want: "values[1] must be a non-negative number"},
	}
	for _, b := range bad {
		calls = append(calls, b.call)
	}

	report := runTSClient(t, client, h.endpoint, calls)
	require.True(t, report.Connected)
	assert.Nil(t, report.ListError)
	assert.Contains(t, versions, report.ProtocolVersion, "a revision with output schemas is negotiated")
	assert.Equal(t, "funcmcp sample", report.ServerInfo.Name)
	assert.NotEmpty(t, report.Instructions)

	require.Len(t, report.Tools, len(sampleTools))
	for _, tool := range report.Tools {
		if schema, ok := declared[tool.Name]; ok {
			assert.JSONEq(t, schema, string(tool.OutputSchema), tool.Name)
		} else {
			assert.Empty(t, tool.OutputSchema, tool.Name)
		}
		assert.NotEmpty(t, tool.Description, tool.Name)
		if tool.Name == "fibonacci" {
			t.Logf("TypeScript client %s at %s: fibonacci outputSchema %s", client, report.ProtocolVersion, tool.OutputSchema)
		}
	}

	require.Len(t, report.Calls, len(calls))
	for i, st := range sampleTools {
		c := report.Calls[i]
		t.Run(st.name, func(t *testing.T) {
			require.Equal(t, st.name, c.Name)
			if st.refused != "" {
				require.False(t, c.OK, "want a JSON-RPC error, got result %s", c.Result)
				require.NotNil(t, c.Error.Code, "%+v", c.Error)
				assert.Equal(t, -32600, *c.Error.Code)
				assert.Contains(t, c.Error.Message, st.refused)
				return
			}
			require.True(t, c.OK, "the TypeScript client rejected the result: %+v", c.Error)
			checkSampleResult(t, st, declared[st.name], c.Result)
			if st.outputField != "" {
				var res struct{ StructuredContent json.RawMessage }
				require.NoError(t, json.Unmarshal(c.Result, &res))
				assert.Equal(t, modern, res.StructuredContent[0] == '[', "%s: natural array for 2026-07-28 only: %s", st.name, res.StructuredContent)
				if st.name == "fibonacci" {
					t.Logf("TypeScript client %s at %s: fibonacci structuredContent %s", client, report.ProtocolVersion, res.StructuredContent)
				}
			}
		})
	}
	for i, b := range bad {
		c := report.Calls[len(sampleTools)+i]
		t.Run("bad "+b.call.Name, func(t *testing.T) {
			require.Equal(t, b.call.Name, c.Name)
			if b.wantCode != 0 {
				require.False(t, c.OK, "want JSON-RPC error %d, got result %s", b.wantCode, c.Result)
				require.NotNil(t, c.Error.Code, "%+v", c.Error)
				assert.Equal(t, b.wantCode, *c.Error.Code)
				assert.Contains(t, c.Error.Message, b.want)
				return
			}
			require.True(t, c.OK, "an isError result passes the client: %+v", c.Error)
			var res struct {
				IsError bool            `json:"isError"`
				Content json.RawMessage `json:"content"`
			}
			require.NoError(t, json.Unmarshal(c.Result, &res))
			assert.True(t, res.IsError, "%s", c.Result)
			assert.Contains(t, string(res.Content), b.want)
		})
	}
}
