package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/funcmcp/funcmcp/host/internal/mcp"
	"github.com/funcmcp/funcmcp/metadata"
)

// greeter serves one tool.
type greeter struct{ list json.RawMessage }

func (g *greeter) CallTool(_ context.Context, req *mcp.CallRequest) (*metadata.CallToolResult, error) {
	if req.Name != "greet" {
		return nil, &mcp.ProtocolError{Code: mcp.CodeInvalidParams, Message: "Unknown tool: '" + req.Name + "'"}
	}
	var who string
	_ = json.Unmarshal(req.Arguments["who"], &who)
	return &metadata.CallToolResult{Content: []json.RawMessage{metadata.TextContent("Hello, " + who + "!")}}, nil
}

func ExampleNewHandler() {
	tools := &greeter{list: json.RawMessage(`[{"name":"greet","inputSchema":{"type":"object","properties":{"who":{"type":"string"}}}}]`)}
	h := mcp.NewHandler(mcp.Server{
		ToolsList: func(string) json.RawMessage { return tools.list },
		CallTool:  tools.CallTool,
	}, &mcp.Options{ServerInfo: mcp.Implementation{Name: "demo", Version: "1.0.0"}})

	post := func(accept, body string) {
		req := httptest.NewRequest(http.MethodPost, "/runtime/webhooks/mcp", strings.NewReader(body))
		req.Header.Set("Accept", accept)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		fmt.Printf("%d %s\n%s\n", rec.Code, rec.Header().Get("Content-Type"), strings.TrimSpace(rec.Body.String()))
	}
	post("application/json", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	post("application/json, text/event-stream", `{"jsonrpc":"2.0","id":"c1","method":"tools/call","params":{"name":"greet","arguments":{"who":"Ada"}}}`)
	post("application/json", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"wave"}}`)
	// Output:
	// 200 application/json
	// {"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"greet","inputSchema":{"type":"object","properties":{"who":{"type":"string"}}}}]}}
	// 200 text/event-stream
	// event: message
	// data: {"jsonrpc":"2.0","id":"c1","result":{"content":[{"type":"text","text":"Hello, Ada!"}]}}
	// 200 application/json
	// {"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"Unknown tool: 'wave'"}}
}

// A middleware sees every request and notification: here it counts them
// by method and outcome, after the handler answered.
func ExampleMiddleware() {
	tools := &greeter{list: json.RawMessage(`[{"name":"greet","inputSchema":{"type":"object"}}]`)}
	seen := func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(x *mcp.Exchange) {
			next(x)
			fmt.Printf("%s %q at %s: %s\n", x.Method(), x.Name(), x.ProtocolVersion(), x.Outcome())
		}
	}
	h := mcp.NewHandler(mcp.Server{
		ToolsList: func(string) json.RawMessage { return tools.list },
		CallTool:  tools.CallTool,
	}, &mcp.Options{Middleware: []mcp.Middleware{seen}})

	for _, body := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"greet","arguments":{"who":"Ada"}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"wave"}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":3,"method":"prompts/list"}`,
	} {
		req := httptest.NewRequest(http.MethodPost, "/runtime/webhooks/mcp", strings.NewReader(body))
		req.Header.Set("Accept", "application/json")
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		h.ServeHTTP(httptest.NewRecorder(), req)
	}
	// Output:
	// tools/call "greet" at 2025-11-25: ok
	// tools/call "wave" at 2025-11-25: error -32602
	// notifications/initialized "" at 2025-11-25: accepted
	// prompts/list "" at 2025-11-25: error -32601
}
