package otelsetup

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// The defaults of the OTEL_BSP_* variables, as the specification and the
// SDK's BatchSpanProcessor have them.
const (
	defaultScheduleDelay  = 5000 * time.Millisecond
	defaultExportTimeout  = 30000 * time.Millisecond
	defaultMaxQueueSize   = 2048
	defaultMaxExportBatch = 512
)

// BatchOptions are the settings of a [Batcher]: OTEL_BSP_SCHEDULE_DELAY,
// OTEL_BSP_EXPORT_TIMEOUT (milliseconds), OTEL_BSP_MAX_QUEUE_SIZE and
// OTEL_BSP_MAX_EXPORT_BATCH_SIZE.
type BatchOptions struct {
	ScheduleDelay  time.Duration
	ExportTimeout  time.Duration
	MaxQueueSize   int
	MaxExportBatch int
}

// BatchOptionsFromEnv reads the OTEL_BSP_* variables; one that is unset,
// not a number or not positive keeps its default. A batch larger than the
// queue is the queue.
func BatchOptionsFromEnv() BatchOptions {
	o := BatchOptions{
		ScheduleDelay:  envMillis("OTEL_BSP_SCHEDULE_DELAY", defaultScheduleDelay),
		ExportTimeout:  envMillis("OTEL_BSP_EXPORT_TIMEOUT", defaultExportTimeout),
		MaxQueueSize:   envInt("OTEL_BSP_MAX_QUEUE_SIZE", defaultMaxQueueSize),
		MaxExportBatch: envInt("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", defaultMaxExportBatch),
	}
	if o.MaxExportBatch > o.MaxQueueSize {
		o.MaxExportBatch = o.MaxQueueSize
	}
	return o
}

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

func envMillis(name string, def time.Duration) time.Duration {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return time.Duration(n) * time.Millisecond
	}
	return def
}

// Batcher is the span processor of funcmcp's processes: like the SDK's
// BatchSpanProcessor it hands ended spans to an exporter (the SDK's OTLP
// one) in batches, with the same OTEL_BSP_* settings, but ending a span
// only appends it to a queue under a lock. The SDK's processor sends each
// ended span over a channel to its export goroutine, which wakes that
// goroutine (and often an idle thread) once per span; on a small VM that
// wake-up costs more than the span. Here the export goroutine wakes when
// the schedule delay has passed or when the queue holds a full batch.
// Spans beyond the queue's size are dropped and counted, as the SDK does.
type Batcher struct {
	exp sdktrace.SpanExporter
	o   BatchOptions

	mu      sync.Mutex
	queue   []sdktrace.ReadOnlySpan
	dropped atomic.Uint64

	exporting sync.Mutex              // one export at a time
	spare     []sdktrace.ReadOnlySpan // the queue's other buffer, under exporting

	full     chan struct{} // a full batch is queued (capacity 1: never blocks)
	stop     chan struct{}
	done     chan struct{}
	stopOnce sync.Once
	stopped  atomic.Bool
}

var _ sdktrace.SpanProcessor = (*Batcher)(nil)

// NewBatcher starts a batcher exporting to exp.
func NewBatcher(exp sdktrace.SpanExporter, o BatchOptions) *Batcher {
	def := BatchOptions{defaultScheduleDelay, defaultExportTimeout, defaultMaxQueueSize, defaultMaxExportBatch}
	if o.ScheduleDelay <= 0 {
		o.ScheduleDelay = def.ScheduleDelay
	}
	if o.MaxQueueSize <= 0 {
		o.MaxQueueSize = def.MaxQueueSize
	}
	if o.MaxExportBatch <= 0 || o.MaxExportBatch > o.MaxQueueSize {
		o.MaxExportBatch = min(def.MaxExportBatch, o.MaxQueueSize)
	}
	b := &Batcher{
		exp:   exp,
		o:     o,
		queue: make([]sdktrace.ReadOnlySpan, 0, o.MaxExportBatch),
		spare: make([]sdktrace.ReadOnlySpan, 0, o.MaxExportBatch),
		full:  make(chan struct{}, 1),
		stop:  make(chan struct{}),
		done:  make(chan struct{}),
	}
	go b.run()
	return b
}

// OnStart does nothing.
func (*Batcher) OnStart(context.Context, sdktrace.ReadWriteSpan) {}

// OnEnd queues a sampled span; it wakes the export goroutine only when
// the queue reaches a full batch.
func (b *Batcher) OnEnd(s sdktrace.ReadOnlySpan) {
	if b.stopped.Load() || !s.SpanContext().IsSampled() {
		return
	}
	b.mu.Lock()
	if len(b.queue) >= b.o.MaxQueueSize {
		b.mu.Unlock()
		b.dropped.Add(1)
		return
	}
	b.queue = append(b.queue, s)
	n := len(b.queue)
	b.mu.Unlock()
	if n == b.o.MaxExportBatch {
		select {
		case b.full <- struct{}{}:
		default:
		}
	}
}

// Dropped is the number of spans dropped because the queue was full.
func (b *Batcher) Dropped() uint64 { return b.dropped.Load() }

// run exports what is queued every schedule delay, or as soon as a full
// batch is queued, until Shutdown.
func (b *Batcher) run() {
	defer close(b.done)
	tick := time.NewTicker(b.o.ScheduleDelay)
	defer tick.Stop()
	for {
		select {
		case <-b.stop:
			return
		case <-tick.C:
		case <-b.full:
		}
		if err := b.export(context.Background()); err != nil {
			otel.Handle(err)
		}
	}
}

// export hands everything queued to the exporter, in batches of at most
// MaxExportBatch, each within the export timeout.
func (b *Batcher) export(ctx context.Context) error {
	b.exporting.Lock()
	defer b.exporting.Unlock()
	b.mu.Lock()
	q := b.queue
	b.queue = b.spare
	b.mu.Unlock()
	var errs []error
	for rest := q; len(rest) > 0; {
		n := min(len(rest), b.o.MaxExportBatch)
		if err := b.exportBatch(ctx, rest[:n]); err != nil {
			errs = append(errs, err)
		}
		rest = rest[n:]
	}
	clear(q) // let the spans be collected
	b.spare = q[:0]
	return errors.Join(errs...)
}

func (b *Batcher) exportBatch(ctx context.Context, batch []sdktrace.ReadOnlySpan) error {
	if b.o.ExportTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, b.o.ExportTimeout)
		defer cancel()
	}
	if err := b.exp.ExportSpans(ctx, batch); err != nil {
		return fmt.Errorf("exporting %d spans: %w", len(batch), err)
	}
	return nil
}

// ForceFlush exports every span queued so far.
func (b *Batcher) ForceFlush(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if b.stopped.Load() {
		return nil
	}
	return b.export(ctx)
}

// Shutdown stops the export goroutine, exports what is queued and shuts
// the exporter down; later spans are dropped. Only the first call does
// anything.
func (b *Batcher) Shutdown(ctx context.Context) error {
	var err error
	b.stopOnce.Do(func() {
		b.stopped.Store(true)
		close(b.stop)
		select {
		case <-b.done:
		case <-ctx.Done():
			err = ctx.Err()
			return
		}
		err = errors.Join(b.export(ctx), b.exp.Shutdown(ctx))
	})
	return err
}
