// Command sdkserver is the benchmarks' baseline in a process of its own: the
// official MCP Go SDK serving the sample's get_weather computation over
// Streamable HTTP (see package tests/bench/internal/sdkbaseline).
//
//	sdkserver -tools tools.json [-stateless] [-addr 127.0.0.1:0]
//
// tools.json is a JSON array of {"name","description","inputSchema",
// "outputSchema"} objects, the shape of a tools/list entry. MCP is served at
// /mcp, the loopback echo at POST /echo. It prints "listening on
// http://ADDR" once it accepts connections and stops on SIGINT or SIGTERM.
// It is built and run by tests/bench only: the SDK stays out of funcmcp's own
// binaries.
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

	"github.com/funcmcp/funcmcp/tests/bench/internal/sdkbaseline"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	toolsFile := flag.String("tools", "", "JSON array of tool definitions (name, description, inputSchema, outputSchema)")
	stateless := flag.Bool("stateless", false, "serve Streamable HTTP without sessions")
	flag.Parse()
	if err := run(*addr, *toolsFile, *stateless); err != nil {
		fmt.Fprintln(os.Stderr, "sdkserver:", err)
		os.Exit(1)
	}
}

func run(addr, toolsFile string, stateless bool) error {
	data, err := os.ReadFile(toolsFile)
	if err != nil {
		return fmt.Errorf("reading the tools file: %w", err)
	}
	var tools []sdkbaseline.Tool
	if err := json.Unmarshal(data, &tools); err != nil {
		return fmt.Errorf("decoding the tools file %s: %w", toolsFile, err)
	}
	h := sdkbaseline.Handler(sdkbaseline.NewServer(tools), stateless)
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listening: %w", err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 30 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(l) }()
	fmt.Printf("listening on http://%s\n", l.Addr())
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
