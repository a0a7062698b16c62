package host

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/host/internal/mcp"
	"github.com/funcmcp/funcmcp/metadata"
)

// BenchmarkHostInvoke_NoMCPFront_StubWorker measures the host's part of a
// tool call without the MCP endpoint in front of it and without a worker
// process: invocation body, azcore pipeline, HTTP to an httptest server that
// answers a canned 27-byte result, decoding and output validation. The real
// tools/call, through the processes, is tests/bench BenchmarkToolsCall.
func BenchmarkHostInvoke_NoMCPFront_StubWorker(b *testing.B) {
	structured := `{"city":"Oslo","temp":21.5}`
	reply, _ := json.Marshal(metadata.InvocationResponse{Outputs: map[string]json.RawMessage{}, Logs: []string{}, ReturnValue: envelopeReturn(structured)})
	worker := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(reply)
	}))
	defer worker.Close()
	root := weatherApp(b, `{"version":"2.0"}`)
	h, _ := newTestHost(b, root, worker.URL, nil)
	req := &mcp.CallRequest{
		Name:            "get_weather",
		Arguments:       map[string]json.RawMessage{"city": json.RawMessage(`"Oslo"`)},
		ProtocolVersion: "2025-06-18",
		SessionID:       "session",
		Headers:         http.Header{"Accept": {"application/json", "text/event-stream"}, "Content-Type": {"application/json"}},
		Transport:       metadata.TransportStreamableHTTP,
	}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		res, err := h.callTool(ctx, req)
		if err != nil || res.IsError {
			b.Fatalf("call failed: %v %+v", err, res)
		}
	}
}

// BenchmarkLoad1000Functions measures New over an app of 1,000 tool
// functions, each with an output schema.
func BenchmarkLoad1000Functions(b *testing.B) {
	root := b.TempDir()
	writeFile(b, root, HostFile, `{"version":"2.0"}`)
	for i := range 1000 {
		name := fmt.Sprintf("tool_%04d", i)
		writeTool(b, root, name, &metadata.ToolOptions{ToolName: name, Description: "Tool " + name, Properties: cityProperty, OutputSchema: weatherSchema})
	}
	benchmarkLoad(b, root, 1000)
}

// BenchmarkLoad1000DistinctSchemas is BenchmarkLoad1000Functions with a
// different output schema in every function, so nothing is shared and every
// schema is compiled.
func BenchmarkLoad1000DistinctSchemas(b *testing.B) {
	root := b.TempDir()
	writeFile(b, root, HostFile, `{"version":"2.0"}`)
	for i := range 1000 {
		name := fmt.Sprintf("tool_%04d", i)
		schema := fmt.Sprintf(`{"type":"object","properties":{"temp_%d":{"type":"number"},"city":{"type":"string","minLength":1}},"required":["temp_%d"]}`, i, i)
		props := []metadata.ToolProperty{{PropertyName: fmt.Sprintf("arg_%d", i), PropertyType: "string", IsRequired: true}}
		writeTool(b, root, name, &metadata.ToolOptions{ToolName: name, Description: "Tool " + name, Properties: props, OutputSchema: schema})
	}
	benchmarkLoad(b, root, 1000)
}

// benchmarkLoad measures New over the app in root, which serves tools tools.
func benchmarkLoad(b *testing.B, root string, tools int) {
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		h, err := New(&Options{ScriptRoot: root, WorkerURL: "http://127.0.0.1:1", Logger: newLogger(io.Discard), Output: io.Discard})
		require.NoError(b, err)
		if len(h.cat.Tools()) != tools {
			b.Fatalf("served %d tools", len(h.cat.Tools()))
		}
	}
}
