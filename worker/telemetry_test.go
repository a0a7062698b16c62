package worker

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/funcmcp/funcmcp/internal/otelsetup"
)

// tracedApp is an app with the telemetry hook on, exporting to spans; its
// tool "plain" records the span context its handler got.
func tracedApp(spans *tracetest.InMemoryExporter, seen *trace.SpanContext) *App {
	a := New(&Options{Stdout: io.Discard, Stderr: io.Discard})
	a.ConfigureMcpTool("plain").Handle(func(ctx context.Context, _ *ToolContext) (*Result, error) {
		*seen = trace.SpanContextFromContext(ctx)
		return TextResult("ok"), nil
	})
	a.tel = &workerTelemetry{tracer: sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans)).Tracer(workerInstrumentation), prop: otelsetup.Propagator()}
	a.hooks = append([]Hook{a.tel.hook}, a.hooks...)
	return a
}

const (
	hostTraceparent   = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	clientTraceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	clientTransport   = `,"transport":{"name":"http-streamable","properties":{"headers":{"traceparent":"` + clientTraceparent + `"}}}`
)

// TestTelemetryHookContinuesTheTrace: the span around a tool's handler
// continues the traceparent funchost sends on the POST; without one (the
// Functions host sends none) the MCP client's traceparent among the
// invocation's transport headers; and the handler's context carries it.
func TestTelemetryHookContinuesTheTrace(t *testing.T) {
	for _, c := range []struct {
		name, transport, header, trace, parent string
	}{
		{"the POST's traceparent", "", hostTraceparent, "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"},
		{"the client's, from the transport headers", clientTransport, "", "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"},
		{"the POST's before the client's", clientTransport, hostTraceparent, "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"},
	} {
		t.Run(c.name, func(t *testing.T) {
			spans := tracetest.NewInMemoryExporter()
			var seen trace.SpanContext
			srv := httptest.NewServer(tracedApp(spans, &seen).Handler())
			t.Cleanup(srv.Close)
			headers := map[string]string{}
			if c.header != "" {
				headers["Traceparent"] = c.header
			}
			require.Equal(t, http.StatusOK, postInvocation(t, srv.URL, "plain", `{"name":"plain","arguments":{}`+c.transport+`}`, headers))
			got := spans.GetSpans().Snapshots()
			require.Len(t, got, 1)
			assert.Equal(t, "execute_tool plain", got[0].Name())
			assert.Equal(t, c.trace, got[0].SpanContext().TraceID().String())
			assert.Equal(t, c.parent, got[0].Parent().SpanID().String())
			assert.Equal(t, got[0].SpanContext().SpanID(), seen.SpanID(), "the handler runs under the span")
		})
	}
}

// TestTelemetryOffWithoutEndpoint: without an OTLP endpoint the worker
// starts nothing: no hook, no wrapper.
func TestTelemetryOffWithoutEndpoint(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	a := New(&Options{Stdout: io.Discard, Stderr: io.Discard})
	shutdown, err := a.startTelemetry(context.Background())
	require.NoError(t, err)
	shutdown()
	assert.Nil(t, a.tel)
	assert.Empty(t, a.hooks)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1")
	t.Setenv("OTEL_SDK_DISABLED", "true")
	assert.False(t, telemetryWanted())
}
