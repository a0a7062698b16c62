package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/funcmcp/funcmcp/metadata"
)

// benchTools answers every call with the same small result, as a bridge
// would after decoding a worker reply.
type benchTools struct {
	list   json.RawMessage
	result *metadata.CallToolResult
}

func (b *benchTools) ToolsList() json.RawMessage { return b.list }

func (b *benchTools) CallTool(context.Context, *CallRequest) (*metadata.CallToolResult, error) {
	return b.result, nil
}

func newBenchTools(n int) *benchTools {
	var list bytes.Buffer
	list.WriteByte('[')
	for i := range n {
		if i > 0 {
			list.WriteByte(',')
		}
		fmt.Fprintf(&list, `{"name":"tool_%d","description":"Gets the weather for a city, tool number %d.",`+
			`"inputSchema":{"type":"object","properties":{"city":{"type":"string","description":"The city"},"days":{"type":"integer"}},"required":["city"]},`+
			`"outputSchema":{"type":"object","properties":{"city":{"type":"string"},"temperature":{"type":"number"}},"required":["city","temperature"]}}`, i, i)
	}
	list.WriteByte(']')
	sc := json.RawMessage(`{"city":"Oslo","temperature":21.5}`)
	return &benchTools{
		list:   list.Bytes(),
		result: &metadata.CallToolResult{Content: []json.RawMessage{metadata.TextContent(string(sc))}, StructuredContent: sc},
	}
}

const benchCall = `{"jsonrpc":"2.0","id":17,"method":"tools/call","params":{"name":"tool_0","arguments":{"city":"Oslo","days":3},"_meta":{"progressToken":"p1"}}}`

// postLoop posts body b.N times with a plain keep-alive client.
func postLoop(b *testing.B, url, body, accept string, headers map[string]string) {
	b.Helper()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	defer client.CloseIdleConnections()
	payload := []byte(body)
	b.SetBytes(int64(len(payload)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(payload))
		if err != nil {
			b.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", accept)
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || n == 0 {
			b.Fatalf("status %d, %d bytes", resp.StatusCode, n)
		}
	}
}

// sessionHeaders initializes once and returns the headers a client sends after.
func sessionHeaders(b *testing.B, h http.Handler) map[string]string {
	b.Helper()
	req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(rpc(1, "initialize", map[string]any{
		"protocolVersion": "2025-11-25", "clientInfo": map[string]any{"name": "bench", "version": "1"},
	})))
	req.Header.Set("Accept", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return map[string]string{"Mcp-Session-Id": rec.Header().Get("Mcp-Session-Id"), "MCP-Protocol-Version": "2025-11-25"}
}

// nullWriter is a reusable ResponseWriter for in-process runs.
type nullWriter struct {
	h      http.Header
	status int
	n      int
}

func (w *nullWriter) Header() http.Header         { return w.h }
func (w *nullWriter) WriteHeader(status int)      { w.status = status }
func (w *nullWriter) Write(p []byte) (int, error) { w.n += len(p); return len(p), nil }

// serveLoop calls ServeHTTP directly: the handler's own cost, no network.
func serveLoop(b *testing.B, h http.Handler, body, accept string, headers map[string]string) {
	b.Helper()
	payload := []byte(body)
	rd := bytes.NewReader(payload)
	req := httptest.NewRequest(http.MethodPost, "/runtime/webhooks/mcp", nil)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", accept)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	req.Body = io.NopCloser(rd)
	req.ContentLength = int64(len(payload))
	w := &nullWriter{h: http.Header{}}
	b.SetBytes(int64(len(payload)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		rd.Reset(payload)
		clear(w.h)
		w.n = 0
		h.ServeHTTP(w, req)
		if w.status != http.StatusOK || w.n == 0 {
			b.Fatalf("status %d, %d bytes", w.status, w.n)
		}
	}
}

// BenchmarkEndpoint_CannedToolsCall measures the MCP endpoint alone: the
// tool is a canned 34-byte result (no host, no worker, no validation). The
// real tools/call, through the processes, is tests/bench BenchmarkToolsCall.
func BenchmarkEndpoint_CannedToolsCall(b *testing.B) {
	h := NewHandler(serverOf(newBenchTools(1)), nil)
	headers := sessionHeaders(b, h)
	srv := httptest.NewServer(h)
	defer srv.Close()
	b.Run("http/json", func(b *testing.B) { postLoop(b, srv.URL, benchCall, "application/json", headers) })
	b.Run("http/sse", func(b *testing.B) { postLoop(b, srv.URL, benchCall, acceptBoth, headers) })
	b.Run("handler/json", func(b *testing.B) { serveLoop(b, h, benchCall, "application/json", headers) })
	b.Run("handler/sse", func(b *testing.B) { serveLoop(b, h, benchCall, acceptBoth, headers) })
}

// benchModernCall is benchCall as a 2026-07-28 client sends it.
const benchModernCall = `{"jsonrpc":"2.0","id":17,"method":"tools/call","params":{"name":"tool_0","arguments":{"city":"Oslo","days":3},` +
	`"_meta":{"progressToken":"p1","io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
	`"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1.0"},"io.modelcontextprotocol/clientCapabilities":{}}}}`

// BenchmarkEndpoint_CannedToolsCallModern is BenchmarkEndpoint_CannedToolsCall
// for a 2026-07-28 request: no session, the envelope read from _meta, the
// header checks, resultType and server info added to the result.
func BenchmarkEndpoint_CannedToolsCallModern(b *testing.B) {
	h := NewHandler(serverOf(newBenchTools(1)), nil)
	headers := map[string]string{"MCP-Protocol-Version": ModernVersion, "Mcp-Method": "tools/call", "Mcp-Name": "tool_0"}
	srv := httptest.NewServer(h)
	defer srv.Close()
	b.Run("http/json", func(b *testing.B) { postLoop(b, srv.URL, benchModernCall, "application/json", headers) })
	b.Run("handler/json", func(b *testing.B) { serveLoop(b, h, benchModernCall, "application/json", headers) })
}

// BenchmarkEndpoint_CachedToolsList measures the MCP endpoint alone sending
// a prepared 1,000-tool list (no host). tests/bench BenchmarkToolsList
// compares funchost with the SDK through the processes.
func BenchmarkEndpoint_CachedToolsList(b *testing.B) {
	h := NewHandler(serverOf(newBenchTools(1000)), nil)
	headers := sessionHeaders(b, h)
	srv := httptest.NewServer(h)
	defer srv.Close()
	body := rpc(3, "tools/list", nil)
	b.Run("http/json", func(b *testing.B) { postLoop(b, srv.URL, body, "application/json", headers) })
	b.Run("http/sse", func(b *testing.B) { postLoop(b, srv.URL, body, acceptBoth, headers) })
	b.Run("handler/json", func(b *testing.B) { serveLoop(b, h, body, "application/json", headers) })
}

// BenchmarkSDKEndpoint_CannedToolsCall is BenchmarkEndpoint_CannedToolsCall
// against the official Go SDK's stateless Streamable HTTP server with a raw
// (unvalidated) canned tool: the SDK's endpoint cost, for ratios.
func BenchmarkSDKEndpoint_CannedToolsCall(b *testing.B) {
	server := sdk.NewServer(&sdk.Implementation{Name: "sdk", Version: "1"}, nil)
	var inSchema, outSchema any
	_ = json.Unmarshal([]byte(`{"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer"}},"required":["city"]}`), &inSchema)
	_ = json.Unmarshal([]byte(`{"type":"object","properties":{"city":{"type":"string"},"temperature":{"type":"number"}},"required":["city","temperature"]}`), &outSchema)
	sc := json.RawMessage(`{"city":"Oslo","temperature":21.5}`)
	server.AddTool(&sdk.Tool{Name: "tool_0", InputSchema: inSchema, OutputSchema: outSchema},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: string(sc)}}, StructuredContent: sc}, nil
		})
	for _, mode := range []struct {
		name string
		json bool
	}{{"json", true}, {"sse", false}} {
		h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return server },
			&sdk.StreamableHTTPOptions{Stateless: true, JSONResponse: mode.json})
		srv := httptest.NewServer(h)
		b.Run("http/"+mode.name, func(b *testing.B) {
			postLoop(b, srv.URL, benchCall, acceptBoth, map[string]string{"MCP-Protocol-Version": "2025-11-25"})
		})
		srv.Close()
	}
}

// benchLargeCall is a tools/call of about 2 KiB of arguments.
var benchLargeCall = `{"jsonrpc":"2.0","id":"req-000017","method":"tools/call","params":{"name":"get_weather","arguments":{"city":"Oslo","units":"metric","days":[` +
	strings.Repeat(`{"date":"2026-03-01","high":1.5,"low":-4.25,"condition":"snow \"heavy\"","precipitationChance":80},`, 20) +
	`{"date":"2026-03-21"}]},"_meta":{"progressToken":"p1"}}}`

// BenchmarkDecodeMessage measures reading one JSON-RPC message (the
// envelope, then the tools/call params) without serving it.
func BenchmarkDecodeMessage(b *testing.B) {
	for _, bc := range []struct{ name, body string }{{"small", benchCall}, {"2KiB", benchLargeCall}} {
		b.Run(bc.name, func(b *testing.B) {
			body := []byte(bc.body)
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				var msg message
				if code, text := decodeMessage(body, &msg); code != 0 {
					b.Fatal(text)
				}
				if _, _, _, problem := decodeCallParams(&msg); problem != "" {
					b.Fatal(problem)
				}
			}
		})
	}
}

// BenchmarkLegacyRoute measures what the legacy SSE router reads of a
// message before it queues it.
func BenchmarkLegacyRoute(b *testing.B) {
	body := []byte(benchLargeCall)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if routeOf(body).ID == "" {
			b.Fatal("no id")
		}
	}
}
