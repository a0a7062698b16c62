package otel

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/funcmcp/funcmcp/internal/otelsetup"
	"github.com/funcmcp/funcmcp/worker"
)

// tracedServer serves an app instrumented as Start instruments it,
// exporting to spans; its tool "plain" records the span context its
// handler got.
func tracedServer(t *testing.T, exp *tracetest.InMemoryExporter, seen *trace.SpanContext) *httptest.Server {
	s := &spans{tracer: sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp)).Tracer(instrumentation), prop: otelsetup.Propagator()}
	in := s.instrumentation()
	a := worker.New(&worker.Options{Stdout: io.Discard, Stderr: io.Discard, Hooks: []worker.Hook{in.Hook}})
	a.ConfigureMcpTool("plain").Handle(func(ctx context.Context, _ *worker.ToolContext) (*worker.Result, error) {
		*seen = trace.SpanContextFromContext(ctx)
		return worker.TextResult("ok"), nil
	})
	srv := httptest.NewServer(in.Handler(a.Handler()))
	t.Cleanup(srv.Close)
	return srv
}

const (
	hostTraceparent   = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	clientTraceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	clientTransport   = `,"transport":{"name":"http-streamable","properties":{"headers":{"traceparent":"` + clientTraceparent + `"}}}`
)

// postInvocation posts one invocation of fn, as a host does, and returns
// the status.
func postInvocation(t *testing.T, url, fn, ctxJSON string, headers map[string]string) int {
	t.Helper()
	raw, err := json.Marshal(ctxJSON)
	require.NoError(t, err)
	body := fmt.Sprintf(`{"Data":{"context":%s},"Metadata":{"sys":{"MethodName":"x"}}}`, raw)
	req, err := http.NewRequest(http.MethodPost, url+"/"+fn, strings.NewReader(body))
	require.NoError(t, err)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

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
			srv := tracedServer(t, spans, &seen)
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

// TestTelemetryOffWithoutEndpoint: without an OTLP endpoint, or with the
// SDK disabled, Start starts nothing: no hook, no wrapper.
func TestTelemetryOffWithoutEndpoint(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	in, err := New().Start(context.Background())
	require.NoError(t, err)
	assert.Nil(t, in)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1")
	t.Setenv("OTEL_SDK_DISABLED", "true")
	in, err = New().Start(context.Background())
	require.NoError(t, err)
	assert.Nil(t, in)
}

// TestTelemetryStartsWithEndpoint: with an endpoint, Start gives the hook,
// the wrapper and the flush at exit.
func TestTelemetryStartsWithEndpoint(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1")
	t.Setenv("OTEL_SDK_DISABLED", "")
	t.Setenv("OTEL_METRICS_EXPORTER", "none")
	t.Setenv("OTEL_TRACES_EXPORTER", "none")
	in, err := New().Start(context.Background())
	require.NoError(t, err)
	require.NotNil(t, in)
	assert.NotNil(t, in.Hook)
	assert.NotNil(t, in.Handler)
	require.NotNil(t, in.Stop)
	in.Stop()
}

// syncBuffer is a bytes.Buffer safe for the server's goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestTelemetryLogLinesCarryTheTrace: with telemetry started, the worker's
// own log lines (the app's logger) and the lines a tool logs with slog's
// default logger carry trace_id and span_id of the context they are
// logged in, as funchost's console lines do; after serving, slog's
// default is the app's again.
func TestTelemetryLogLinesCarryTheTrace(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1")
	t.Setenv("OTEL_SDK_DISABLED", "")
	t.Setenv("OTEL_METRICS_EXPORTER", "none")
	t.Setenv("OTEL_TRACES_EXPORTER", "none")
	var toolLines, appLines syncBuffer
	defer func(w io.Writer) { logOutput = w }(logOutput)
	logOutput = &toolLines
	before := slog.Default()

	in, err := New().Start(context.Background())
	require.NoError(t, err)
	require.NotNil(t, in)
	require.NotNil(t, in.Logger)
	stopped := false
	defer func() {
		if !stopped {
			in.Stop()
		}
	}()

	appLogger := slog.New(in.Logger(slog.NewTextHandler(&appLines, &slog.HandlerOptions{Level: slog.LevelDebug})))
	a := worker.New(&worker.Options{Stdout: io.Discard, Stderr: io.Discard, Logger: appLogger, Hooks: []worker.Hook{in.Hook}})
	var seen trace.SpanContext
	a.ConfigureMcpTool("plain").Handle(func(ctx context.Context, _ *worker.ToolContext) (*worker.Result, error) {
		seen = trace.SpanContextFromContext(ctx)
		slog.InfoContext(ctx, "the tool says hello")
		return worker.TextResult("ok"), nil
	})
	srv := httptest.NewServer(in.Handler(a.Handler()))
	defer srv.Close()
	require.Equal(t, http.StatusOK, postInvocation(t, srv.URL, "plain", `{"name":"plain","arguments":{}}`,
		map[string]string{"Traceparent": hostTraceparent}))

	const hostTrace, hostSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	var toolLine string
	for _, l := range strings.Split(toolLines.String(), "\n") {
		if strings.Contains(l, "the tool says hello") {
			toolLine = l
		}
	}
	require.NotEmpty(t, toolLine, "the tool's line: %q", toolLines.String())
	assert.Contains(t, toolLine, "trace_id="+hostTrace)
	assert.Contains(t, toolLine, "span_id="+seen.SpanID().String(), "the tool's line names the handler's span")

	var invLine string
	for _, l := range strings.Split(appLines.String(), "\n") {
		if strings.Contains(l, "msg=invocation") {
			invLine = l
		}
	}
	require.NotEmpty(t, invLine, "the worker's invocation line: %q", appLines.String())
	assert.Contains(t, invLine, "trace_id="+hostTrace+" span_id="+hostSpan, "the worker's line names the invocation's span")

	in.Stop()
	stopped = true
	assert.Same(t, before, slog.Default(), "after serving slog's default is the app's again")
}
