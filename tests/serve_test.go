package tests

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// serveFolder makes a working folder for `handler serve` that holds only
// host.json and local.settings.json, copied from app and from
// settingsFrom: no function folder, so what is served comes from the
// app's own metadata in memory.
func serveFolder(t testing.TB, app, settingsFrom string) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []struct{ from, name string }{{app, "host.json"}, {settingsFrom, "local.settings.json"}} {
		data, err := os.ReadFile(filepath.Join(f.from, f.name))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, f.name), data, 0o600))
	}
	return dir
}

// startServe runs `handler serve --port 0` (and args) in the working
// folder dir, with env added, and waits for its endpoint line. It is one
// process: the host struct's stop sends it SIGTERM, expects exit 0 and
// that nothing of its process group is left.
func startServe(t testing.TB, handler, dir string, env []string, args ...string) *host {
	t.Helper()
	cmd := exec.Command(handler, append([]string{"serve", "--port", "0"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	h := &host{cmd: cmd, console: &syncBuffer{}, exited: make(chan struct{})}
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = h.console
	require.NoError(t, cmd.Start())
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(h.console, line)
			if m := endpointLine.FindStringSubmatch(line); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	go func() {
		h.waitErr = cmd.Wait()
		close(h.exited)
	}()
	t.Cleanup(func() { h.stop(t) })
	h.awaitEndpoint(t, found)
	return h
}

// startSampleHost serves the built sample app with funchost, or (serve)
// by itself in one process from a folder with no function folder.
func startSampleHost(t *testing.T, app string, serve bool) *host {
	t.Helper()
	if !serve {
		return startHost(t, app)
	}
	return startServe(t, filepath.Join(app, "handler"), serveFolder(t, app, filepath.Join("..", "function-app-sample")), nil)
}

// TestServeSample builds the sample, runs `handler serve` as a real process
// from a folder with no function folder, and drives it with the official Go
// SDK client: a tools/call whose structuredContent matches the advertised
// output schema, a resource read, a task (2026-07-28 tasks extension) run
// to completion, and a change the app announces reaching a listener. Then
// SIGTERM: it exits 0 with nothing left running.
func TestServeSample(t *testing.T) {
	t.Parallel()
	app := sample(t)
	h := startServe(t, filepath.Join(app, "handler"), serveFolder(t, app, filepath.Join("..", "function-app-sample")), nil)
	assert.Contains(t, h.console.String(), "get_weather: mcpToolTrigger (tool get_weather)", "the function list is the app's own")

	ctx, cancel := context.WithTimeout(t.Context(), clientTimeout)
	defer cancel()
	cs := connectGoSDK(t, h.endpoint, "2025-11-25")
	assert.Equal(t, "funcmcp sample", cs.InitializeResult().ServerInfo.Name, "host.json of the working folder")

	t.Run("tools/call with an output schema", func(t *testing.T) {
		listed, err := cs.ListTools(ctx, nil)
		require.NoError(t, err)
		var schema json.RawMessage
		for _, tool := range listed.Tools {
			if tool.Name == "get_weather" {
				schema = toJSON(t, tool.OutputSchema)
			}
		}
		require.NotEmpty(t, schema, "get_weather is listed with its output schema")
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "get_weather",
			Arguments: map[string]any{"city": "Oslo", "units": "metric", "days": 3, "date": "2026-05-17"}})
		require.NoError(t, err)
		require.False(t, res.IsError, "%s", toJSON(t, res.Content))
		got := toJSON(t, res.StructuredContent)
		assert.NoError(t, compileSchema(t, string(schema))(got), "structuredContent matches the advertised schema: %s", got)
		assert.Contains(t, string(got), `"city":"Oslo"`)

		_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "no_such_tool", Arguments: map[string]any{}})
		require.Error(t, err, "an unknown tool is a JSON-RPC error")
	})

	t.Run("resources/read", func(t *testing.T) {
		read, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "holidays://countries"})
		require.NoError(t, err)
		require.Len(t, read.Contents, 1)
		assert.Contains(t, read.Contents[0].Text, `"code":"NO"`)
	})

	t.Run("a task", func(t *testing.T) {
		c := taskClient{endpoint: h.endpoint}
		id := c.create(t, "simulate_epidemic", map[string]any{"days": 30, "duration_seconds": 1, "seed": 7})
		done := c.await(t, id, "completed")
		assert.Contains(t, string(done.Result["result"]), "structuredContent", "the task's result: %v", done.Result)
	})

	t.Run("a change reaches a listener", func(t *testing.T) {
		updated := subscribeGoSDK(t, h.endpoint, "", "note://pinned")
		assert.Equal(t, "sent", pinNote(t, cs, "Serve in one process"))
		awaitUpdate(t, updated, "note://pinned", h)
	})

	h.stop(t)
	assert.Contains(t, h.console.String(), "Executed 'Functions.get_weather' (Succeeded)")
}

// TestServeFlags: serve refuses a bad flag with exit 2 and explains it,
// and help lists serve beside the custom-handler modes.
func TestServeFlags(t *testing.T) {
	t.Parallel()
	handler := filepath.Join(sample(t), "handler")
	ctx, cancel := context.WithTimeout(t.Context(), startTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, handler, "serve", "--port", "70000").CombinedOutput()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, "%s", out)
	assert.Equal(t, 2, exit.ExitCode())
	assert.Contains(t, string(out), "--port 70000 is not a port number")

	out, err = exec.CommandContext(ctx, handler, "help").CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.True(t, strings.Contains(string(out), "serve [flags]") && strings.Contains(string(out), "emit-metadata DIR"), "%s", out)
}

// TestServeTelemetryOneTrace: with telemetry on (host.json telemetryMode,
// an OTLP endpoint in the environment), `handler serve` makes one trace of
// a tools/call in one process, as funchost and its worker make it in two:
// the SERVER span → the invocation → the app's execute_tool span → the
// tool's own span, all of one pid.
func TestServeTelemetryOneTrace(t *testing.T) {
	rc := startOTLPReceiver(t)
	app := telemetrySample(t)
	h := startServe(t, filepath.Join(app, "handler"), serveFolder(t, app, filepath.Join("..", "function-app-sample")), []string{
		"OTEL_EXPORTER_OTLP_ENDPOINT=" + rc.url,
		"OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf",
		"OTEL_BSP_SCHEDULE_DELAY=50",
		"OTEL_METRIC_EXPORT_INTERVAL=200",
		"OTEL_TRACES_SAMPLER=always_on",
	})
	const clientTrace = "7bf92f3577b34da6a3ce929d0e0e4739"
	session, _ := postMCP(t, h.endpoint, "", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	require.NotEmpty(t, session)
	_, out := postMCP(t, h.endpoint, session, `{"jsonrpc":"2.0","id":"call-1","method":"tools/call","params":{"name":"to_roman","arguments":{"number":2026},"_meta":{"traceparent":"00-`+clientTrace+`-00f067aa0ba902b7-01"}}}`)
	require.Contains(t, out, "MMXXVI")

	inTrace := func(name string) func(recvSpan) bool {
		return func(s recvSpan) bool { return s.traceID == clientTrace && s.name == name }
	}
	names := []string{"tools/call to_roman", "invoke to_roman", "execute_tool to_roman", "roman"}
	rc.waitFor(t, "the call's four spans", func(spans []recvSpan, _ map[string]string) bool {
		for _, n := range names {
			if _, ok := findSpan(spans, inTrace(n)); !ok {
				return false
			}
		}
		return true
	})
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var chain []recvSpan
	for _, n := range names {
		s, _ := findSpan(rc.spans, inTrace(n))
		chain = append(chain, s)
	}
	assert.Equal(t, "00f067aa0ba902b7", chain[0].parentID, "the server span's parent is the _meta traceparent")
	for i := 1; i < len(chain); i++ {
		assert.Equal(t, chain[i-1].spanID, chain[i].parentID, "%s is the parent of %s", names[i-1], names[i])
		assert.Equal(t, chain[0].pid, chain[i].pid, "%s comes from the one process", names[i])
	}
	assert.NotEmpty(t, chain[0].pid)
}
