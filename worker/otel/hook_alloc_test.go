package otel

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/funcmcp/funcmcp/internal/otelsetup"
	"github.com/funcmcp/funcmcp/worker"
)

// discard is a span exporter that drops what it is given.
type discard struct{}

func (discard) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discard) Shutdown(context.Context) error                             { return nil }

// TestHookAllocations: the span around a tool's run, 100% sampled and
// batched as the worker does, allocates what the SDK needs for the span and
// its context (the span, its attributes, its snapshot, the context): its
// attributes are copied into the span once.
func TestHookAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under the race detector; make test runs this without it")
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(otelsetup.NewBatcher(discard{}, otelsetup.BatchOptions{})))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	s := &spans{tracer: tp.Tracer(instrumentation), prop: otelsetup.Propagator()}
	inv := &worker.Invocation{Kind: worker.KindTool, Name: "get_weather", Function: "get_weather", InvocationID: "f0b1371f-a418-4745-9a16-dee1dd669543"}
	next := func(context.Context) error { return nil }
	ctx := context.Background()
	allocs := testing.AllocsPerRun(200, func() { _ = s.hook(ctx, inv, next) })
	assert.LessOrEqual(t, allocs, 4.0, "allocations of the span around a run (9 when its attributes went through the start options)")
}
