// Command mcpgoserver is the benchmarks' second Go peer, in a process of its
// own: github.com/mark3labs/mcp-go serving the sample's get_weather
// computation (package function-app-sample/weather) over Streamable HTTP,
// stateless, with input and output schema validation on, as a Go developer
// would write it with that library.
//
//	mcpgoserver -tools tools.json [-addr 127.0.0.1:0]
//
// tools.json is the file tests/bench/sdkserver reads: a JSON array of
// {"name","description","inputSchema","outputSchema"} objects, the shape of
// a tools/list entry. Every tool runs the weather computation with its own
// schemas; one without an output schema answers the forecast as text. MCP
// is served at /mcp. It prints "listening on http://ADDR" once it accepts
// connections and stops on SIGINT or SIGTERM.
//
// It is a module of its own so that mcp-go stays out of funcmcp's go.mod;
// tests/bench builds and runs it.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/funcmcp/funcmcp/function-app-sample/weather"
)

// tool is one tool to serve, in the shape of a tools/list entry.
type tool struct {
	Name         string          `json:"name"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema"`
}

// weatherArgs are get_weather's arguments, as the sample decodes them.
type weatherArgs struct {
	City  string `json:"city"`
	Units string `json:"units,omitempty"`
	Days  int    `json:"days,omitempty"`
	Date  string `json:"date,omitempty"`
}

// forecast is the sample's get_weather handler written for mcp-go.
func forecast(_ context.Context, _ mcp.CallToolRequest, args weatherArgs) (*weather.Forecast, error) {
	start := time.Now().UTC()
	if args.Date != "" {
		d, err := time.Parse(time.DateOnly, args.Date)
		if err != nil {
			return nil, fmt.Errorf("date %q is not YYYY-MM-DD", args.Date)
		}
		start = d
	}
	return weather.Compute(args.City, args.Units, start, args.Days)
}

// forecastText is forecast for a tool without an output schema: the
// forecast's JSON as text.
func forecastText(ctx context.Context, req mcp.CallToolRequest, args weatherArgs) (*mcp.CallToolResult, error) {
	f, err := forecast(ctx, req, args)
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	data, err := json.Marshal(f)
	if err != nil {
		return nil, fmt.Errorf("encoding the forecast: %w", err)
	}
	return mcp.NewToolResultText(string(data)), nil
}

// newServer returns an mcp-go server with every tool of tools, validating
// arguments and structured results against the tools' schemas.
func newServer(tools []tool) *server.MCPServer {
	s := server.NewMCPServer("mcp-go-baseline", "1.0.0",
		server.WithToolCapabilities(false),
		server.WithInputSchemaValidation(),
		server.WithOutputSchemaValidation())
	for _, d := range tools {
		opts := []mcp.ToolOption{mcp.WithDescription(d.Description)}
		if len(d.InputSchema) > 0 {
			opts = append(opts, mcp.WithRawInputSchema(d.InputSchema))
		}
		if len(d.OutputSchema) == 0 || string(d.OutputSchema) == "null" {
			s.AddTool(mcp.NewTool(d.Name, opts...), mcp.NewTypedToolHandler(forecastText))
			continue
		}
		opts = append(opts, mcp.WithRawOutputSchema(d.OutputSchema))
		s.AddTool(mcp.NewTool(d.Name, opts...), mcp.NewStructuredToolHandler(forecast))
	}
	return s
}

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	toolsFile := flag.String("tools", "", "JSON array of tool definitions (name, description, inputSchema, outputSchema)")
	flag.Parse()
	if err := run(*addr, *toolsFile); err != nil {
		fmt.Fprintln(os.Stderr, "mcpgoserver:", err)
		os.Exit(1)
	}
}

func run(addr, toolsFile string) error {
	data, err := os.ReadFile(toolsFile)
	if err != nil {
		return fmt.Errorf("reading the tools file: %w", err)
	}
	var tools []tool
	if err := json.Unmarshal(data, &tools); err != nil {
		return fmt.Errorf("decoding the tools file %s: %w", toolsFile, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", server.NewStreamableHTTPServer(newServer(tools), server.WithStateLess(true)))
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listening: %w", err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 30 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(l) }()
	fmt.Printf("listening on http://%s\n", l.Addr())
	select {
	case err := <-errc:
		return fmt.Errorf("serving: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("shutting down: %w", err)
	}
	return nil
}
