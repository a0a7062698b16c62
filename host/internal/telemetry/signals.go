package telemetry

import (
	"context"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/semconv/v1.41.0/mcpconv"
	"go.opentelemetry.io/otel/trace"

	"github.com/funcmcp/funcmcp/internal/otelsetup"
)

// The operator's metrics. Names of the MCP conventions where they have one
// (mcp.server.session.duration); funcmcp.* otherwise. Each is documented in
// docs/telemetry.md.
const (
	MetricCallsInFlight   = "funcmcp.calls.in_flight"
	MetricRefused         = "funcmcp.requests.refused"
	MetricWorkerRestarts  = "funcmcp.worker.restarts"
	MetricOutputInvalid   = "funcmcp.tool.output.invalid"
	MetricBackplaneLag    = "funcmcp.backplane.delivery.lag"
	MetricTasksRunning    = "funcmcp.tasks.running"
	MetricTasksFinished   = "funcmcp.tasks.finished"
	MetricSessionDuration = "mcp.server.session.duration"
)

// Attribute keys of the operator's metrics.
const (
	// AttrRefusalReason says why a request was refused (Refused* values).
	AttrRefusalReason = attribute.Key("funcmcp.refusal.reason")
	// AttrRestartReason says why the worker was started again.
	AttrRestartReason = attribute.Key("funcmcp.worker.restart.reason")
	// AttrValidationMode is the host.json output validation mode (strict,
	// warn) under which a result failed its schema.
	AttrValidationMode = attribute.Key("funcmcp.validation.mode")
	// AttrTaskStatus is the status a task's work ended with.
	AttrTaskStatus = attribute.Key("mcp.task.status")
	// AttrTaskID names a task on its run span.
	AttrTaskID = attribute.Key("mcp.task.id")
	// AttrBackplane is the backplane kind (memory, azurequeues, redis).
	AttrBackplane = attribute.Key("funcmcp.backplane")
)

// Reasons of funcmcp.requests.refused.
const (
	RefusedBusy         = "busy"         // every call slot taken (MaxCallsInFlight)
	RefusedOwnerLimit   = "owner_limit"  // the client's running tasks at their bound
	RefusedTaskLimit    = "task_limit"   // all running tasks at their bound
	RefusedTooLarge     = "too_large"    // HTTP 413
	RefusedUnauthorized = "unauthorized" // HTTP 401: no or a bad key or token
	RefusedForbidden    = "forbidden"    // HTTP 403: Host/Origin, scopes
	RefusedRateLimited  = "rate_limited" // HTTP 429
	RefusedUnavailable  = "unavailable"  // HTTP 503: stopping, stream inboxes full, no forward
	RefusedConnections  = "connections"  // a connection over MaxConnectionsPerAddress / MaxConnections
)

// instruments are the host's metric instruments beyond the operation
// duration.
type instruments struct {
	session       mcpconv.ServerSessionDuration
	refused       metric.Int64Counter
	restarts      metric.Int64Counter
	outputInvalid metric.Int64Counter
	lag           metric.Float64Histogram
	tasksFinished metric.Int64Counter
	inFlight      metric.Int64ObservableUpDownCounter
	tasksRunning  metric.Int64ObservableUpDownCounter
}

// LagBuckets are the bucket bounds, in seconds, of
// funcmcp.backplane.delivery.lag: from a millisecond (in memory) to a
// minute (a queue polled with back-off).
var LagBuckets = []float64{0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60}

func (t *Telemetry) makeInstruments(m metric.Meter) (err error) {
	in := &t.in
	if in.session, err = mcpconv.NewServerSessionDuration(m, metric.WithExplicitBucketBoundaries(DurationBuckets...)); err != nil {
		return fmt.Errorf("making %s: %w", MetricSessionDuration, err)
	}
	if in.refused, err = m.Int64Counter(MetricRefused, metric.WithUnit("{request}"),
		metric.WithDescription("Requests, calls and connections funchost refused, by reason.")); err != nil {
		return fmt.Errorf("making %s: %w", MetricRefused, err)
	}
	if in.restarts, err = m.Int64Counter(MetricWorkerRestarts, metric.WithUnit("{restart}"),
		metric.WithDescription("Times the worker process was started again, by reason.")); err != nil {
		return fmt.Errorf("making %s: %w", MetricWorkerRestarts, err)
	}
	if in.outputInvalid, err = m.Int64Counter(MetricOutputInvalid, metric.WithUnit("{result}"),
		metric.WithDescription("Tool results that did not match the tool's output schema.")); err != nil {
		return fmt.Errorf("making %s: %w", MetricOutputInvalid, err)
	}
	if in.lag, err = m.Float64Histogram(MetricBackplaneLag, metric.WithUnit("s"), metric.WithExplicitBucketBoundaries(LagBuckets...),
		metric.WithDescription("Time from a backplane message's send on one instance to its receipt on the instance holding the stream.")); err != nil {
		return fmt.Errorf("making %s: %w", MetricBackplaneLag, err)
	}
	if in.tasksFinished, err = m.Int64Counter(MetricTasksFinished, metric.WithUnit("{task}"),
		metric.WithDescription("Task work that ended on this instance, by the status it ended with.")); err != nil {
		return fmt.Errorf("making %s: %w", MetricTasksFinished, err)
	}
	if in.inFlight, err = m.Int64ObservableUpDownCounter(MetricCallsInFlight, metric.WithUnit("{call}"),
		metric.WithDescription("Invocations of the worker admitted and not yet finished.")); err != nil {
		return fmt.Errorf("making %s: %w", MetricCallsInFlight, err)
	}
	if in.tasksRunning, err = m.Int64ObservableUpDownCounter(MetricTasksRunning, metric.WithUnit("{task}"),
		metric.WithDescription("Task work running on this instance.")); err != nil {
		return fmt.Errorf("making %s: %w", MetricTasksRunning, err)
	}
	t.meter = m
	return nil
}

// Observe reports the calls in flight and the task work running, read
// from calls at each collection (nothing is added to a call). It is
// called once, when the host has its counters.
func (t *Telemetry) Observe(calls func() (inFlight, tasksRunning int64)) error {
	if t == nil {
		return nil
	}
	_, err := t.meter.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		n, tasks := calls()
		o.ObserveInt64(t.in.inFlight, n)
		o.ObserveInt64(t.in.tasksRunning, tasks)
		return nil
	}, t.in.inFlight, t.in.tasksRunning)
	if err != nil {
		return fmt.Errorf("observing the calls in flight: %w", err)
	}
	return nil
}

// Refused counts one refusal for reason (a Refused* value).
func (t *Telemetry) Refused(ctx context.Context, reason string) {
	if t == nil {
		return
	}
	t.in.refused.Add(context.WithoutCancel(ctx), 1, metric.WithAttributes(AttrRefusalReason.String(reason)))
}

// RefusedStatus counts a refusal by HTTP status: 401, 403, 413, 429 and
// 503 are refusals, anything else is not.
func (t *Telemetry) RefusedStatus(ctx context.Context, status int) {
	if t == nil {
		return
	}
	if reason := statusReason(status); reason != "" {
		t.Refused(ctx, reason)
	}
}

func statusReason(status int) string {
	switch status {
	case 401:
		return RefusedUnauthorized
	case 403:
		return RefusedForbidden
	case 413:
		return RefusedTooLarge
	case 429:
		return RefusedRateLimited
	case 503:
		return RefusedUnavailable
	}
	return ""
}

// WorkerRestarted counts a restart of the worker; reason says why (exit,
// probe, requested, start_failed).
func (t *Telemetry) WorkerRestarted(reason string) {
	if t == nil {
		return
	}
	t.in.restarts.Add(context.Background(), 1, metric.WithAttributes(AttrRestartReason.String(reason)))
}

// OutputInvalid counts a tool result that failed its output schema under
// mode (strict or warn) and marks the span of ctx with it.
func (t *Telemetry) OutputInvalid(ctx context.Context, tool, mode string) {
	if t == nil {
		return
	}
	t.in.outputInvalid.Add(context.WithoutCancel(ctx), 1, metric.WithAttributes(semconv.GenAIToolName(tool), AttrValidationMode.String(mode)))
}

// BackplaneLag records how long a backplane message took from its send
// (sent, the sender's clock) to its receipt now; a zero sent (a sender
// that does not stamp its messages) records nothing.
func (t *Telemetry) BackplaneLag(ctx context.Context, kind string, sent time.Time) {
	if t == nil || sent.IsZero() {
		return
	}
	lag := max(time.Since(sent), 0) // clocks of two machines: never below zero
	t.in.lag.Record(context.WithoutCancel(ctx), lag.Seconds(), metric.WithAttributes(AttrBackplane.String(kind)))
}

// TaskFinished counts task work that ended here with status (completed,
// failed, cancelled).
func (t *Telemetry) TaskFinished(ctx context.Context, status string) {
	if t == nil {
		return
	}
	t.in.tasksFinished.Add(context.WithoutCancel(ctx), 1, metric.WithAttributes(AttrTaskStatus.String(status)))
}

// SessionEnded records mcp.server.session.duration for a session that
// lasted d: version is its mcp.protocol.version ("" when unknown),
// errorType its error.type ("" when it ended normally).
func (t *Telemetry) SessionEnded(ctx context.Context, d time.Duration, version, errorType string) {
	if t == nil {
		return
	}
	attrs := make([]attribute.KeyValue, 0, 4)
	attrs = append(attrs, semconv.NetworkTransportTCP, semconv.NetworkProtocolName("http"))
	if version != "" {
		attrs = append(attrs, semconv.McpProtocolVersionKey.String(version))
	}
	if errorType != "" {
		attrs = append(attrs, semconv.ErrorTypeKey.String(errorType))
	}
	t.in.session.Record(context.WithoutCancel(ctx), max(d, 0).Seconds(), attrs...)
}

// Names of the host's INTERNAL spans, and the error.type of a failed
// validation.
const (
	SpanValidateInput     = "validate input"
	SpanValidateOutput    = "validate output"
	SpanTaskRun           = "task run"
	ErrorTypeInputSchema  = "input_schema"
	ErrorTypeOutputSchema = "output_schema"
	// ErrorTypeTaskNotCreated: the store refused the task's record.
	ErrorTypeTaskNotCreated = "task_not_created"
)

// Span starts an INTERNAL child span of ctx named name, about tool
// (gen_ai.tool.name): a task's run (validations: [Telemetry.Timed]). Off, ctx
// comes back as is and the Ender does nothing: nothing is allocated.
func (t *Telemetry) Span(ctx context.Context, name, tool string) (context.Context, Ender) {
	if t == nil {
		return ctx, Ender{}
	}
	st := t.startOptions.of(startKey{kind: trace.SpanKindInternal, tool: tool})
	ctx, span := t.tracer.Start(ctx, name, st.opts...)
	span.SetAttributes(st.attrs...)
	return ctx, Ender{span}
}

// ValidationSpanMin is the shortest passing validation that gets a span
// (validate input, validate output): most validations take a few
// microseconds, less than the span would cost, so only the measurable ones
// are recorded. A failed validation always gets its span.
const ValidationSpanMin = 50 * time.Microsecond

// validationSpanMin is [ValidationSpanMin]; tests set it to 0.
var validationSpanMin = ValidationSpanMin

// Timed is a step measured without a span yet, from [Telemetry.Timed];
// [Timed.Done] records it as a span only when it is worth one. Its zero
// value (telemetry off) does nothing.
type Timed struct {
	t     *Telemetry
	start time.Time
}

// Timed starts timing a validation of a tool.
func (t *Telemetry) Timed() Timed {
	if t == nil {
		return Timed{}
	}
	return Timed{t: t, start: time.Now()}
}

// Done ends the step: when it failed (errorType not "", mode the
// validation mode) or took at least [ValidationSpanMin], it becomes an
// INTERNAL child span of ctx named name, about tool, from the step's start
// to now, and the context of that span comes back (for the failure's log
// line); otherwise nothing is recorded and ctx comes back as is.
func (m Timed) Done(ctx context.Context, name, tool, errorType, mode string) context.Context {
	if m.t == nil {
		return ctx
	}
	end := time.Now()
	if errorType == "" && end.Sub(m.start) < validationSpanMin {
		return ctx
	}
	st := m.t.startOptions.of(startKey{kind: trace.SpanKindInternal, tool: tool})
	opts := append(st.opts[:len(st.opts):len(st.opts)], trace.WithTimestamp(m.start))
	ctx, span := m.t.tracer.Start(ctx, name, opts...)
	if errorType != "" {
		span.SetAttributes(append(st.attrs[:len(st.attrs):len(st.attrs)], AttrValidationMode.String(mode), semconv.ErrorTypeKey.String(errorType))...)
		span.SetStatus(codes.Error, errorType)
	} else {
		span.SetAttributes(st.attrs...)
	}
	span.End(trace.WithTimestamp(end))
	return ctx
}

// Ender ends a span of [Telemetry.Span]; its zero value does nothing.
type Ender struct{ span trace.Span }

// Set sets a string attribute of the span.
func (e Ender) Set(key attribute.Key, value string) {
	if e.span != nil {
		e.span.SetAttributes(key.String(value))
	}
}

// End ends the span; errorType, when not "", marks it failed.
func (e Ender) End(errorType string) {
	if e.span == nil {
		return
	}
	if errorType != "" {
		e.span.SetAttributes(semconv.ErrorTypeKey.String(errorType))
		e.span.SetStatus(codes.Error, errorType)
	}
	e.span.End()
}

// Traceparent is the W3C traceparent of the span of ctx; "" when it has
// none or t is nil.
func (t *Telemetry) Traceparent(ctx context.Context) string {
	if t == nil {
		return ""
	}
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() {
		return ""
	}
	return traceparent(sc)
}

// FromTraceparent returns ctx with the remote span context of traceparent
// as its parent; ctx as is when traceparent is empty or malformed.
func (t *Telemetry) FromTraceparent(ctx context.Context, traceparent string) context.Context {
	if t == nil || traceparent == "" {
		return ctx
	}
	return t.prop.Extract(ctx, &otelsetup.TraceContext{Traceparent: traceparent})
}

// linkOf is the span context of a traceparent, invalid when malformed.
func (t *Telemetry) linkOf(traceparent string) trace.SpanContext {
	return trace.SpanContextFromContext(t.prop.Extract(context.Background(), &otelsetup.TraceContext{Traceparent: traceparent}))
}
