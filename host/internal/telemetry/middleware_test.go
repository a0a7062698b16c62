package telemetry

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/funcmcp/funcmcp/host/internal/mcp"
	"github.com/funcmcp/funcmcp/metadata"
)

const (
	metaTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	httpTrace = "0af7651916cd43dd8448eb211c80319c"
)

type recorded struct {
	spans  *tracetest.InMemoryExporter
	reader *sdkmetric.ManualReader
	tel    *Telemetry
}

func newRecorded(t *testing.T) *recorded {
	spans := tracetest.NewInMemoryExporter()
	reader := sdkmetric.NewManualReader()
	tel, err := newTelemetry(sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans)), sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)))
	require.NoError(t, err)
	t.Cleanup(func() { _ = tel.Shutdown(context.Background()) })
	return &recorded{spans: spans, reader: reader, tel: tel}
}

// endpoint is an MCP endpoint with the telemetry link whose tool "greet"
// answers, "fails" answers isError, and any other is unknown (-32602). The
// tool records the span context it was called under.
func (rc *recorded) endpoint(seen *trace.SpanContext) http.Handler {
	return mcp.NewHandler(mcp.Server{
		ToolsList: func(string) json.RawMessage {
			return json.RawMessage(`[{"name":"greet","inputSchema":{"type":"object"}}]`)
		},
		CallTool: func(ctx context.Context, req *mcp.CallRequest) (*metadata.CallToolResult, error) {
			*seen = trace.SpanContextFromContext(ctx)
			switch req.Name {
			case "greet":
				return &metadata.CallToolResult{Content: []json.RawMessage{metadata.TextContent("hi")}}, nil
			case "fails":
				return &metadata.CallToolResult{IsError: true, Content: []json.RawMessage{metadata.TextContent("no")}}, nil
			}
			return nil, &mcp.ProtocolError{Code: mcp.CodeInvalidParams, Message: "Unknown tool"}
		},
		Known: knownTools("greet", "fails"),
	}, &mcp.Options{Middleware: rc.tel.Middleware()})
}

func post(h http.Handler, body string, header http.Header) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, "/runtime/webhooks/mcp", strings.NewReader(body))
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range header {
		req.Header[k] = v
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func attrs(s sdktrace.ReadOnlySpan) map[attribute.Key]string {
	m := map[attribute.Key]string{}
	for _, kv := range s.Attributes() {
		m[kv.Key] = kv.Value.Emit()
	}
	return m
}

func TestServerSpanParentIsMetaTraceparentWithHTTPAsLink(t *testing.T) {
	rc := newRecorded(t)
	var seen trace.SpanContext
	h := rc.endpoint(&seen)
	init := post(h, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, nil)
	sid := init.Header().Get("Mcp-Session-Id")
	require.NotEmpty(t, sid)
	post(h, `{"jsonrpc":"2.0","id":"c1","method":"tools/call","params":{"name":"greet","arguments":{},"_meta":{"traceparent":"00-`+metaTrace+`-00f067aa0ba902b7-01"}}}`,
		http.Header{"Traceparent": {"00-" + httpTrace + "-b7ad6b7169203331-01"}, "Mcp-Session-Id": {sid}, "Mcp-Protocol-Version": {"2025-06-18"}})

	spans := rc.spans.GetSpans().Snapshots()
	require.Len(t, spans, 2)
	assert.Equal(t, "initialize", spans[0].Name())
	s := spans[1]
	assert.Equal(t, "tools/call greet", s.Name())
	assert.Equal(t, trace.SpanKindServer, s.SpanKind())
	assert.Equal(t, metaTrace, s.SpanContext().TraceID().String())
	assert.Equal(t, "00f067aa0ba902b7", s.Parent().SpanID().String())
	require.Len(t, s.Links(), 1)
	assert.Equal(t, httpTrace, s.Links()[0].SpanContext.TraceID().String())
	a := attrs(s)
	assert.Equal(t, "tools/call", a["mcp.method.name"])
	assert.Equal(t, "greet", a["gen_ai.tool.name"])
	assert.Equal(t, "execute_tool", a["gen_ai.operation.name"])
	assert.Equal(t, "c1", a["jsonrpc.request.id"])
	assert.Equal(t, sid, a["mcp.session.id"])
	assert.Equal(t, "2025-06-18", a["mcp.protocol.version"])
	assert.NotContains(t, a, attribute.Key("error.type"))
	assert.Equal(t, codes.Unset, s.Status().Code)
	// The handler ran under the server span.
	assert.Equal(t, s.SpanContext().SpanID(), seen.SpanID())
}

func TestServerSpanParentIsHTTPTraceparentWithoutMeta(t *testing.T) {
	rc := newRecorded(t)
	var seen trace.SpanContext
	post(rc.endpoint(&seen), `{"jsonrpc":"2.0","id":7,"method":"tools/list"}`,
		http.Header{"Traceparent": {"00-" + httpTrace + "-b7ad6b7169203331-01"}})
	spans := rc.spans.GetSpans().Snapshots()
	require.Len(t, spans, 1)
	assert.Equal(t, "tools/list", spans[0].Name())
	assert.Equal(t, httpTrace, spans[0].SpanContext().TraceID().String())
	assert.Empty(t, spans[0].Links())
	assert.Equal(t, "7", attrs(spans[0])["jsonrpc.request.id"])
}

func TestServerSpanErrorType(t *testing.T) {
	rc := newRecorded(t)
	var seen trace.SpanContext
	h := rc.endpoint(&seen)
	post(h, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"wave","arguments":{}}}`, nil)
	post(h, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"fails","arguments":{}}}`, nil)
	spans := rc.spans.GetSpans().Snapshots()
	require.Len(t, spans, 2)
	assert.Equal(t, "-32602", attrs(spans[0])["error.type"])
	assert.Equal(t, "-32602", attrs(spans[0])["rpc.response.status_code"])
	assert.Equal(t, codes.Error, spans[0].Status().Code)
	assert.Equal(t, "tool_error", attrs(spans[1])["error.type"])
	assert.Equal(t, codes.Error, spans[1].Status().Code)
}

func TestOperationDurationMetric(t *testing.T) {
	rc := newRecorded(t)
	var seen trace.SpanContext
	h := rc.endpoint(&seen)
	post(h, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"greet","arguments":{}}}`, nil)
	post(h, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"fails","arguments":{}}}`, nil)

	var rm metricdata.ResourceMetrics
	require.NoError(t, rc.reader.Collect(context.Background(), &rm))
	require.Len(t, rm.ScopeMetrics, 1)
	var found *metricdata.Metrics
	for i, m := range rm.ScopeMetrics[0].Metrics {
		if m.Name == "mcp.server.operation.duration" {
			found = &rm.ScopeMetrics[0].Metrics[i]
		}
	}
	require.NotNil(t, found)
	assert.Equal(t, "s", found.Unit)
	hist, ok := found.Data.(metricdata.Histogram[float64])
	require.True(t, ok)
	require.Len(t, hist.DataPoints, 2) // one without error.type, one with tool_error
	assert.Equal(t, DurationBuckets, hist.DataPoints[0].Bounds)
	var errorTypes []string
	for _, dp := range hist.DataPoints {
		v, _ := dp.Attributes.Value("error.type")
		errorTypes = append(errorTypes, v.Emit())
		m, _ := dp.Attributes.Value("mcp.method.name")
		assert.Equal(t, "tools/call", m.Emit())
	}
	assert.ElementsMatch(t, []string{"", "tool_error"}, errorTypes)
}

func TestOffIsNil(t *testing.T) {
	tel, err := New(context.Background(), "", "funchost", nil)
	require.NoError(t, err)
	assert.Nil(t, tel)
	assert.Nil(t, tel.Middleware())
	assert.Nil(t, tel.InvokeTrace())
	assert.NoError(t, tel.Shutdown(context.Background()))
	t.Setenv("OTEL_SDK_DISABLED", "true")
	tel, err = New(context.Background(), "OpenTelemetry", "funchost", nil)
	require.NoError(t, err)
	assert.Nil(t, tel)
}

func TestGRPCProtocolRefused(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
	_, err := New(context.Background(), "OpenTelemetry", "funchost", nil)
	var pe *ProtocolError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "OTEL_EXPORTER_OTLP_PROTOCOL", pe.Variable)
}

func TestInvokeTraceSendsTraceparentOfItsChildSpan(t *testing.T) {
	rc := newRecorded(t)
	ctx, server := rc.tel.tracer.Start(context.Background(), "server")
	_, h, end := rc.tel.InvokeTrace()(ctx, "greet")
	end(nil)
	server.End()
	spans := rc.spans.GetSpans().Snapshots()
	require.Len(t, spans, 2)
	inv := spans[0]
	assert.Equal(t, "invoke greet", inv.Name())
	assert.Equal(t, server.SpanContext().SpanID(), inv.Parent().SpanID())
	assert.Equal(t, "00-"+inv.SpanContext().TraceID().String()+"-"+inv.SpanContext().SpanID().String()+"-01", h.Get("Traceparent"))
}

// TestTraceHeadersAreThePropagators: the invocation's trace headers,
// written straight from the span context, are what the W3C propagator
// writes: traceparent alone, then with tracestate and baggage.
func TestTraceHeadersAreThePropagators(t *testing.T) {
	rc := newRecorded(t)
	tid, _ := trace.TraceIDFromHex("4bf92f3577b34da6a3ce929d0e0e4736")
	sid, _ := trace.SpanIDFromHex("00f067aa0ba902b7")
	ts, err := trace.ParseTraceState("vendor=a,other=b")
	require.NoError(t, err)
	bag, err := baggage.Parse("user=alice") // one member: a baggage of several is written in map order
	require.NoError(t, err)
	for _, c := range []struct {
		name string
		sc   trace.SpanContext
		bag  bool
	}{
		{"traceparent only", trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled}), false},
		{"not sampled", trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid}), false},
		{"flags beyond sampled and random", trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: 0x09 | trace.FlagsRandom}), false},
		{"tracestate and baggage", trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled, TraceState: ts}), true},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := trace.ContextWithSpanContext(context.Background(), c.sc)
			if c.bag {
				ctx = baggage.ContextWithBaggage(ctx, bag)
			}
			want := http.Header{}
			rc.tel.prop.Inject(ctx, propagation.HeaderCarrier(want))
			assert.Equal(t, want, traceHeaders(ctx, c.sc))
		})
	}
	assert.Nil(t, traceHeaders(context.Background(), trace.SpanContext{}), "no span context, no headers")
}

// TestServerSpanAllocations: what the link adds to a tools/call, 100%
// sampled: the SERVER span with its attributes, its parent read from
// _meta, the duration recorded. The attributes are copied into the span
// once; the _meta trace context is read without building a map; the
// span's name and the duration's attribute set are made once per tool.
func TestServerSpanAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under the race detector; make test runs this without it")
	}
	on := benchOn(t)
	off := testing.AllocsPerRun(200, greetCall(nil))
	with := testing.AllocsPerRun(200, greetCall(on))
	assert.LessOrEqual(t, with-off, 19.0, "allocations the link adds to a call (off %.0f, on %.0f)", off, with)
}

// TestServerSpanReadsMetaTracestateAndBaggage: the tracestate and baggage
// of params._meta come with its traceparent: the span continues the
// tracestate and the handler's context carries the baggage.
func TestServerSpanReadsMetaTracestateAndBaggage(t *testing.T) {
	rc := newRecorded(t)
	var bag baggage.Baggage
	h := mcp.NewHandler(mcp.Server{
		ToolsList: func(string) json.RawMessage {
			return json.RawMessage(`[{"name":"greet","inputSchema":{"type":"object"}}]`)
		},
		CallTool: func(ctx context.Context, _ *mcp.CallRequest) (*metadata.CallToolResult, error) {
			bag = baggage.FromContext(ctx)
			return &metadata.CallToolResult{Content: []json.RawMessage{metadata.TextContent("hi")}}, nil
		},
		Known: knownTools("greet"),
	}, &mcp.Options{Middleware: rc.tel.Middleware()})
	post(h, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"greet","arguments":{},"_meta":{"traceparent":"00-`+metaTrace+`-00f067aa0ba902b7-01","tracestate":"vendor=abc","baggage":"user=alice"}}}`, nil)

	spans := rc.spans.GetSpans().Snapshots()
	require.Len(t, spans, 1)
	assert.Equal(t, metaTrace, spans[0].SpanContext().TraceID().String())
	assert.Equal(t, "vendor=abc", spans[0].SpanContext().TraceState().String())
	assert.Equal(t, "alice", bag.Member("user").Value())
}

// TestInvokeTraceAllocations: the CLIENT span of an invocation and its
// trace headers, 100% sampled: the span's attributes are copied into it
// once (10 allocations when they went through its start options).
func TestInvokeTraceAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under the race detector; make test runs this without it")
	}
	on := benchOn(t)
	tr := on.InvokeTrace()
	ctx := context.Background()
	allocs := testing.AllocsPerRun(200, func() {
		_, _, end := tr(ctx, "primes")
		end(nil)
	})
	assert.LessOrEqual(t, allocs, 9.0)
}
