package host

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/binding"
	"github.com/funcmcp/funcmcp/host/internal/mcp"
	"github.com/funcmcp/funcmcp/metadata"
)

// brokenApp is an app with good tools beside broken ones.
func brokenApp(t *testing.T) string {
	root := t.TempDir()
	writeFile(t, root, HostFile, `{"version":"2.0"}`)
	writeTool(t, root, "b_good", &metadata.ToolOptions{ToolName: "zeta", Description: "Last by name.", Properties: cityProperty, OutputSchema: weatherSchema})
	writeTool(t, root, "c_good", &metadata.ToolOptions{ToolName: "Alpha", Description: "First by name.", Properties: []metadata.ToolProperty{}})
	// An output schema that is not JSON.
	writeFile(t, root, "a_broken/function.json", `{"bindings":[{"type":"mcpToolTrigger","direction":"in","name":"context","toolName":"broken_tool","description":"x","outputSchema":"{\"type\":"}]}`)
	// A duplicate tool name, differing only in case; it comes later by function name.
	writeTool(t, root, "d_dup", &metadata.ToolOptions{ToolName: "ALPHA", Description: "Duplicate."})
	// A function.json that is not JSON.
	writeFile(t, root, "e_notjson/function.json", `{"bindings":`)
	// A function that is not a tool.
	writeFile(t, root, "f_http/function.json", `{"bindings":[{"type":"httpTrigger","direction":"in","name":"req"},{"type":"http","direction":"out","name":"res"}]}`)
	// Root type is not object.
	writeFile(t, root, "g_array/function.json", `{"bindings":[{"type":"mcpToolTrigger","direction":"in","name":"context","toolName":"array_tool","description":"x","outputSchema":"{\"type\":\"array\"}"}]}`)
	return root
}

func TestLoadServesGoodToolsBesideBrokenOnes(t *testing.T) {
	root := brokenApp(t)
	out := &syncBuffer{}
	h, logs := newTestHost(t, root, "http://127.0.0.1:1", &Options{Output: out})

	st := h.Status()
	assert.Equal(t, StateRunning, st.State)
	assert.Equal(t, 2, st.ToolsServed)
	assert.Equal(t, 4, st.ToolsFailed)

	file := func(fn string) string { return filepath.Join(root, fn, metadata.FunctionFile) }
	wantErrs := []string{
		`function "a_broken", tool "broken_tool" (` + file("a_broken") + `): output schema is not valid JSON: unexpected end of JSON input`,
		`function "d_dup", tool "ALPHA" (` + file("d_dup") + `): tool name "ALPHA" is already registered by function "c_good" (tool names are case-insensitive)`,
		`function "e_notjson" (` + file("e_notjson") + `): parsing: unexpected end of JSON input`,
		`function "g_array", tool "array_tool" (` + file("g_array") + `): output schema must have a root "type" property with value "object"`,
	}
	assert.Equal(t, wantErrs, st.Errors)

	// One log line per failure, naming function, tool, file and reason.
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	require.Len(t, lines, 4, logs.String())
	assert.Contains(t, logs.String(), `level=ERROR msg="tool not served: function \"a_broken\", tool \"broken_tool\" (`+file("a_broken")+`): output schema is not valid JSON: unexpected end of JSON input" function=a_broken tool=broken_tool file=`+file("a_broken")+` reason="output schema is not valid JSON: unexpected end of JSON input"`)
	assert.Contains(t, logs.String(), `msg="function not loaded: function \"e_notjson\"`)

	// Typed errors stay reachable.
	var te *binding.ToolError
	require.True(t, errors.As(h.cat.Failures()[0], &te))
	assert.Equal(t, "broken_tool", te.Tool)
	var se *binding.SyntaxError
	assert.True(t, errors.As(h.cat.Failures()[0], &se))

	// tools/list holds the good tools only, sorted by name.
	var list []struct{ Name string }
	require.NoError(t, json.Unmarshal(h.cat.ToolsList("2025-06-18"), &list))
	assert.Equal(t, []struct{ Name string }{{"Alpha"}, {"zeta"}}, list)

	// The functions in the status.
	assert.Equal(t, []FunctionStatus{
		{Name: "a_broken", Trigger: "mcpToolTrigger", Tool: "broken_tool", Error: wantErrs[0]},
		{Name: "b_good", Trigger: "mcpToolTrigger", Tool: "zeta", Served: true},
		{Name: "c_good", Trigger: "mcpToolTrigger", Tool: "Alpha", Served: true},
		{Name: "d_dup", Trigger: "mcpToolTrigger", Tool: "ALPHA", Error: wantErrs[1]},
		{Name: "e_notjson", Error: wantErrs[2]},
		{Name: "f_http", Trigger: "httpTrigger"},
		{Name: "g_array", Trigger: "mcpToolTrigger", Tool: "array_tool", Error: wantErrs[3]},
	}, st.Functions)

	// The console lines Run prints before it starts anything.
	h.board.PrintFunctions()
	goldenCompare(t, "console_broken.golden", []byte(strings.ReplaceAll(out.String(), root, "<root>")))
}

func TestStatusEndpoint(t *testing.T) {
	root := brokenApp(t)
	h, _ := newTestHost(t, root, "http://127.0.0.1:1", nil)
	srv := httptest.NewServer(h.Handler())
	defer srv.Close()

	resp, err := getWithKey(srv.URL+StatusPath, testKey)
	require.NoError(t, err)
	defer resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	var st map[string]json.RawMessage
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&st))
	assert.JSONEq(t, `"Running"`, string(st["state"]))
	assert.JSONEq(t, `2`, string(st["toolsServed"]))
	assert.JSONEq(t, `4`, string(st["toolsFailed"]))
	assert.Contains(t, string(st["errors"]), "output schema is not valid JSON")

	resp2, err := http.Get(srv.URL + "/nope")
	require.NoError(t, err)
	resp2.Body.Close()
	assert.Equal(t, http.StatusNotFound, resp2.StatusCode)
}

func TestToolsListJSON(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, HostFile, `{"version":"2.0"}`)
	writeTool(t, root, "get_weather", &metadata.ToolOptions{
		ToolName: "get_weather", Title: "Weather", Description: "Weather <now> & later.", Properties: cityProperty,
		OutputSchema: `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"temp":{"type":"number","description":"°C"}},"additionalProperties":false}`,
		Metadata:     []metadata.Field{{Key: "ui", Value: json.RawMessage(`{"hint":"x"}`)}},
	})
	writeTool(t, root, "worker_schema", &metadata.ToolOptions{ToolName: "worker_schema", Description: "",
		InputSchema: `{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`})
	writeFile(t, root, "null_desc/function.json", `{"bindings":[{"type":"mcpToolTrigger","direction":"in","name":"context","toolName":"null_desc","description":null}]}`)
	h, _ := newTestHost(t, root, "http://127.0.0.1:1", nil)

	var pretty bytes.Buffer
	require.NoError(t, json.Indent(&pretty, h.mcpServer().ToolsList(mcp.LatestVersion), "", "  "))
	goldenCompare(t, "tools_list.golden", append(pretty.Bytes(), '\n'))
	// The same bytes every time: encoded once.
	assert.Same(t, &h.mcpServer().ToolsList(mcp.LatestVersion)[0], &h.mcpServer().ToolsList(mcp.LatestVersion)[0])
}

// TestDisabledFunctions: a function that function.json's "disabled" or the
// app setting AzureWebJobs.<name>.Disabled disables is left out, as the
// Functions host leaves it out: not listed, not callable, not a failure,
// and named with the reason on the console and the status page.
func TestDisabledFunctions(t *testing.T) {
	fw := newFakeWorker(t)
	root := weatherApp(t, `{"version":"2.0"}`)
	setKey := func(function string, value any) {
		file := filepath.Join(root, function, metadata.FunctionFile)
		data, err := os.ReadFile(file)
		require.NoError(t, err)
		var doc map[string]any
		require.NoError(t, json.Unmarshal(data, &doc))
		doc["disabled"] = value
		require.NoError(t, os.WriteFile(file, mustJSON(doc), 0o644))
	}
	setKey("get_weather", true)
	setKey("fail500", "SLOW_OFF")
	writeFile(t, root, LocalSettingsFile, `{"Values":{"AzureWebJobs.bad_weather.Disabled":"1","SLOW_OFF":"true"}}`)
	out := &syncBuffer{}
	h, _ := newTestHost(t, root, fw.srv.URL, &Options{Output: out})
	h.board.PrintFunctions()
	srv := httptest.NewServer(h.Handler())
	defer srv.Close()

	for _, line := range []string{
		`  get_weather: mcpToolTrigger (disabled: function.json says "disabled": true)`,
		`  bad_weather: mcpToolTrigger (disabled: the app setting AzureWebJobs.bad_weather.Disabled is "1")`,
		`  fail500: mcpToolTrigger (disabled: function.json says "disabled": "SLOW_OFF", and that app setting is "true")`,
	} {
		assert.Contains(t, out.String(), line+"\n")
	}
	_, body := rpc(t, srv.URL, "2025-06-18", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	for _, name := range []string{"get_weather", "bad_weather", "fail500"} {
		assert.NotContains(t, string(body), `"name":"`+name+`"`)
	}
	assert.Contains(t, string(body), `"name":"slow"`)
	_, body = rpc(t, srv.URL, "2025-06-18", callBody(2, "get_weather", `{"city":"Oslo"}`))
	assert.JSONEq(t, `{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"Unknown tool: 'get_weather'"}}`, string(body))
	assert.Empty(t, fw.requests())

	st := h.Status()
	assert.Zero(t, st.ToolsFailed, "a disabled function is not a failure")
	assert.Equal(t, 4, st.ToolsServed, "seven tools, three disabled")
	for _, f := range st.Functions {
		if f.Name == "get_weather" {
			assert.Equal(t, `function.json says "disabled": true`, f.Disabled)
			assert.False(t, f.Served)
		}
	}
}
