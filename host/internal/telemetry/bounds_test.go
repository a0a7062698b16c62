package telemetry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/funcmcp/funcmcp/host/internal/mcp"
	"github.com/funcmcp/funcmcp/internal/otelsetup"
	"github.com/funcmcp/funcmcp/metadata"
)

// weatherApp is an endpoint with the telemetry link of an app that
// declares the tool get_weather and the resource template weather://{city}.
func (rc *recorded) weatherApp() http.Handler {
	known := func(kind mcp.TargetKind, name string) (string, bool) {
		switch {
		case kind == mcp.TargetTool && name == "get_weather":
			return name, true
		case kind == mcp.TargetResource && strings.HasPrefix(name, "weather://"):
			return "weather://{city}", true
		}
		return "", false
	}
	return mcp.NewHandler(mcp.Server{
		ToolsList: func(string) json.RawMessage {
			return json.RawMessage(`[{"name":"get_weather","inputSchema":{"type":"object"}}]`)
		},
		CallTool: func(_ context.Context, req *mcp.CallRequest) (*metadata.CallToolResult, error) {
			if req.Name == "get_weather" {
				return &metadata.CallToolResult{Content: []json.RawMessage{metadata.TextContent("sunny")}}, nil
			}
			return nil, &mcp.ProtocolError{Code: mcp.CodeInvalidParams, Message: "Unknown tool"}
		},
		Known: known,
	}, &mcp.Options{Middleware: rc.tel.Middleware()})
}

// durationPoints are the data points of mcp.server.operation.duration.
func durationPoints(t *testing.T, rc *recorded) []metricdata.HistogramDataPoint[float64] {
	t.Helper()
	m, ok := rc.collect(t)["mcp.server.operation.duration"]
	require.True(t, ok)
	return m.Data.(metricdata.Histogram[float64]).DataPoints
}

// TestUnknownToolNamesAreOther: 3,000 distinct tool names the app does
// not declare, then get_weather. The unknown ones are one series,
// gen_ai.tool.name=_OTHER, and their spans are "tools/call _OTHER":
// get_weather keeps its own series (it once went to the SDK's overflow
// series once unknown names had filled its 2,000), and the link's caches
// hold only what the app declares.
func TestUnknownToolNamesAreOther(t *testing.T) {
	rc := newRecorded(t)
	h := rc.weatherApp()
	for i := range 3000 {
		post(h, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"tool-%036d","arguments":{}}}`, i, i), nil)
	}
	post(h, `{"jsonrpc":"2.0","id":"w","method":"tools/call","params":{"name":"get_weather","arguments":{}}}`, nil)

	byTool := map[string]uint64{}
	for _, dp := range durationPoints(t, rc) {
		_, overflow := dp.Attributes.Value("otel.metric.overflow")
		assert.False(t, overflow, "no series overflows")
		v, _ := dp.Attributes.Value("gen_ai.tool.name")
		byTool[v.Emit()] += dp.Count
	}
	assert.Equal(t, map[string]uint64{"_OTHER": 3000, "get_weather": 1}, byTool)

	names, tools := map[string]int{}, map[string]int{}
	for _, s := range rc.spans.GetSpans().Snapshots() {
		names[s.Name()]++
		tools[attrs(s)[attribute.Key("gen_ai.tool.name")]]++
	}
	assert.Equal(t, map[string]int{"tools/call _OTHER": 3000, "tools/call get_weather": 1}, names)
	assert.Equal(t, map[string]int{"_OTHER": 3000, "get_weather": 1}, tools)
	assert.LessOrEqual(t, rc.tel.durationSets.len(), 2, "the duration sets: _OTHER with its error, get_weather")
	assert.LessOrEqual(t, rc.tel.spanNames.len(), 2)
}

// TestResourcesAreMeasuredByTheirTemplate: a resource read is measured by
// the template its URI matched (or _OTHER), never by the URI; its span
// carries the URI, cut.
func TestResourcesAreMeasuredByTheirTemplate(t *testing.T) {
	rc := newRecorded(t)
	h := rc.weatherApp()
	long := "weather://" + strings.Repeat("x", 4096)
	for _, uri := range []string{"weather://paris", "weather://oslo", long, "file:///etc/passwd"} {
		post(h, `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"`+uri+`"}}`, nil)
	}
	byURI := map[string]uint64{}
	for _, dp := range durationPoints(t, rc) {
		v, _ := dp.Attributes.Value("mcp.resource.uri")
		byURI[v.Emit()] += dp.Count
	}
	assert.Equal(t, map[string]uint64{"weather://{city}": 3, "_OTHER": 1}, byURI)

	spans := rc.spans.GetSpans().Snapshots()
	require.Len(t, spans, 4)
	assert.Equal(t, "resources/read", spans[0].Name())
	assert.Equal(t, "weather://paris", attrs(spans[0])["mcp.resource.uri"])
	assert.Equal(t, long[:otelsetup.MaxValueBytes], attrs(spans[2])["mcp.resource.uri"])
	assert.Equal(t, "file:///etc/passwd", attrs(spans[3])["mcp.resource.uri"])
}

// TestUnknownMethodsAreOther: a method the endpoint does not know is
// _OTHER in the span's name and in the metric; the notifications a client
// sends keep their names.
func TestUnknownMethodsAreOther(t *testing.T) {
	rc := newRecorded(t)
	h := rc.weatherApp()
	post(h, `{"jsonrpc":"2.0","id":1,"method":"x/`+strings.Repeat("m", 1<<16)+`"}`, nil)
	post(h, `{"jsonrpc":"2.0","method":"notifications/`+strings.Repeat("n", 100)+`"}`, nil)
	post(h, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, nil)
	var names []string
	for _, s := range rc.spans.GetSpans().Snapshots() {
		names = append(names, s.Name()+" "+attrs(s)["mcp.method.name"])
	}
	assert.Equal(t, []string{"_OTHER _OTHER", "_OTHER _OTHER", "notifications/initialized notifications/initialized"}, names)
	methods := map[string]bool{}
	for _, dp := range durationPoints(t, rc) {
		v, _ := dp.Attributes.Value("mcp.method.name")
		methods[v.Emit()] = true
	}
	assert.Equal(t, map[string]bool{"_OTHER": true, "notifications/initialized": true}, methods)
}

// TestClientTextInSpansIsCapped: what a client chose is cut in the span,
// and repaired when it is not UTF-8, so that every span stays small and the
// OTLP export of the batch succeeds. A 1 MiB request id is refused before
// any work: its span carries no id; a 1 MiB tool name is _OTHER; a 1 MiB
// session id (not UTF-8) and URI are cut.
func TestClientTextInSpansIsCapped(t *testing.T) {
	rc := newRecorded(t)
	h := rc.weatherApp()
	mib := strings.Repeat("é", 1<<19)
	r := post(h, `{"jsonrpc":"2.0","id":"`+mib+`","method":"tools/call","params":{"name":"get_weather","arguments":{}}}`, nil)
	assert.Equal(t, http.StatusBadRequest, r.Code)
	refused := rc.spans.GetSpans().Snapshots()
	require.Len(t, refused, 1, "the refusal passes the chain")
	assert.NotContains(t, attrs(refused[0]), attribute.Key("jsonrpc.request.id"), "a request refused for its id has no id in its span")
	assert.Equal(t, "400", attrs(refused[0])["error.type"])

	id := `"` + strings.Repeat("i", mcp.MaxIDBytes-2) + `"`
	post(h, `{"jsonrpc":"2.0","id":`+id+`,"method":"tools/call","params":{"name":"`+mib+`","arguments":{}}}`, nil)
	post(h, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_weather","arguments":{}}}`,
		http.Header{"Mcp-Session-Id": {"\xff" + strings.Repeat("s", 1<<20)}})
	post(h, `{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"weather://`+mib+`"}}`, nil)

	spans := rc.spans.GetSpans().Snapshots()[1:]
	require.Len(t, spans, 3)
	assert.Equal(t, "tools/call _OTHER", spans[0].Name())
	assert.Equal(t, strings.Repeat("i", mcp.MaxIDBytes-2), attrs(spans[0])["jsonrpc.request.id"])
	for _, s := range spans {
		assert.LessOrEqual(t, len(s.Name()), 64)
		for _, kv := range s.Attributes() {
			v := kv.Value.Emit()
			max := otelsetup.MaxValueBytes
			if kv.Key == "mcp.session.id" {
				max = otelsetup.MaxSessionIDBytes
			}
			assert.LessOrEqual(t, len(v), max, kv.Key)
			assert.True(t, utf8.ValidString(v), kv.Key)
		}
	}
	sid := attrs(spans[1])["mcp.session.id"]
	assert.Len(t, sid, otelsetup.MaxSessionIDBytes)
	assert.True(t, strings.HasPrefix(sid, "\uFFFDsss"))

	// The batch exports, and is small.
	var got atomic.Int64
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		got.Add(n)
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer recv.Close()
	exp, err := otlptracehttp.New(context.Background(), otlptracehttp.WithEndpointURL(recv.URL+"/v1/traces"))
	require.NoError(t, err)
	defer func() { _ = exp.Shutdown(context.Background()) }()
	require.NoError(t, exp.ExportSpans(context.Background(), spans))
	assert.Less(t, got.Load(), int64(8<<10), "three spans in a few KiB")
}

// TestInvokeErrorIsCapped: the error of an invocation (its text may repeat
// what the client sent) is cut in the span's status and exception event.
func TestInvokeErrorIsCapped(t *testing.T) {
	rc := newRecorded(t)
	_, _, end := rc.tel.InvokeTrace()(context.Background(), "get_weather")
	end(errors.New("no city " + strings.Repeat("x", 1<<20)))
	spans := rc.spans.GetSpans().Snapshots()
	require.Len(t, spans, 1)
	s := spans[0]
	assert.Equal(t, codes.Error, s.Status().Code)
	assert.LessOrEqual(t, len(s.Status().Description), otelsetup.MaxMessageBytes)
	require.Len(t, s.Events(), 1)
	for _, kv := range s.Events()[0].Attributes {
		assert.LessOrEqual(t, len(kv.Value.Emit()), otelsetup.MaxMessageBytes, kv.Key)
	}
}
