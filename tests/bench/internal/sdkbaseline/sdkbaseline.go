// Package sdkbaseline is the benchmarks' baseline server: the official MCP
// Go SDK (github.com/modelcontextprotocol/go-sdk) serving the sample's
// get_weather computation, as a Go developer would write it without funcmcp.
//
// Every tool it serves runs package function-app-sample/weather through the
// SDK's typed AddTool with the input and output schemas it is given, so the
// SDK validates the arguments and the output as funchost and the worker do.
// The tests/bench/sdkserver command serves it in a process of its own; the
// in-process benchmarks use it directly.
package sdkbaseline

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/funcmcp/funcmcp/function-app-sample/weather"
)

// Tool is one tool to serve, in the shape of a tools/list entry.
type Tool struct {
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

// handleWeather is the sample's get_weather handler written for the SDK.
func handleWeather(_ context.Context, _ *mcp.CallToolRequest, args weatherArgs) (*mcp.CallToolResult, *weather.Forecast, error) {
	start := time.Now().UTC()
	if args.Date != "" {
		d, err := time.Parse(time.DateOnly, args.Date)
		if err != nil {
			return nil, nil, fmt.Errorf("date %q is not YYYY-MM-DD", args.Date)
		}
		start = d
	}
	f, err := weather.Compute(args.City, args.Units, start, args.Days)
	if err != nil {
		return nil, nil, err
	}
	return nil, f, nil
}

// NewServer returns an SDK server with every tool of tools, each running the
// weather computation with its own schemas (the SDK resolves them here).
func NewServer(tools []Tool) *mcp.Server {
	server := mcp.NewServer(&mcp.Implementation{Name: "sdk-baseline", Version: "1.0.0"}, nil)
	for _, d := range tools {
		t := &mcp.Tool{Name: d.Name, Description: d.Description}
		if len(d.InputSchema) > 0 {
			t.InputSchema = d.InputSchema
		}
		if len(d.OutputSchema) > 0 {
			t.OutputSchema = d.OutputSchema
		}
		mcp.AddTool(server, t, handleWeather)
	}
	return server
}

// Handler serves server over Streamable HTTP at /mcp (stateless or with
// sessions) and, for the loopback figures measured beside it, POST /echo,
// which answers a small fixed JSON body, and GET /bytes?n=N, which answers
// N bytes held in memory (at most 64 MiB).
func Handler(server *mcp.Server, stateless bool) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server },
		&mcp.StreamableHTTPOptions{Stateless: stateless}))
	mux.HandleFunc("POST /echo", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
	})
	var blob []byte
	var blobOnce sync.Once
	mux.HandleFunc("GET /bytes", func(w http.ResponseWriter, r *http.Request) {
		n, err := strconv.Atoi(r.URL.Query().Get("n"))
		if err != nil || n < 0 || n > 64<<20 {
			http.Error(w, "n must be a byte count up to 64 MiB", http.StatusBadRequest)
			return
		}
		blobOnce.Do(func() { blob = bytes.Repeat([]byte("x"), 64<<20) })
		w.Header().Set("Content-Type", "application/octet-stream")
		_, _ = w.Write(blob[:n])
	})
	return mux
}
