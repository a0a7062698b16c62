package otelsetup

import (
	"context"
	"sync"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// recorder is a span exporter that keeps the batches it is given and
// says on batches when one arrives.
type recorder struct {
	mu       sync.Mutex
	sizes    []int
	names    []string
	batches  chan int
	shutdown bool
}

func newRecorder() *recorder { return &recorder{batches: make(chan int, 64)} }

func (r *recorder) ExportSpans(_ context.Context, spans []sdktrace.ReadOnlySpan) error {
	r.mu.Lock()
	r.sizes = append(r.sizes, len(spans))
	for _, s := range spans {
		r.names = append(r.names, s.Name())
	}
	r.mu.Unlock()
	select {
	case r.batches <- len(spans):
	default:
	}
	return nil
}

func (r *recorder) Shutdown(context.Context) error {
	r.mu.Lock()
	r.shutdown = true
	r.mu.Unlock()
	return nil
}

func (r *recorder) got() (sizes []int, names []string, shutdown bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]int(nil), r.sizes...), append([]string(nil), r.names...), r.shutdown
}

// endSpans ends n spans of a provider whose only processor is p.
func endSpans(tp *sdktrace.TracerProvider, n int, name string) {
	tr := tp.Tracer("test")
	for range n {
		_, s := tr.Start(context.Background(), name)
		s.End()
	}
}

// hour is a schedule delay no test waits for.
const hour = time.Hour

func TestBatcherHoldsSpansUntilFlush(t *testing.T) {
	rec := newRecorder()
	b := NewBatcher(rec, BatchOptions{ScheduleDelay: hour, MaxQueueSize: 100, MaxExportBatch: 10})
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(b))
	defer tp.Shutdown(context.Background())

	endSpans(tp, 3, "a")
	if sizes, _, _ := rec.got(); len(sizes) != 0 {
		t.Fatalf("exported before a full batch, the delay or a flush: %v", sizes)
	}
	if err := tp.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if sizes, names, _ := rec.got(); len(sizes) != 1 || sizes[0] != 3 || len(names) != 3 || names[0] != "a" {
		t.Fatalf("after a flush: batches %v of %v, want one batch of the 3 spans", sizes, names)
	}
}

func TestBatcherExportsAFullBatchWithoutWaitingForTheDelay(t *testing.T) {
	rec := newRecorder()
	b := NewBatcher(rec, BatchOptions{ScheduleDelay: hour, MaxQueueSize: 100, MaxExportBatch: 10})
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(b))
	defer tp.Shutdown(context.Background())

	endSpans(tp, 10, "a")
	select {
	case n := <-rec.batches:
		if n != 10 {
			t.Fatalf("exported a batch of %d, want 10", n)
		}
	case <-time.After(10 * time.Second): // a bound on a failing test, not a timing
		t.Fatal("a full batch was not exported")
	}
}

func TestBatcherExportsOnTheScheduleDelay(t *testing.T) {
	rec := newRecorder()
	b := NewBatcher(rec, BatchOptions{ScheduleDelay: 10 * time.Millisecond, MaxQueueSize: 100, MaxExportBatch: 50})
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(b))
	defer tp.Shutdown(context.Background())

	endSpans(tp, 2, "a")
	select {
	case <-rec.batches:
	case <-time.After(10 * time.Second):
		t.Fatal("queued spans were not exported on the schedule")
	}
}

func TestBatcherDropsBeyondTheQueueAndSplitsBatches(t *testing.T) {
	rec := newRecorder()
	b := NewBatcher(rec, BatchOptions{ScheduleDelay: hour, MaxQueueSize: 25, MaxExportBatch: 25})
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(b))
	defer tp.Shutdown(context.Background())

	// Hold the export so that nothing leaves the queue while it fills.
	b.exporting.Lock()
	endSpans(tp, 30, "a")
	b.exporting.Unlock()
	if d := b.Dropped(); d != 5 {
		t.Fatalf("dropped %d spans, want the 5 beyond the queue of 25", d)
	}
	if err := tp.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, names, _ := rec.got(); len(names) != 25 {
		t.Fatalf("exported %d spans, want 25", len(names))
	}

	// A queue holding more than a batch: the export splits it.
	b2 := NewBatcher(rec, BatchOptions{ScheduleDelay: hour, MaxQueueSize: 100, MaxExportBatch: 4})
	tp2 := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(b2))
	defer tp2.Shutdown(context.Background())
	before, _, _ := rec.got()
	endSpans(tp2, 3, "b") // fewer than a batch: no wake-up
	b2.exporting.Lock()
	endSpans(tp2, 7, "b")
	b2.exporting.Unlock()
	if err := tp2.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	sizes, _, _ := rec.got()
	sizes = sizes[len(before):]
	total := 0
	for _, n := range sizes {
		if n > 4 {
			t.Fatalf("a batch of %d spans, more than the batch size 4: %v", n, sizes)
		}
		total += n
	}
	if total != 10 {
		t.Fatalf("exported %d spans in %v, want 10", total, sizes)
	}
}

func TestBatcherSkipsUnsampledSpans(t *testing.T) {
	rec := newRecorder()
	b := NewBatcher(rec, BatchOptions{ScheduleDelay: hour})
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(b), sdktrace.WithSampler(sdktrace.NeverSample()))
	endSpans(tp, 3, "a")
	if err := tp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if sizes, _, _ := rec.got(); len(sizes) != 0 {
		t.Fatalf("exported unsampled spans: %v", sizes)
	}
}

func TestBatcherShutdownExportsTheRestAndStopsTheExporter(t *testing.T) {
	rec := newRecorder()
	b := NewBatcher(rec, BatchOptions{ScheduleDelay: hour})
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(b))
	endSpans(tp, 4, "a")
	if err := tp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	b.OnEnd(nil) // after shutdown: dropped without looking at the span
	if err := b.Shutdown(context.Background()); err != nil {
		t.Fatalf("a second shutdown: %v", err)
	}
	if _, names, shut := rec.got(); len(names) != 4 || !shut {
		t.Fatalf("after shutdown: exported %d spans (want 4), exporter shut down %v", len(names), shut)
	}
}

func TestBatchOptionsFromEnv(t *testing.T) {
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "250")
	t.Setenv("OTEL_BSP_EXPORT_TIMEOUT", "nonsense")
	t.Setenv("OTEL_BSP_MAX_QUEUE_SIZE", "64")
	t.Setenv("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "128")
	o := BatchOptionsFromEnv()
	want := BatchOptions{ScheduleDelay: 250 * time.Millisecond, ExportTimeout: defaultExportTimeout, MaxQueueSize: 64, MaxExportBatch: 64}
	if o != want {
		t.Fatalf("options %+v, want %+v", o, want)
	}
}

// BenchmarkSpanEnd compares ending a span through the SDK's
// BatchSpanProcessor, which wakes its goroutine for every span, and
// through the Batcher. Both export to an exporter that drops the spans.
func BenchmarkSpanEnd(b *testing.B) {
	for _, c := range []struct {
		name string
		p    func() sdktrace.SpanProcessor
	}{
		{"sdk-batch", func() sdktrace.SpanProcessor { return sdktrace.NewBatchSpanProcessor(discard{}) }},
		{"batcher", func() sdktrace.SpanProcessor { return NewBatcher(discard{}, BatchOptions{}) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(c.p()))
			defer tp.Shutdown(context.Background())
			tr := tp.Tracer("bench")
			b.ReportAllocs()
			for b.Loop() {
				_, s := tr.Start(context.Background(), "span")
				s.End()
			}
		})
	}
}

type discard struct{}

func (discard) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discard) Shutdown(context.Context) error                             { return nil }
