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

	"github.com/funcmcp/funcmcp/internal/testutil"
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
	pid                       string   // the resource's process.pid
	links                     []string // the trace ids of the links
	linkSpans                 []string // the span ids of the links
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
					sp.linkSpans = append(sp.linkSpans, hex.EncodeToString(l.SpanId))
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

// TestTelemetryOperatorSignals runs the real funchost and sample worker
// with telemetry on: a tools/call's validations that pass in a few
// microseconds make no span, one that fails is a span under its SERVER
// span with error.type; the host's console
// line of the call carries its trace_id and span_id; a session that ends
// (a DELETE of its Mcp-Session-Id, a legacy SSE stream that closes) is
// measured in mcp.server.session.duration; a refused request (an Origin
// not allowed) is counted in funcmcp.requests.refused; the calls in flight
// and the running tasks are reported. Each metric arrives with its unit.
func TestTelemetryOperatorSignals(t *testing.T) {
	rc := startOTLPReceiver(t)
	app := telemetrySample(t)
	h := startHostEnv(t, app, []string{
		"OTEL_EXPORTER_OTLP_ENDPOINT=" + rc.url,
		"OTEL_BSP_SCHEDULE_DELAY=50",
		"OTEL_METRIC_EXPORT_INTERVAL=200",
		"OTEL_TRACES_SAMPLER=always_on",
	})
	const clientTrace = "7bf92f3577b34da6a3ce929d0e0e4739"
	session, _ := postMCP(t, h.endpoint, "", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	require.NotEmpty(t, session)
	_, out := postMCP(t, h.endpoint, session, `{"jsonrpc":"2.0","id":"p1","method":"tools/call","params":{"name":"primes","arguments":{"to":20},"_meta":{"traceparent":"00-`+clientTrace+`-00f067aa0ba902b7-01"}}}`)
	require.Contains(t, out, `"structuredContent"`)
	// A call whose arguments do not match the input schema (refused).
	const badTrace = "3cf92f3577b34da6a3ce929d0e0e4740"
	_, out = postMCP(t, h.endpoint, session, `{"jsonrpc":"2.0","id":"p2","method":"tools/call","params":{"name":"primes","arguments":{"to":"twenty"},"_meta":{"traceparent":"00-`+badTrace+`-00f067aa0ba902b7-01"}}}`)
	require.Contains(t, out, `"code":-32602`, "refused: the arguments do not match the input schema")

	// The client ends its session.
	del, err := http.NewRequest(http.MethodDelete, h.endpoint, nil)
	require.NoError(t, err)
	del.Header.Set("Mcp-Session-Id", session)
	resp, err := postClient.Do(del)
	require.NoError(t, err)
	_ = resp.Body.Close()

	// A legacy SSE session that opens and closes.
	st, err := testutil.OpenSSE(t.Context(), h.endpoint+"/sse", nil)
	require.NoError(t, err)
	st.Close()

	// A request from an Origin the host does not allow.
	bad, err := http.NewRequest(http.MethodPost, h.endpoint, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	require.NoError(t, err)
	bad.Header.Set("Content-Type", "application/json")
	bad.Header.Set("Origin", "http://elsewhere.invalid")
	resp, err = postClient.Do(bad)
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusForbidden, resp.StatusCode)

	inTrace := func(name string) func(recvSpan) bool {
		return func(s recvSpan) bool { return s.traceID == clientTrace && s.name == name }
	}
	inBad := func(name string) func(recvSpan) bool {
		return func(s recvSpan) bool { return s.traceID == badTrace && s.name == name }
	}
	rc.waitFor(t, "the calls' spans", func(spans []recvSpan, _ map[string]string) bool {
		for _, n := range []string{"tools/call primes", "invoke primes"} {
			if _, ok := findSpan(spans, inTrace(n)); !ok {
				return false
			}
		}
		_, ok := findSpan(spans, inBad("validate input"))
		return ok
	})
	wantMetrics := map[string]string{
		"mcp.server.operation.duration": "s",
		"mcp.server.session.duration":   "s",
		"funcmcp.requests.refused":      "{request}",
		"funcmcp.calls.in_flight":       "{call}",
		"funcmcp.tasks.running":         "{task}",
	}
	rc.waitFor(t, "the metrics", func(_ []recvSpan, metrics map[string]string) bool {
		for name := range wantMetrics {
			if _, ok := metrics[name]; !ok {
				return false
			}
		}
		return true
	})

	rc.mu.Lock()
	server, _ := findSpan(rc.spans, inTrace("tools/call primes"))
	inv, _ := findSpan(rc.spans, inTrace("invoke primes"))
	badServer, _ := findSpan(rc.spans, inBad("tools/call primes"))
	in, _ := findSpan(rc.spans, inBad("validate input"))
	for name, unit := range wantMetrics {
		assert.Equal(t, unit, rc.metrics[name], name)
	}
	rc.mu.Unlock()
	// Whether a passing validation makes a span depends on how long it took
	// (TestValidationSpanOnlyWhenMeasurable); a refused one always does.
	assert.Equal(t, server.spanID, inv.parentID)
	assert.Equal(t, badServer.spanID, in.parentID, "input validation is a child of the server span")
	assert.Equal(t, "primes", in.attrs["gen_ai.tool.name"])
	assert.Equal(t, "input_schema", in.attrs["error.type"])
	assert.Equal(t, "strict", in.attrs["funcmcp.validation.mode"])

	// The host's line of the call names its trace and span.
	require.Eventually(t, func() bool {
		return strings.Contains(h.console.String(), "trace_id="+clientTrace+" span_id="+server.spanID)
	}, 10*time.Second, 20*time.Millisecond, "the call's console line carries trace_id and span_id; console:\n%s", h.console.String())
	for _, line := range strings.Split(h.console.String(), "\n") {
		if strings.Contains(line, "Executed 'Functions.primes'") {
			assert.Contains(t, line, "trace_id="+clientTrace, line)
		}
	}
}

// TestTelemetryTaskRunAndItsLaterGet: a tools/call the client runs as a
// task (2026-07-28, the sample's simulate_epidemic) has a "task run" span
// under its SERVER span, which holds the invocation of the worker and
// names the task; the client's later tasks/get, in a trace of its own,
// links to that run span; the task's end is counted in
// funcmcp.tasks.finished.
func TestTelemetryTaskRunAndItsLaterGet(t *testing.T) {
	rc := startOTLPReceiver(t)
	h := startHostEnv(t, telemetrySample(t), []string{
		"OTEL_EXPORTER_OTLP_ENDPOINT=" + rc.url,
		"OTEL_BSP_SCHEDULE_DELAY=50",
		"OTEL_METRIC_EXPORT_INTERVAL=200",
		"OTEL_TRACES_SAMPLER=always_on",
	})
	c := taskClient{endpoint: h.endpoint}
	id := c.create(t, "simulate_epidemic", map[string]any{"duration_seconds": 1, "days": 10})
	c.await(t, id, "completed")

	var server, run, inv, get recvSpan
	rc.waitFor(t, "the task's spans and funcmcp.tasks.finished", func(spans []recvSpan, metrics map[string]string) bool {
		var ok1, ok2, ok3, ok4 bool
		run, ok1 = findSpan(spans, func(s recvSpan) bool { return s.name == "task run" && s.attrs["mcp.task.id"] == id })
		server, ok2 = findSpan(spans, func(s recvSpan) bool { return s.name == "tools/call simulate_epidemic" && s.spanID == run.parentID })
		inv, ok3 = findSpan(spans, func(s recvSpan) bool { return s.name == "invoke simulate_epidemic" && s.parentID == run.spanID })
		get, ok4 = findSpan(spans, func(s recvSpan) bool { return s.name == "tasks/get" && len(s.linkSpans) > 0 })
		_, m := metrics["funcmcp.tasks.finished"]
		return ok1 && ok2 && ok3 && ok4 && m
	})
	assert.Equal(t, run.traceID, server.traceID)
	assert.Equal(t, run.traceID, inv.traceID)
	assert.Equal(t, "completed", run.attrs["mcp.task.status"])
	assert.Equal(t, "simulate_epidemic", run.attrs["gen_ai.tool.name"])
	assert.Equal(t, []string{run.traceID}, get.links, "tasks/get links to the run's trace")
	assert.Equal(t, []string{run.spanID}, get.linkSpans, "and to the run span itself")
	assert.NotEqual(t, run.traceID, get.traceID, "the get is a trace of its own")
	rc.mu.Lock()
	assert.Equal(t, "{task}", rc.metrics["funcmcp.tasks.finished"])
	rc.mu.Unlock()
}

// TestTelemetryBackplaneHop runs two real funchost instances on the redis
// backplane with telemetry on: a legacy SSE client's message posted to
// instance B, whose stream is on A, is a PRODUCER span on B in the trace
// of the POST's traceparent, a CONSUMER span on A that is its child, and
// the message's SERVER span on A is the consumer's child;
// funcmcp.backplane.delivery.lag arrives in seconds.
func TestTelemetryBackplaneHop(t *testing.T) {
	rc := startOTLPReceiver(t)
	f := startFleet(t, "redis")
	app := telemetrySample(t)
	env := append(append([]string(nil), f.env...),
		"OTEL_EXPORTER_OTLP_ENDPOINT="+rc.url,
		"OTEL_BSP_SCHEDULE_DELAY=50",
		"OTEL_METRIC_EXPORT_INTERVAL=200",
		"OTEL_TRACES_SAMPLER=always_on")
	a := startHostEnv(t, app, env)
	b := startHostEnv(t, app, env)
	c, _ := openClient(t, 1, a, b)

	const clientTrace, clientSpan = "8bf92f3577b34da6a3ce929d0e0e473a", "00f067aa0ba902b8"
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, c.post, strings.NewReader(pingMessage(7)))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Traceparent", "00-"+clientTrace+"-"+clientSpan+"-01")
	resp, err := postClient.Do(req)
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusAccepted, resp.StatusCode)
	ev, err := c.stream.Next(clientTimeout)
	require.NoError(t, err)
	require.Contains(t, ev.Data, `"id":7,`, "the ping is answered on the stream")

	var send, process, server recvSpan
	rc.waitFor(t, "the hop's spans and the lag", func(spans []recvSpan, metrics map[string]string) bool {
		var ok1, ok2, ok3 bool
		send, ok1 = findSpan(spans, func(s recvSpan) bool { return s.traceID == clientTrace && strings.HasPrefix(s.name, "send ") })
		process, ok2 = findSpan(spans, func(s recvSpan) bool {
			return s.traceID == clientTrace && strings.HasPrefix(s.name, "process ") && s.parentID == send.spanID
		})
		server, ok3 = findSpan(spans, func(s recvSpan) bool { return s.traceID == clientTrace && s.name == "ping" })
		_, m := metrics["funcmcp.backplane.delivery.lag"]
		return ok1 && ok2 && ok3 && m
	})
	assert.Equal(t, process.spanID, server.parentID, "the message's server span is the receipt's child")
	assert.Equal(t, process.pid, server.pid)
	assert.Equal(t, clientSpan, send.parentID, "the send continues the POST's traceparent")
	assert.NotEqual(t, send.pid, process.pid, "the two ends are two processes")
	assert.Equal(t, "redis", send.attrs["funcmcp.backplane"])
	assert.Equal(t, "taken", process.attrs["funcmcp.backplane.outcome"])
	assert.Equal(t, strings.TrimPrefix(send.name, "send "), strings.TrimPrefix(process.name, "process "))
	rc.mu.Lock()
	assert.Equal(t, "s", rc.metrics["funcmcp.backplane.delivery.lag"])
	rc.mu.Unlock()
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
