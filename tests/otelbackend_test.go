package tests

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// otelBackendBin is tests/otelbackend built once: the OpenTelemetry
// Collector's OTLP receiver and file exporter, a module of its own.
var otelBackendBin once

// otelBackendBuildTimeout bounds the collector's build, which is long on a
// cold cache.
const otelBackendBuildTimeout = 15 * time.Minute

func otelBackendPath(t testing.TB) string {
	t.Helper()
	return otelBackendBin.get(t, func() (string, error) {
		out := filepath.Join(workDir, "bin", "otelbackend")
		ctx, cancel := context.WithTimeout(context.Background(), otelBackendBuildTimeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, "go", "build", "-o", out, ".")
		cmd.Dir = "otelbackend"
		var buf bytes.Buffer
		cmd.Stdout, cmd.Stderr = &buf, &buf
		if err := cmd.Run(); err != nil {
			return "", fmt.Errorf("building tests/otelbackend: %w\n%s", err, buf.String())
		}
		return out, nil
	})
}

// otelBackend is a running tests/otelbackend: a real OpenTelemetry
// Collector receiver writing what it gets to file.
type otelBackend struct {
	url  string
	file string
}

func startOTelBackend(t *testing.T) *otelBackend {
	t.Helper()
	bin := otelBackendPath(t)
	file := filepath.Join(t.TempDir(), "telemetry.json")
	cmd := exec.Command(bin, "-listen", "127.0.0.1:0", "-file", file)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr syncBuffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(stopTimeout):
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "listening on "); ok {
				found <- u
			}
		}
	}()
	select {
	case u := <-found:
		return &otelBackend{url: u, file: file}
	case <-exited:
		t.Fatalf("otelbackend exited: %s", stderr.String())
	case <-time.After(startTimeout):
		t.Fatalf("otelbackend did not start within %s: %s", startTimeout, stderr.String())
	}
	return nil
}

// otlpJSON is the part of the file exporter's OTLP/JSON lines the tests read.
type otlpJSON struct {
	ResourceSpans []struct {
		Resource   struct{ Attributes []otlpKV }
		ScopeSpans []struct {
			Spans []struct {
				TraceID      string `json:"traceId"`
				SpanID       string `json:"spanId"`
				ParentSpanID string `json:"parentSpanId"`
				Name         string
				Kind         int
				Attributes   []otlpKV
				Links        []struct {
					TraceID string `json:"traceId"`
				}
			}
		}
	}
	ResourceMetrics []struct {
		ScopeMetrics []struct {
			Metrics []struct {
				Name      string
				Unit      string
				Histogram json.RawMessage
			}
		}
	}
}

type otlpKV struct {
	Key   string
	Value map[string]any
}

func otlpAttrs(kvs []otlpKV) map[string]string {
	m := map[string]string{}
	for _, kv := range kvs {
		for _, v := range kv.Value {
			m[kv.Key] = fmt.Sprint(v)
		}
	}
	return m
}

// read parses what the backend has written so far: the spans, and each
// metric's unit ("histogram " before it for a histogram).
func (b *otelBackend) read(t *testing.T) ([]recvSpan, map[string]string) {
	t.Helper()
	data, err := os.ReadFile(b.file)
	if os.IsNotExist(err) {
		return nil, map[string]string{}
	}
	require.NoError(t, err)
	var spans []recvSpan
	metrics := map[string]string{}
	for _, line := range bytes.Split(data, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var doc otlpJSON
		if err := json.Unmarshal(line, &doc); err != nil {
			continue // a line being written
		}
		for _, rs := range doc.ResourceSpans {
			pid := otlpAttrs(rs.Resource.Attributes)["process.pid"]
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					sp := recvSpan{traceID: s.TraceID, spanID: s.SpanID, parentID: s.ParentSpanID, name: s.Name, attrs: otlpAttrs(s.Attributes), pid: pid}
					for _, l := range s.Links {
						sp.links = append(sp.links, l.TraceID)
					}
					spans = append(spans, sp)
				}
			}
		}
		for _, rm := range doc.ResourceMetrics {
			for _, sm := range rm.ScopeMetrics {
				for _, m := range sm.Metrics {
					if m.Histogram != nil {
						metrics[m.Name] = "histogram " + m.Unit
					} else {
						metrics[m.Name] = m.Unit
					}
				}
			}
		}
	}
	return spans, metrics
}

// waitFor reads the backend's file until done reports true of it, for
// at most 30 seconds.
func (b *otelBackend) waitFor(t *testing.T, what string, done func(spans []recvSpan, metrics map[string]string) bool) ([]recvSpan, map[string]string) {
	t.Helper()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(30 * time.Second)
	for {
		spans, metrics := b.read(t)
		if done(spans, metrics) {
			return spans, metrics
		}
		select {
		case <-tick.C:
		case <-deadline:
			var names []string
			for _, s := range spans {
				names = append(names, s.traceID+" "+s.name+" "+s.spanID+"<-"+s.parentID)
			}
			t.Fatalf("%s did not reach the backend within 30s; spans:\n%s\nmetrics: %v", what, strings.Join(names, "\n"), metrics)
			return nil, nil
		}
	}
}

// chainOf finds, in trace, the spans named names, each the parent of the
// next; ok is false until all are there.
func chainOf(spans []recvSpan, trace string, names ...string) ([]recvSpan, bool) {
	var out []recvSpan
	parent := ""
	for i, n := range names {
		s, ok := findSpan(spans, func(s recvSpan) bool {
			return s.traceID == trace && s.name == n && (i == 0 || s.parentID == parent)
		})
		if !ok {
			return nil, false
		}
		out = append(out, s)
		parent = s.spanID
	}
	return out, true
}

// clientSpan is the span id of the traceparents the clients send.
const clientSpan = "00f067aa0ba902b7"

func traceparent(trace string) string { return "00-" + trace + "-" + clientSpan + "-01" }

// TestTelemetryBackendTraces runs the real funchost and sample worker with
// telemetry on, exporting to a real OpenTelemetry backend (the Collector's
// OTLP receiver and file exporter, tests/otelbackend), and drives them with
// the official TypeScript client sending params._meta.traceparent. The
// backend holds, in the client's trace: for a tools/call, funchost's
// SERVER span → its invocation span → the worker's span around the handler
// → the span the sample tool makes itself; for a resources/read and a
// prompts/get, the chain to the worker's span; for a failing call, the
// chain with the worker span's error.type; and the metric
// mcp.server.operation.duration, a histogram in seconds. Calls answered on
// their POST (2025-06-18) have the server span's error.type: tool_error,
// -32602 for an unknown tool.
func TestTelemetryBackendTraces(t *testing.T) {
	node, dir := nodeBin(t, "@modelcontextprotocol/sdk")
	be := startOTelBackend(t)
	h := startHostEnv(t, telemetrySample(t), []string{
		"OTEL_EXPORTER_OTLP_ENDPOINT=" + be.url,
		"OTEL_BSP_SCHEDULE_DELAY=50",
		"OTEL_METRIC_EXPORT_INTERVAL=200",
	})
	const (
		toolTrace     = "a1f92f3577b34da6a3ce929d0e0e4701"
		resourceTrace = "a1f92f3577b34da6a3ce929d0e0e4702"
		promptTrace   = "a1f92f3577b34da6a3ce929d0e0e4703"
		failTrace     = "a1f92f3577b34da6a3ce929d0e0e4704"
		unknownTrace  = "a1f92f3577b34da6a3ce929d0e0e4705"
	)
	requests, err := json.Marshal([]map[string]any{
		{"method": "tools/call", "params": map[string]any{"name": "to_roman", "arguments": map[string]any{"number": 2026}}, "traceparent": traceparent(toolTrace)},
		{"method": "resources/read", "params": map[string]any{"uri": "holidays://countries"}, "traceparent": traceparent(resourceTrace)},
		{"method": "prompts/get", "params": map[string]any{"name": "plan_days_off", "arguments": map[string]any{"country": "NO"}}, "traceparent": traceparent(promptTrace)},
		{"method": "tools/call", "params": map[string]any{"name": "to_roman", "arguments": map[string]any{"number": 0}}, "traceparent": traceparent(failTrace)},
		{"method": "tools/call", "params": map[string]any{"name": "no_such_tool", "arguments": map[string]any{}}, "traceparent": traceparent(unknownTrace)},
	})
	require.NoError(t, err)
	code, stdout, stderr := runNode(t, node, dir, "ts-otel.mjs", h.endpoint, string(requests))
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	var report []struct {
		OK     bool           `json:"ok"`
		Code   any            `json:"code"`
		Result map[string]any `json:"result"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &report), stdout)
	require.Len(t, report, 5)
	require.True(t, report[0].OK, stdout)
	require.Contains(t, fmt.Sprint(report[0].Result["content"]), "MMXXVI")
	require.True(t, report[1].OK && report[2].OK, stdout)
	require.Equal(t, true, report[3].Result["isError"], stdout)

	spans, metrics := be.waitFor(t, "the traces and the duration metric", func(spans []recvSpan, metrics map[string]string) bool {
		_, a := chainOf(spans, toolTrace, "tools/call to_roman", "invoke to_roman", "execute_tool to_roman", "roman")
		_, b := chainOf(spans, resourceTrace, "resources/read", "invoke "+holidaysResourceFunction(spans, resourceTrace), "resource holidays://countries")
		_, c := chainOf(spans, promptTrace, "prompts/get plan_days_off", "invoke "+promptFunction(spans, promptTrace), "prompt plan_days_off")
		_, d := chainOf(spans, failTrace, "tools/call to_roman", "invoke to_roman", "execute_tool to_roman")
		_, e := findSpan(spans, func(s recvSpan) bool { return s.traceID == unknownTrace && s.name == "tools/call _OTHER" })
		_, m := metrics["mcp.server.operation.duration"]
		return a && b && c && d && e && m
	})
	call, _ := chainOf(spans, toolTrace, "tools/call to_roman", "invoke to_roman", "execute_tool to_roman", "roman")
	t.Logf("the tools/call trace in the backend:\n%s", renderTrace(spans, toolTrace))
	keepTelemetryFile(t, be)
	server, inv, handler, tool := call[0], call[1], call[2], call[3]
	require.Equal(t, clientSpan, server.parentID, "the server span's parent is the client's _meta traceparent")
	require.Equal(t, "tools/call", server.attrs["mcp.method.name"])
	require.Equal(t, "to_roman", server.attrs["gen_ai.tool.name"])
	require.Equal(t, server.pid, inv.pid, "funchost makes the server and invocation spans")
	require.NotEqual(t, server.pid, handler.pid, "the worker process makes the handler's span")
	require.Equal(t, handler.pid, tool.pid)
	require.Equal(t, "to_roman", handler.attrs["gen_ai.tool.name"])

	// The client streams its calls (Accept: text/event-stream), so funchost
	// answers a tools/call on a resumable stream: the server span ends when
	// the stream starts, before the tool's result, and so carries no
	// error.type of an isError result; the worker's span does.
	chain, _ := chainOf(spans, failTrace, "tools/call to_roman", "invoke to_roman", "execute_tool to_roman")
	require.Equal(t, "tool_error", chain[2].attrs["error.type"])
	_, ok := findSpan(spans, func(s recvSpan) bool { return s.traceID == unknownTrace && s.name == "tools/call _OTHER" })
	require.True(t, ok)
	require.Equal(t, "histogram s", metrics["mcp.server.operation.duration"])

	// At 2025-06-18 a call is answered on its POST, and the server span
	// ends with the answer: error.type is the tool's isError, the JSON-RPC
	// code of an unknown tool.
	const rawFail, rawUnknown = "b1f92f3577b34da6a3ce929d0e0e4706", "b1f92f3577b34da6a3ce929d0e0e4707"
	session, _ := postMCP(t, h.endpoint, "", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	_, out := postMCP(t, h.endpoint, session, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"to_roman","arguments":{"number":0},"_meta":{"traceparent":"`+traceparent(rawFail)+`"}}}`)
	require.Contains(t, out, `"isError":true`)
	_, out = postMCP(t, h.endpoint, session, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"no_such_tool","arguments":{},"_meta":{"traceparent":"`+traceparent(rawUnknown)+`"}}}`)
	require.Contains(t, out, `"error"`)
	spans, _ = be.waitFor(t, "the failed calls' server spans", func(spans []recvSpan, _ map[string]string) bool {
		_, a := findSpan(spans, func(s recvSpan) bool { return s.traceID == rawFail && s.name == "tools/call to_roman" })
		_, b := findSpan(spans, func(s recvSpan) bool { return s.traceID == rawUnknown && s.name == "tools/call _OTHER" })
		return a && b
	})
	failed, _ := findSpan(spans, func(s recvSpan) bool { return s.traceID == rawFail && s.name == "tools/call to_roman" })
	require.Equal(t, "tool_error", failed.attrs["error.type"])
	unknown, _ := findSpan(spans, func(s recvSpan) bool { return s.traceID == rawUnknown && s.name == "tools/call _OTHER" })
	require.Equal(t, "-32602", unknown.attrs["error.type"])
}

// keepTelemetryFile copies the backend's file to FUNCMCP_KEEP_TELEMETRY
// when that is set: the real trace docs/telemetry.md draws
// (tests/otelbackend/waterfall).
func keepTelemetryFile(t *testing.T, be *otelBackend) {
	t.Helper()
	dst := os.Getenv("FUNCMCP_KEEP_TELEMETRY")
	if dst == "" {
		return
	}
	data, err := os.ReadFile(be.file)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(dst, data, 0o644))
	t.Logf("the backend's file is kept in %s", dst)
}

// holidaysResourceFunction and promptFunction name the function an
// invocation span of trace invokes (its faas.invoked_name), "" if none yet.
func holidaysResourceFunction(spans []recvSpan, trace string) string {
	s, _ := findSpan(spans, func(s recvSpan) bool { return s.traceID == trace && strings.HasPrefix(s.name, "invoke ") })
	return strings.TrimPrefix(s.name, "invoke ")
}

func promptFunction(spans []recvSpan, trace string) string {
	return holidaysResourceFunction(spans, trace)
}

// TestTelemetryBackendAcrossInstancesAndTask: two funchost instances with
// the Redis backplane export to the real backend. A legacy SSE client whose
// stream is on A posts a tools/call with params._meta.traceparent to B; the
// backend holds one trace of that id with the chain from a server span to
// the tool's own span. A tools/call that A runs as an MCP task
// (2026-07-28) has its server span and the worker's span of the task run
// in the client's trace.
func TestTelemetryBackendAcrossInstancesAndTask(t *testing.T) {
	be := startOTelBackend(t)
	f := startFleet(t, "redis")
	env := append(slices.Clone(f.env),
		"OTEL_EXPORTER_OTLP_ENDPOINT="+be.url,
		"OTEL_BSP_SCHEDULE_DELAY=50",
		"OTEL_METRIC_EXPORT_INTERVAL=200")
	app := telemetrySample(t)
	a, b := startHostEnv(t, app, env), startHostEnv(t, app, env)

	const crossTrace, taskTrace = "c1f92f3577b34da6a3ce929d0e0e4708", "c1f92f3577b34da6a3ce929d0e0e4709"
	c, _ := openClient(t, 0, a, b)
	code, body, err := postTo(t.Context(), c.post, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"to_roman","arguments":{"number":1999},"_meta":{"traceparent":"`+traceparent(crossTrace)+`"}}}`)
	require.NoError(t, err)
	require.Equal(t, http.StatusAccepted, code, body)
	ev, err := c.stream.Next(clientTimeout)
	require.NoError(t, err)
	require.Contains(t, ev.Data, "MCMXCIX")

	params := map[string]any{"name": "simulate_epidemic", "arguments": map[string]any{"days": 30, "duration_seconds": 1}, "_meta": map[string]any{
		"traceparent": traceparent(taskTrace),
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientCapabilities": map[string]any{"extensions": map[string]any{tasksExtension: map[string]any{}}},
	}}
	req, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(t.Context(), clientTimeout)
	defer cancel()
	ex, err := send(ctx, a.endpoint, string(req), map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "simulate_epidemic"})
	require.NoError(t, err)
	var created taskReply
	require.NoError(t, json.Unmarshal(ex.body, &created), "%d %s", ex.status, ex.body)
	require.Equal(t, `"task"`, string(created.Result["resultType"]), string(ex.body))
	var id string
	require.NoError(t, json.Unmarshal(created.Result["taskId"], &id))
	taskClient{endpoint: a.endpoint}.await(t, id, "completed")

	spans, _ := be.waitFor(t, "the cross-instance call's and the task's spans", func(spans []recvSpan, _ map[string]string) bool {
		_, x := chainOf(spans, crossTrace, "tools/call to_roman", "invoke to_roman", "execute_tool to_roman", "roman")
		_, s := findSpan(spans, func(s recvSpan) bool { return s.traceID == taskTrace && s.name == "tools/call simulate_epidemic" })
		_, w := findSpan(spans, func(s recvSpan) bool { return s.traceID == taskTrace && s.name == "execute_tool simulate_epidemic" })
		return x && s && w
	})
	cross, _ := chainOf(spans, crossTrace, "tools/call to_roman", "invoke to_roman", "execute_tool to_roman", "roman")
	require.Equal(t, clientSpan, cross[0].parentID)
	var pids []string
	for _, s := range spans {
		if s.traceID == crossTrace {
			pids = append(pids, s.name+"@"+s.pid)
		}
	}
	t.Logf("the cross-instance trace: %v", pids)
	server, _ := findSpan(spans, func(s recvSpan) bool { return s.traceID == taskTrace && s.name == "tools/call simulate_epidemic" })
	require.Equal(t, clientSpan, server.parentID)
	run, _ := findSpan(spans, func(s recvSpan) bool { return s.traceID == taskTrace && s.name == "execute_tool simulate_epidemic" })
	require.NotEqual(t, server.pid, run.pid, "the task's run is in the worker")
}

// renderTrace draws the spans of trace as a tree, each with its process and
// a few attributes: the text docs/telemetry.md shows of a real trace.
func renderTrace(spans []recvSpan, trace string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "trace %s\n", trace)
	var walk func(parent, indent string)
	walk = func(parent, indent string) {
		for _, s := range spans {
			if s.traceID != trace || s.parentID != parent {
				continue
			}
			var keys []string
			for k := range s.attrs {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			var attrs []string
			for _, k := range keys {
				attrs = append(attrs, k+"="+s.attrs[k])
			}
			fmt.Fprintf(&b, "%s└─ %s  [span %s, pid %s]\n%s     %s\n", indent, s.name, s.spanID, s.pid, indent, strings.Join(attrs, " "))
			walk(s.spanID, indent+"   ")
		}
	}
	walk(clientSpan, "")
	return b.String()
}
