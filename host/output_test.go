package host

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/binding"
	"github.com/funcmcp/funcmcp/host/internal/mcp"
	"github.com/funcmcp/funcmcp/metadata"
)

// envelopeWorker answers every invocation of a function with a fixed
// call_tool_result envelope, as a worker in any language (which checks
// nothing) would.
func envelopeWorker(t *testing.T, replies map[string]metadata.ToolResult) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		env, ok := replies[strings.TrimPrefix(r.URL.Path, "/")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		inner, _ := json.Marshal(env)
		rv, _ := json.Marshal(string(inner))
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(metadata.InvocationResponse{Outputs: map[string]json.RawMessage{}, Logs: []string{}, ReturnValue: rv})
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func callToolResultEnvelope(t *testing.T, res metadata.CallToolResult, checked string) metadata.ToolResult {
	t.Helper()
	data, err := json.Marshal(res)
	require.NoError(t, err)
	env := metadata.ToolResult{Type: metadata.ResultTypeCallToolResult, Content: string(data), Checked: checked}
	if len(res.StructuredContent) > 0 {
		s := string(res.StructuredContent)
		env.StructuredContent = &s
	}
	return env
}

// TestOutputRulesOfFunctionJSON shows funchost applying what a tool's
// function.json says about its results (contentKinds, outputValidation,
// textCopy) to a worker that checks nothing, and trusting a worker's output
// check only when it is the digest of this schema and these bytes.
func TestOutputRulesOfFunctionJSON(t *testing.T) {
	const countSchema = `{"type":"object","properties":{"count":{"type":"integer"}},"required":["count"]}`
	image := json.RawMessage(`{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"}`)
	caption := metadata.TextContent("A chart.")
	bad := json.RawMessage(`{"count":"three"}`)
	good := json.RawMessage(`{"count":3}`)
	schema, err := binding.ParseSchema(binding.OutputSchema, countSchema)
	require.NoError(t, err)

	root := t.TempDir()
	writeFile(t, root, HostFile, `{"version":"2.0"}`)
	tools := map[string]*metadata.ToolOptions{
		"chart":         {ContentKinds: []string{"image/png", "text/plain"}, Metadata: []metadata.Field{{Key: "category", Value: json.RawMessage(`"charts"`)}}},
		"chart_missing": {ContentKinds: []string{"image/png", "text/plain"}},
		"count_off":     {OutputSchema: countSchema, OutputValidation: metadata.ValidationOff},
		"count_none":    {OutputSchema: countSchema, TextCopy: metadata.TextCopyNone},
		"count_json":    {OutputSchema: countSchema},
		"count_claimed": {OutputSchema: countSchema},
		"count_forged":  {OutputSchema: countSchema},
	}
	for name, opts := range tools {
		opts.ToolName, opts.Description, opts.Properties = name, "t", []metadata.ToolProperty{}
		writeTool(t, root, name, opts)
	}
	url := envelopeWorker(t, map[string]metadata.ToolResult{
		"chart":         callToolResultEnvelope(t, metadata.CallToolResult{Content: []json.RawMessage{image, caption}}, ""),
		"chart_missing": callToolResultEnvelope(t, metadata.CallToolResult{Content: []json.RawMessage{image}}, ""),
		"count_off":     callToolResultEnvelope(t, metadata.CallToolResult{Content: []json.RawMessage{}, StructuredContent: bad}, ""),
		"count_none":    callToolResultEnvelope(t, metadata.CallToolResult{Content: []json.RawMessage{}, StructuredContent: good}, ""),
		"count_json":    callToolResultEnvelope(t, metadata.CallToolResult{Content: []json.RawMessage{}, StructuredContent: good}, ""),
		// A worker that claims it validated these very bytes against this
		// very schema is believed (the bytes break it: the claim is what
		// is tested); a claim about other bytes is not.
		"count_claimed": callToolResultEnvelope(t, metadata.CallToolResult{Content: []json.RawMessage{}, StructuredContent: bad}, schema.Digest(bad)),
		"count_forged":  callToolResultEnvelope(t, metadata.CallToolResult{Content: []json.RawMessage{}, StructuredContent: bad}, schema.Digest(good)),
	})
	h, logs := newTestHost(t, root, url, nil)

	var list []struct {
		Name string          `json:"name"`
		Meta json.RawMessage `json:"_meta"`
	}
	require.NoError(t, json.Unmarshal(h.cat.ToolsList("2025-06-18"), &list))
	metas := map[string]string{}
	for _, tool := range list {
		metas[tool.Name] = string(tool.Meta)
	}
	assert.JSONEq(t, `{"category":"charts","funcmcp/contentKinds":["image/png","text/plain"]}`, metas["chart"])
	assert.JSONEq(t, `{"funcmcp/contentKinds":["image/png","text/plain"]}`, metas["chart_missing"])
	assert.Empty(t, metas["count_json"])

	for _, tc := range []struct {
		tool    string
		isError bool
		content []json.RawMessage
	}{
		{"chart", false, []json.RawMessage{image, caption}},
		{"chart_missing", true, []json.RawMessage{metadata.TextContent("Output of tool 'chart_missing' does not match the declared content kinds: declared kind text/plain is missing")}},
		{"count_off", false, []json.RawMessage{metadata.TextContent(string(bad))}},
		{"count_none", false, []json.RawMessage{}},
		{"count_json", false, []json.RawMessage{metadata.TextContent(string(good))}},
		{"count_claimed", false, []json.RawMessage{metadata.TextContent(string(bad))}},
		{"count_forged", true, []json.RawMessage{metadata.TextContent("Output of tool 'count_forged' does not match its output schema: at '/count' (/properties/count/type): got string, want integer")}},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			res, err := h.callTool(context.Background(), &mcp.CallRequest{Name: tc.tool, ProtocolVersion: "2025-06-18", Arguments: map[string]json.RawMessage{}})
			require.NoError(t, err)
			assert.Equal(t, tc.isError, res.IsError, "%s", res.Content)
			got, _ := json.Marshal(res.Content)
			want, _ := json.Marshal(tc.content)
			assert.JSONEq(t, string(want), string(got))
		})
	}
	assert.Contains(t, logs.String(), "does not match the declared content kinds")
}

// TestOutputIssueIsAWarning: a result that breaks its output rules is the
// app's bug, answered with an isError result (strict) or delivered as is
// (warn), while the server goes on. funchost logs it as a warning, with
// the function, the tool and the invocation, whether it found the issue
// itself or a funcmcp worker did and said so in its reply (in either reply
// form); the worker's own line of it is not relayed once more at INFO.
func TestOutputIssueIsAWarning(t *testing.T) {
	const countSchema = `{"type":"object","properties":{"count":{"type":"integer"}},"required":["count"]}`
	problem := func(tool string) string {
		return "Output of tool '" + tool + "' does not match its output schema: at '/count' (/properties/count/type): got string, want integer"
	}
	root := t.TempDir()
	writeFile(t, root, HostFile, `{"version":"2.0"}`)
	for _, name := range []string{"by_host", "by_worker_direct", "by_worker_envelope"} {
		writeTool(t, root, name, &metadata.ToolOptions{ToolName: name, Description: "t", Properties: []metadata.ToolProperty{}, OutputSchema: countSchema})
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fn := strings.TrimPrefix(r.URL.Path, "/")
		logs := []string{"handled " + fn}
		switch fn {
		case "by_host": // a worker that checks nothing
			reply, _ := json.Marshal(metadata.InvocationResponse{Logs: logs, ReturnValue: envelopeReturn(`{"count":"three"}`)})
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(reply)
		case "by_worker_direct": // a funcmcp worker answering funchost
			logs = append(logs, problem(fn))
			reply, _ := json.Marshal(metadata.DirectReply{Logs: logs, Result: metadata.ErrorResult(problem(fn)), OutputIssue: problem(fn)})
			w.Header().Set("Content-Type", metadata.MediaTypeDirectResult)
			_, _ = w.Write(reply)
		case "by_worker_envelope": // a funcmcp worker answering as to the Functions host
			logs = append(logs, problem(fn))
			env := callToolResultEnvelope(t, *metadata.ErrorResult(problem(fn)), "")
			env.OutputIssue = problem(fn)
			inner, _ := json.Marshal(env)
			rv, _ := json.Marshal(string(inner))
			reply, _ := json.Marshal(metadata.InvocationResponse{Logs: logs, ReturnValue: rv})
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(reply)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	h, logs := newTestHost(t, root, srv.URL, nil)

	for _, tool := range []string{"by_host", "by_worker_direct", "by_worker_envelope"} {
		t.Run(tool, func(t *testing.T) {
			res, err := h.callTool(context.Background(), &mcp.CallRequest{Name: tool, ProtocolVersion: "2025-06-18", Arguments: map[string]json.RawMessage{}})
			require.NoError(t, err)
			assert.True(t, res.IsError)
			var lines []string
			for l := range strings.Lines(logs.String()) {
				if strings.Contains(l, problem(tool)) {
					lines = append(lines, l)
				}
			}
			require.Len(t, lines, 1, "the issue is logged once: %s", logs.String())
			assert.Contains(t, lines[0], `level=WARN msg="`+problem(tool)+`" function=`+tool+` tool=`+tool+` invocationId=`)
			assert.Contains(t, logs.String(), `level=INFO msg="handled `+tool+`"`, "the worker's other lines are relayed")
		})
	}
	assert.NotContains(t, logs.String(), "level=ERROR")
}
