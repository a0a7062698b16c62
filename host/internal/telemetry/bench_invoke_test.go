package telemetry

import (
	"context"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/funcmcp/funcmcp/internal/otelsetup"
)

// benchOn is telemetry on, 100% sampled, spans batched through the
// processor funchost uses (otelsetup.Batcher) to an exporter that drops
// them, the metrics aggregated by a manual reader; shut down when tb ends.
func benchOn(tb testing.TB) *Telemetry {
	on, err := newTelemetry(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(otelsetup.NewBatcher(discard{}, otelsetup.BatchOptions{}))), sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader())))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = on.Shutdown(context.Background()) })
	return on
}

// BenchmarkInvokeTrace is what the invocation of the worker costs with
// telemetry on: its CLIENT span, started, its trace headers and its end.
func BenchmarkInvokeTrace(b *testing.B) {
	tr := benchOn(b).InvokeTrace()
	b.ReportAllocs()
	for b.Loop() {
		_, h, end := tr(context.Background(), "primes")
		if len(h) == 0 {
			b.Fatal("no trace headers")
		}
		end(nil)
	}
}

// BenchmarkValidation is what a passing validation of a few microseconds
// costs with telemetry on, beside the check itself.
func BenchmarkValidation(b *testing.B) {
	tel := benchOn(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		tel.Timed().Done(ctx, SpanValidateInput, "primes", "", "")
	}
}
