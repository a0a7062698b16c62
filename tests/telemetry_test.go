package tests

import (
	"compress/gzip"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	collmetrics "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	colltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	"google.golang.org/protobuf/proto"
)

// otlpReceiver is a minimal OTLP/HTTP (protobuf) backend on 127.0.0.1: it
// decodes what the real exporters of funchost and the worker send to
// /v1/traces and /v1/metrics and keeps the spans and metric names.
type otlpReceiver struct {
	url     string
	mu      sync.Mutex
	spans   []recvSpan
	metrics map[string]string // name → unit
	changed chan struct{}
}

type recvSpan struct {
	traceID, spanID, parentID string
	name                      string
	attrs                     map[string]string
	pid                       string // the resource's process.pid
	links                     []string
}

func startOTLPReceiver(t *testing.T) *otlpReceiver {
	t.Helper()
	rc := &otlpReceiver{metrics: map[string]string{}, changed: make(chan struct{}, 1)}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &http.Server{Handler: http.HandlerFunc(rc.serve), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	rc.url = "http://" + l.Addr().String()
	return rc
}

func (rc *otlpReceiver) serve(w http.ResponseWriter, r *http.Request) {
	var body io.Reader = r.Body
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = zr
	}
	data, err := io.ReadAll(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var reply proto.Message
	switch r.URL.Path {
	case "/v1/traces":
		var req colltrace.ExportTraceServiceRequest
		if err := proto.Unmarshal(data, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		rc.addSpans(&req)
		reply = &colltrace.ExportTraceServiceResponse{}
	case "/v1/metrics":
		var req collmetrics.ExportMetricsServiceRequest
		if err := proto.Unmarshal(data, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		rc.mu.Lock()
		for _, rm := range req.ResourceMetrics {
			for _, sm := range rm.ScopeMetrics {
				for _, m := range sm.Metrics {
					rc.metrics[m.Name] = m.Unit
				}
			}
		}
		rc.mu.Unlock()
		reply = &collmetrics.ExportMetricsServiceResponse{}
	default:
		http.NotFound(w, r)
		return
	}
	select {
	case rc.changed <- struct{}{}:
	default:
	}
	out, _ := proto.Marshal(reply)
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

func attrMap(kvs []*commonpb.KeyValue) map[string]string {
	m := map[string]string{}
	for _, kv := range kvs {
		switch v := kv.Value.GetValue().(type) {
		case *commonpb.AnyValue_StringValue:
			m[kv.Key] = v.StringValue
		case *commonpb.AnyValue_IntValue:
			m[kv.Key] = fmt.Sprint(v.IntValue)
		default:
			m[kv.Key] = kv.Value.String()
		}
	}
	return m
}

func (rc *otlpReceiver) addSpans(req *colltrace.ExportTraceServiceRequest) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for _, rs := range req.ResourceSpans {
		pid := attrMap(rs.GetResource().GetAttributes())["process.pid"]
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				sp := recvSpan{traceID: hex.EncodeToString(s.TraceId), spanID: hex.EncodeToString(s.SpanId),
					parentID: hex.EncodeToString(s.ParentSpanId), name: s.Name, attrs: attrMap(s.Attributes), pid: pid}
				for _, l := range s.Links {
					sp.links = append(sp.links, hex.EncodeToString(l.TraceId))
				}
				rc.spans = append(rc.spans, sp)
			}
		}
	}
}

// waitFor polls (on each export, bounded by a deadline) until done
// reports true of what arrived.
func (rc *otlpReceiver) waitFor(t *testing.T, what string, done func(spans []recvSpan, metrics map[string]string) bool) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		rc.mu.Lock()
		ok := done(rc.spans, rc.metrics)
		rc.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-rc.changed:
		case <-deadline:
			rc.mu.Lock()
			defer rc.mu.Unlock()
			var names []string
			for _, s := range rc.spans {
				names = append(names, s.traceID+" "+s.name)
			}
			t.Fatalf("%s did not arrive within 30s; spans: %v; metrics: %v", what, names, rc.metrics)
		}
	}
}

func findSpan(spans []recvSpan, match func(recvSpan) bool) (recvSpan, bool) {
	for _, s := range spans {
		if match(s) {
			return s, true
		}
	}
	return recvSpan{}, false
}

// telemetrySample is the sample app with "telemetryMode": "OpenTelemetry".
func telemetrySample(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "host.json"))
	require.NoError(t, err)
	var doc map[string]any
	require.NoError(t, json.Unmarshal(data, &doc))
	doc["telemetryMode"] = "OpenTelemetry"
	hostJSON, err := json.Marshal(doc)
	require.NoError(t, err)
	app, err := buildApp("sample-telemetry", modulePath+"/function-app-sample", hostJSON)
	require.NoError(t, err)
	return app
}

func postMCP(t *testing.T, url, session, body string) (string, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	}
	resp, err := postClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(b))
	return resp.Header.Get("Mcp-Session-Id"), string(b)
}

// TestTelemetryOneTraceFromClientToTool runs the real funchost and sample
// worker with telemetry on, exporting to an OTLP/HTTP receiver of the
// test: a tools/call whose params._meta carries a traceparent makes one
// trace of that id, funchost's SERVER span → its invocation span → the
// worker's span around the handler → the span the tool makes itself, the
// worker's spans from another process; a prompts/get and a resources/read
// make the same chain in their clients' traces; a failing call has its error.type;
// mcp.server.operation.duration arrives in seconds.
func TestTelemetryOneTraceFromClientToTool(t *testing.T) {
	rc := startOTLPReceiver(t)
	app := telemetrySample(t)
	h := startHostEnv(t, app, []string{
		"OTEL_EXPORTER_OTLP_ENDPOINT=" + rc.url,
		"OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf",
		"OTEL_BSP_SCHEDULE_DELAY=50",
		"OTEL_METRIC_EXPORT_INTERVAL=200",
		"OTEL_TRACES_SAMPLER=always_on",
	})
	const clientTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	session, _ := postMCP(t, h.endpoint, "", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	require.NotEmpty(t, session)
	_, out := postMCP(t, h.endpoint, session, `{"jsonrpc":"2.0","id":"call-1","method":"tools/call","params":{"name":"to_roman","arguments":{"number":2026},"_meta":{"traceparent":"00-`+clientTrace+`-00f067aa0ba902b7-01"}}}`)
	require.Contains(t, out, "MMXXVI")
	_, out = postMCP(t, h.endpoint, session, `{"jsonrpc":"2.0","id":"call-2","method":"tools/call","params":{"name":"to_roman","arguments":{"number":0}}}`)
	require.Contains(t, out, `"isError":true`)
	_, out = postMCP(t, h.endpoint, session, `{"jsonrpc":"2.0","id":"call-3","method":"tools/call","params":{"name":"no_such_tool","arguments":{}}}`)
	require.Contains(t, out, `"error"`)

	const promptTrace, resourceTrace = "5bf92f3577b34da6a3ce929d0e0e4737", "6bf92f3577b34da6a3ce929d0e0e4738"
	_, out = postMCP(t, h.endpoint, session, `{"jsonrpc":"2.0","id":"p-1","method":"prompts/get","params":{"name":"plan_days_off","arguments":{"country":"NO"},"_meta":{"traceparent":"00-`+promptTrace+`-00f067aa0ba902b7-01"}}}`)
	require.Contains(t, out, `"messages"`)
	_, out = postMCP(t, h.endpoint, session, `{"jsonrpc":"2.0","id":"r-1","method":"resources/read","params":{"uri":"holidays://countries","_meta":{"traceparent":"00-`+resourceTrace+`-00f067aa0ba902b7-01"}}}`)
	require.Contains(t, out, `"contents"`)

	inTrace := func(name string) func(recvSpan) bool {
		return func(s recvSpan) bool { return s.traceID == clientTrace && s.name == name }
	}
	rc.waitFor(t, "the call's four spans", func(spans []recvSpan, _ map[string]string) bool {
		for _, n := range []string{"tools/call to_roman", "invoke to_roman", "execute_tool to_roman", "roman"} {
			if _, ok := findSpan(spans, inTrace(n)); !ok {
				return false
			}
		}
		return true
	})
	// A prompt and a resource read: the same chain, server span → invocation
	// → the worker's span around the handler, in the client's trace.
	chain := func(trace, server, worker string) func([]recvSpan, map[string]string) bool {
		return func(spans []recvSpan, _ map[string]string) bool {
			srv, ok1 := findSpan(spans, func(s recvSpan) bool { return s.traceID == trace && s.name == server })
			inv, ok2 := findSpan(spans, func(s recvSpan) bool { return s.traceID == trace && strings.HasPrefix(s.name, "invoke ") })
			wrk, ok3 := findSpan(spans, func(s recvSpan) bool { return s.traceID == trace && s.name == worker })
			return ok1 && ok2 && ok3 && inv.parentID == srv.spanID && wrk.parentID == inv.spanID
		}
	}
	rc.waitFor(t, "the prompt's chain of spans", chain(promptTrace, "prompts/get plan_days_off", "prompt plan_days_off"))
	rc.waitFor(t, "the resource read's chain of spans", chain(resourceTrace, "resources/read", "resource holidays://countries"))

	rc.waitFor(t, "the failing calls' spans and the duration metric", func(spans []recvSpan, metrics map[string]string) bool {
		_, a := findSpan(spans, func(s recvSpan) bool { return s.attrs["jsonrpc.request.id"] == "call-2" })
		_, b := findSpan(spans, func(s recvSpan) bool { return s.attrs["jsonrpc.request.id"] == "call-3" })
		_, m := metrics["mcp.server.operation.duration"]
		return a && b && m
	})

	rc.mu.Lock()
	defer rc.mu.Unlock()
	server, _ := findSpan(rc.spans, inTrace("tools/call to_roman"))
	inv, _ := findSpan(rc.spans, inTrace("invoke to_roman"))
	handler, _ := findSpan(rc.spans, inTrace("execute_tool to_roman"))
	tool, _ := findSpan(rc.spans, inTrace("roman"))
	assert.Equal(t, "00f067aa0ba902b7", server.parentID, "the server span's parent is the _meta traceparent")
	assert.Equal(t, []string{"0af7651916cd43dd8448eb211c80319c"}, server.links, "the HTTP traceparent is a link")
	assert.Equal(t, server.spanID, inv.parentID)
	assert.Equal(t, inv.spanID, handler.parentID)
	assert.Equal(t, handler.spanID, tool.parentID)
	assert.Equal(t, "tools/call", server.attrs["mcp.method.name"])
	assert.Equal(t, "to_roman", server.attrs["gen_ai.tool.name"])
	assert.Equal(t, "call-1", server.attrs["jsonrpc.request.id"])
	assert.Equal(t, session, server.attrs["mcp.session.id"])
	assert.Equal(t, "2025-06-18", server.attrs["mcp.protocol.version"])
	assert.NotEmpty(t, server.pid)
	assert.Equal(t, server.pid, inv.pid)
	assert.NotEqual(t, server.pid, handler.pid, "the handler's span comes from the worker process")
	assert.Equal(t, handler.pid, tool.pid)

	failed, _ := findSpan(rc.spans, func(s recvSpan) bool { return s.attrs["jsonrpc.request.id"] == "call-2" })
	assert.Equal(t, "tool_error", failed.attrs["error.type"])
	assert.Equal(t, "0af7651916cd43dd8448eb211c80319c", failed.traceID, "without _meta the HTTP traceparent is the parent")
	unknown, _ := findSpan(rc.spans, func(s recvSpan) bool { return s.attrs["jsonrpc.request.id"] == "call-3" })
	assert.Equal(t, "-32602", unknown.attrs["error.type"])
	assert.Equal(t, "s", rc.metrics["mcp.server.operation.duration"])
}

// TestTelemetryFromLocalSettings: with the OTEL_* settings only in
// local.settings.json Values (as func start reads them: they become the
// environment of the host and of the worker), funchost exports its spans
// and the worker its own, to the endpoint the Values name.
func TestTelemetryFromLocalSettings(t *testing.T) {
	rc := startOTLPReceiver(t)
	app := filepath.Join(t.TempDir(), "app")
	require.NoError(t, os.CopyFS(app, os.DirFS(telemetrySample(t))))
	settings, err := json.Marshal(map[string]any{"IsEncrypted": false, "Values": map[string]string{
		"FUNCTIONS_WORKER_RUNTIME":    "custom",
		"OTEL_EXPORTER_OTLP_ENDPOINT": rc.url,
		"OTEL_BSP_SCHEDULE_DELAY":     "50",
		"OTEL_METRIC_EXPORT_INTERVAL": "200",
	}})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(app, "local.settings.json"), settings, 0o600))
	h := startHost(t, app)

	const clientTrace = "7bf92f3577b34da6a3ce929d0e0e4739"
	session, _ := postMCP(t, h.endpoint, "", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	_, out := postMCP(t, h.endpoint, session, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"to_roman","arguments":{"number":12},"_meta":{"traceparent":"00-`+clientTrace+`-00f067aa0ba902b7-01"}}}`)
	require.Contains(t, out, "XII")
	rc.waitFor(t, "funchost's and the worker's spans", func(spans []recvSpan, metrics map[string]string) bool {
		_, host := findSpan(spans, func(s recvSpan) bool { return s.traceID == clientTrace && s.name == "tools/call to_roman" })
		_, wrk := findSpan(spans, func(s recvSpan) bool { return s.traceID == clientTrace && s.name == "execute_tool to_roman" })
		_, m := metrics["mcp.server.operation.duration"]
		return host && wrk && m
	})
}
