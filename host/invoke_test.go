package host

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/host/internal/mcp"
	"github.com/funcmcp/funcmcp/internal/testutil"
	"github.com/funcmcp/funcmcp/metadata"
)

func TestWorkerFailures(t *testing.T) {
	fw := newFakeWorker(t)
	root := weatherApp(t, `{"version":"2.0"}`)
	tests := []struct {
		name      string
		tool      string
		workerURL string // "" → the fake worker
		wantLog   string
	}{
		{"HTTP 500", "fail500", "", `invoking tool 'fail500' failed: POST /fail500: the worker answered 500 Internal Server Error (body: \"boom\")`},
		{"not JSON", "badjson", "", `invoking tool 'badjson' failed: POST /badjson: the answer is not a JSON invocation response: invalid character 'h' in literal true (expecting 'r') (body: \"this is not json\")`},
		{"timeout", "slow", "", `invoking tool 'slow' failed: POST /slow: the worker did not answer within 200ms`},
		{"connection closed mid-call", "crash", "", `invoking tool 'crash' failed: POST /crash: `},
		{"bad result envelope", "badenvelope", "", `invoking tool 'badenvelope' failed: decoding the tool result: `},
		{"connection refused", "get_weather", testutil.ReservePort(t).URL(), `connect: connection refused`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			url := tc.workerURL
			if url == "" {
				url = fw.srv.URL
			}
			h, logs := newTestHost(t, root, url, &Options{CallTimeout: 200 * time.Millisecond})
			res, err := h.callTool(context.Background(), &mcp.CallRequest{Name: tc.tool, Arguments: map[string]json.RawMessage{"city": json.RawMessage(`"Oslo"`)}})
			require.NoError(t, err)
			assert.True(t, res.IsError)
			require.Len(t, res.Content, 1)
			assert.JSONEq(t, string(metadata.TextContent("An error occurred invoking '"+tc.tool+"'.")), string(res.Content[0]))
			assert.Contains(t, logs.String(), tc.wantLog)
			assert.Contains(t, logs.String(), "level=ERROR")
			assert.Contains(t, logs.String(), "invocationId=")
			assert.Equal(t, 1, strings.Count(logs.String(), "level=ERROR"), "one error line per failure: %s", logs.String())
			assert.Regexp(t, `level=INFO msg="Executed 'Functions\.`+tc.tool+`' \(Failed\)" function=`+tc.tool+` tool=`+tc.tool+` invocationId=[0-9a-f-]+ duration=`, logs.String())

			if tc.workerURL != "" {
				return
			}
			// The host keeps serving.
			res, err = h.callTool(context.Background(), &mcp.CallRequest{Name: "get_weather", Arguments: map[string]json.RawMessage{"city": json.RawMessage(`"Oslo"`)}})
			require.NoError(t, err)
			assert.False(t, res.IsError)
			assert.JSONEq(t, `{"city":"Oslo","temp":21.5}`, string(res.StructuredContent))
		})
	}
}

func TestCallToolErrors(t *testing.T) {
	fw := newFakeWorker(t)
	root := weatherApp(t, `{"version":"2.0"}`)
	h, _ := newTestHost(t, root, fw.srv.URL, nil)
	tests := []struct {
		name     string
		req      *mcp.CallRequest
		wantCode int    // JSON-RPC error code; 0 → a result
		wantText string // the error message or the isError text
	}{
		{"unknown tool", &mcp.CallRequest{Name: "nope"}, mcp.CodeInvalidParams, "Unknown tool: 'nope'"},
		{"unknown tool, empty name", &mcp.CallRequest{Name: ""}, mcp.CodeInvalidParams, "Unknown tool: ''"},
		{"missing, 2024-11-05", &mcp.CallRequest{Name: "get_weather", ProtocolVersion: "2024-11-05"}, mcp.CodeInvalidParams, "One or more required tool properties are missing values. Please provide: city"},
		{"missing, 2025-06-18", &mcp.CallRequest{Name: "get_weather", ProtocolVersion: "2025-06-18"}, mcp.CodeInvalidParams, "One or more required tool properties are missing values. Please provide: city"},
		{"null, 2025-06-18", &mcp.CallRequest{Name: "get_weather", ProtocolVersion: "2025-06-18", Arguments: map[string]json.RawMessage{"city": json.RawMessage("null")}}, mcp.CodeInvalidParams, "One or more required tool properties are missing values. Please provide: city"},
		{"missing, 2025-11-25", &mcp.CallRequest{Name: "get_weather", ProtocolVersion: "2025-11-25"}, 0, "One or more required tool properties are missing values. Please provide: city"},
		{"missing, later revision", &mcp.CallRequest{Name: "get_weather", ProtocolVersion: "2026-07-28"}, 0, "One or more required tool properties are missing values. Please provide: city"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := h.callTool(context.Background(), tc.req)
			if tc.wantCode != 0 {
				var pe *mcp.ProtocolError
				require.True(t, errors.As(err, &pe), "want a *mcp.ProtocolError, got %v", err)
				assert.Equal(t, tc.wantCode, pe.Code)
				assert.Equal(t, tc.wantText, pe.Message)
				assert.Nil(t, res)
				return
			}
			require.NoError(t, err)
			assert.True(t, res.IsError)
			require.Len(t, res.Content, 1)
			assert.JSONEq(t, string(metadata.TextContent(tc.wantText)), string(res.Content[0]))
		})
	}
	assert.Empty(t, fw.requests(), "no invalid call reaches the worker")
}

func TestMissingArgumentsListsAll(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, HostFile, `{"version":"2.0"}`)
	writeTool(t, root, "multi", &metadata.ToolOptions{ToolName: "multi", Description: "d", Properties: []metadata.ToolProperty{
		{PropertyName: "a", PropertyType: "string", IsRequired: true},
		{PropertyName: "b", PropertyType: "number", IsRequired: true},
		{PropertyName: "c", PropertyType: "string"},
	}})
	h, _ := newTestHost(t, root, "http://127.0.0.1:1", nil)
	_, err := h.callTool(context.Background(), &mcp.CallRequest{Name: "multi", Arguments: map[string]json.RawMessage{"c": json.RawMessage(`"x"`)}})
	var pe *mcp.ProtocolError
	require.True(t, errors.As(err, &pe))
	assert.Equal(t, "One or more required tool properties are missing values. Please provide: a, b", pe.Message)
}

func TestWorkerNotStarted(t *testing.T) {
	root := weatherApp(t, `{"customHandler":{"description":{"defaultExecutablePath":"handler"}}}`)
	logs := &syncBuffer{}
	h, err := New(&Options{ScriptRoot: root, Logger: newLogger(logs)})
	require.NoError(t, err)
	assert.Equal(t, StateStarting, h.Status().State)
	res, err := h.callTool(context.Background(), &mcp.CallRequest{Name: "get_weather", Arguments: map[string]json.RawMessage{"city": json.RawMessage(`"x"`)}})
	require.NoError(t, err)
	assert.True(t, res.IsError)
	assert.Contains(t, logs.String(), "the worker is not started")
}
