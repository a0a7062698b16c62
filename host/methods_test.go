package host

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/funcmcp/funcmcp/host/internal/mcp"
	"github.com/funcmcp/funcmcp/host/internal/telemetry"
	"github.com/funcmcp/funcmcp/internal/testutil"
	"github.com/funcmcp/funcmcp/metadata"
)

// TestMethodFromTheTableAlone adds a method the way docs/architecture.md
// "Where to add" says, one entry of the method table and its serve func,
// here a test-only one (mcp.AddMethodForTest): test/echo, of a new
// capability "test", naming a tool that its requiredScopes guard, its
// span named by it. With nothing else edited, the composed host routes
// it, advertises its capability, refuses it with 403 to a token without
// the tool's scope, counts it and traces it.
func TestMethodFromTheTableAlone(t *testing.T) {
	const method = "test/echo"
	restore := mcp.AddMethodForTest(metadata.MethodSpec{
		Name: method, Since: metadata.RevisionFirst, Capability: "test",
		NameParam: "name", Target: metadata.TargetTool, Scoped: true, SpanTarget: true,
		Example: `{"name":"tool"}`,
	}, func(params []byte) []byte { return []byte(`{"echo":` + string(params) + `}`) })
	t.Cleanup(restore) // after the host's Close, registered below

	spans := tracetest.NewInMemoryExporter()
	reader := sdkmetric.NewManualReader()
	tel, err := telemetry.NewWithProviders(sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans)),
		sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)))
	require.NoError(t, err)
	op := testutil.StartOIDC(t)
	fw := newFakeWorker(t)
	h, _ := newTestHost(t, oauthApp(t, op, ""), fw.srv.URL, &Options{telemetry: tel})
	srv := httptest.NewServer(h.Handler())
	defer srv.Close()
	token := func(scopes ...string) string {
		return op.Token(t, testutil.Claims(op.URL, oauthAudience, "user-7", scopes...))
	}
	admin := token("user_impersonation", "Weather.Admin")
	const echo = `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":{"name":"get_weather"}}`

	// Routed: its serve func answers.
	resp := bearerPost(t, srv.URL+MCPPath, admin, echo, nil)
	body, _ := io.ReadAll(resp.Body)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	var reply struct {
		Result struct {
			Echo struct{ Name string } `json:"echo"`
		} `json:"result"`
	}
	require.NoError(t, json.Unmarshal(sseData(body), &reply), string(body))
	assert.Equal(t, "get_weather", reply.Result.Echo.Name)
	assert.Contains(t, Methods(), *metadata.LookupMethod(method), "listed where the table's requests are")

	// Advertised: initialize lists its capability.
	resp = bearerPost(t, srv.URL+MCPPath, admin, `{"jsonrpc":"2.0","id":2,"method":"initialize","params":`+
		`{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`, nil)
	body, _ = io.ReadAll(resp.Body)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	var initialized struct {
		Result struct {
			Capabilities map[string]json.RawMessage `json:"capabilities"`
		} `json:"result"`
	}
	require.NoError(t, json.Unmarshal(sseData(body), &initialized), string(body))
	assert.JSONEq(t, `{}`, string(initialized.Result.Capabilities["test"]), string(body))

	// The modern revision routes it with its Mcp-Name header, and
	// server/discover lists its capability.
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	modern := func(id int, method, name, params string) []byte {
		headers := map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method}
		if name != "" {
			headers["Mcp-Name"] = name
		}
		resp := bearerPost(t, srv.URL+MCPPath, admin, `{"jsonrpc":"2.0","id":`+string(mustJSON(id))+
			`,"method":"`+method+`","params":{`+params+meta+`}}`, headers)
		body, _ := io.ReadAll(resp.Body)
		require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
		return sseData(body)
	}
	reply.Result.Echo.Name = ""
	body = modern(3, method, "get_weather", `"name":"get_weather",`)
	require.NoError(t, json.Unmarshal(body, &reply), string(body))
	assert.Equal(t, "get_weather", reply.Result.Echo.Name, string(body))
	body = modern(4, metadata.MethodDiscover, "", "")
	var discovered struct {
		Result struct {
			Capabilities map[string]json.RawMessage `json:"capabilities"`
		} `json:"result"`
	}
	require.NoError(t, json.Unmarshal(body, &discovered), string(body))
	assert.JSONEq(t, `{}`, string(discovered.Result.Capabilities["test"]), string(body))

	// Scope-checked: get_weather needs Weather.Admin, which the scope link
	// asks for with no edit of its own.
	resp = bearerPost(t, srv.URL+MCPPath, token("user_impersonation"), echo, nil)
	require.Equal(t, http.StatusForbidden, resp.StatusCode)
	assert.Contains(t, resp.Header.Get("WWW-Authenticate"), `error="insufficient_scope"`)
	assert.Contains(t, resp.Header.Get("WWW-Authenticate"), `scope="`+oauthDefault+` `+oauthAdmin+`"`)

	// Counted: the operation duration has a point of the method.
	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(context.Background(), &rm))
	counted := false
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != "mcp.server.operation.duration" {
				continue
			}
			hist, ok := m.Data.(metricdata.Histogram[float64])
			require.True(t, ok, "%T", m.Data)
			for _, dp := range hist.DataPoints {
				if v, _ := dp.Attributes.Value("mcp.method.name"); v.AsString() == method {
					counted = true
				}
			}
		}
	}
	assert.True(t, counted, "a duration point with mcp.method.name=%s", method)

	// Traced: a server span named by the method and its tool.
	traced := false
	for _, s := range spans.GetSpans() {
		if s.Name == method+" get_weather" && s.SpanKind == trace.SpanKindServer {
			traced = true
		}
	}
	assert.True(t, traced, "a SERVER span %q in %v", method+" get_weather", spanNames(spans.GetSpans()))
}

// spanNames lists the names of spans, for a failure's message.
func spanNames(spans tracetest.SpanStubs) []string {
	out := make([]string, 0, len(spans))
	for _, s := range spans {
		out = append(out, s.Name)
	}
	return out
}
