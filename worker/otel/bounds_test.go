package otel

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/funcmcp/funcmcp/internal/otelsetup"
	"github.com/funcmcp/funcmcp/worker"
)

// TestHookCapsWhatTheClientSent: what reaches the worker's spans from the
// client — a resource's URI, the invocation id, an error's text that
// repeats the client's input — is cut (and repaired when not UTF-8), and
// resource reads, named by the client's URI, leave nothing in the cache of
// span starts.
func TestHookCapsWhatTheClientSent(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	s := &spans{tracer: sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp)).Tracer(instrumentation), prop: otelsetup.Propagator()}
	ctx := context.Background()
	ok := func(context.Context) error { return nil }
	uri := strings.Repeat("u", 4<<10)
	for i := range maxStarts + 100 {
		inv := &worker.Invocation{Kind: worker.KindResource, Function: "weather", Name: fmt.Sprintf("weather://%d/%s", i, uri)}
		require.NoError(t, s.hook(ctx, inv, ok))
	}
	assert.Zero(t, s.nStart.Load(), "no resource read is kept")

	long := strings.Repeat("x", 1<<20)
	inv := &worker.Invocation{Kind: worker.KindTool, Function: "get_weather", Name: "get_weather", InvocationID: "\xff" + long}
	err := s.hook(ctx, inv, func(context.Context) error { return errors.New("no such city: " + long) })
	require.Error(t, err)
	assert.Equal(t, int32(1), s.nStart.Load(), "a tool's start is kept")

	spans := exp.GetSpans().Snapshots()
	require.Len(t, spans, maxStarts+101)
	for _, sp := range spans {
		assert.LessOrEqual(t, len(sp.Name()), len("resource ")+otelsetup.MaxValueBytes)
		for _, kv := range sp.Attributes() {
			v := kv.Value.Emit()
			assert.LessOrEqual(t, len(v), otelsetup.MaxValueBytes, kv.Key)
			assert.True(t, utf8.ValidString(v), kv.Key)
		}
		assert.LessOrEqual(t, len(sp.Status().Description), otelsetup.MaxMessageBytes)
		for _, e := range sp.Events() {
			for _, kv := range e.Attributes {
				assert.LessOrEqual(t, len(kv.Value.Emit()), otelsetup.MaxMessageBytes, kv.Key)
			}
		}
	}
	failed := spans[maxStarts+100]
	assert.Equal(t, "execute_tool get_weather", failed.Name())
	for _, kv := range failed.Attributes() {
		if kv.Key == "faas.invocation_id" {
			assert.Len(t, kv.Value.AsString(), otelsetup.MaxIDBytes)
		}
	}
}
