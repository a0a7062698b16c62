package telemetry

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/funcmcp/funcmcp/host/internal/mcp"
	"github.com/funcmcp/funcmcp/metadata"
)

// discard is a span exporter that drops what it is given: the benchmark
// measures what the link costs a call, not a network.
type discard struct{}

func (discard) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discard) Shutdown(context.Context) error                             { return nil }

// BenchmarkToolsCall compares a tools/call through the MCP endpoint
// without telemetry (off: no link) and with the link on, 100% sampled,
// spans batched to an exporter that drops them and the duration histogram
// aggregated.
// Spans go through the processor funchost uses (otelsetup.Batcher).
func BenchmarkToolsCall(b *testing.B) {
	on := benchOn(b)
	for _, c := range []struct {
		name string
		tel  *Telemetry
	}{{"off", nil}, {"on", on}} {
		b.Run(c.name, func(b *testing.B) {
			call := greetCall(c.tel)
			b.ReportAllocs()
			for b.Loop() {
				call()
			}
		})
	}
}

// greetCall returns a func that posts one tools/call of "greet" (with a
// _meta traceparent) to an MCP endpoint with tel's link, as funchost's
// endpoint gets it.
func greetCall(tel *Telemetry) func() {
	h := mcp.NewHandler(mcp.Server{
		ToolsList: func(string) json.RawMessage {
			return json.RawMessage(`[{"name":"greet","inputSchema":{"type":"object"}}]`)
		},
		CallTool: func(context.Context, *mcp.CallRequest) (*metadata.CallToolResult, error) {
			return &metadata.CallToolResult{Content: []json.RawMessage{metadata.TextContent("hi")}}, nil
		},
		Known: knownTools("greet"),
	}, &mcp.Options{Middleware: tel.Middleware()})
	const body = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"greet","arguments":{},"_meta":{"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}}`
	return func() {
		req := httptest.NewRequest(http.MethodPost, "/runtime/webhooks/mcp", strings.NewReader(body))
		req.Header.Set("Accept", "application/json")
		h.ServeHTTP(httptest.NewRecorder(), req)
	}
}

// knownTools is the Server.Known of an app that declares the tools named
// and nothing else.
func knownTools(names ...string) func(mcp.TargetKind, string) (string, bool) {
	return func(kind mcp.TargetKind, name string) (string, bool) {
		if kind != mcp.TargetTool {
			return "", false
		}
		for _, n := range names {
			if n == name {
				return n, true
			}
		}
		return "", false
	}
}
