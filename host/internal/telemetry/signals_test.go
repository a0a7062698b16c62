package telemetry

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/trace"

	"github.com/funcmcp/funcmcp/host/internal/mcp"
)

// collect reads every metric the recorder holds, by name.
func (rc *recorded) collect(t *testing.T) map[string]metricdata.Metrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, rc.reader.Collect(context.Background(), &rm))
	out := map[string]metricdata.Metrics{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			out[m.Name] = m
		}
	}
	return out
}

// sumBy returns the counter's points as attribute value → count.
func sumBy(t *testing.T, m metricdata.Metrics, key attribute.Key) map[string]int64 {
	t.Helper()
	sum, ok := m.Data.(metricdata.Sum[int64])
	require.True(t, ok, "%s is a sum", m.Name)
	out := map[string]int64{}
	for _, dp := range sum.DataPoints {
		v, _ := dp.Attributes.Value(key)
		out[v.Emit()] += dp.Value
	}
	return out
}

// TestOperatorMetricsHaveTheirNamesAndUnits records each of the host's
// metrics once and reads them back: name, unit, and what they are by.
func TestOperatorMetricsHaveTheirNamesAndUnits(t *testing.T) {
	rc := newRecorded(t)
	tel := rc.tel
	require.NoError(t, tel.Observe(func() (int64, int64) { return 3, 1 }))
	ctx := context.Background()
	tel.Refused(ctx, RefusedBusy)
	tel.RefusedStatus(ctx, http.StatusRequestEntityTooLarge)
	tel.RefusedStatus(ctx, http.StatusUnauthorized)
	tel.RefusedStatus(ctx, http.StatusOK) // not a refusal
	tel.WorkerRestarted("probe")
	tel.OutputInvalid(ctx, "greet", "strict")
	tel.BackplaneLag(ctx, "redis", time.Now().Add(-20*time.Millisecond))
	tel.BackplaneLag(ctx, "redis", time.Time{}) // a sender that stamps nothing: nothing recorded
	tel.TaskFinished(ctx, "completed")
	tel.SessionEnded(ctx, 90*time.Second, "2025-06-18", "")

	got := rc.collect(t)
	for name, unit := range map[string]string{
		MetricSessionDuration: "s",
		MetricRefused:         "{request}",
		MetricWorkerRestarts:  "{restart}",
		MetricOutputInvalid:   "{result}",
		MetricBackplaneLag:    "s",
		MetricTasksFinished:   "{task}",
		MetricCallsInFlight:   "{call}",
		MetricTasksRunning:    "{task}",
	} {
		m, ok := got[name]
		if assert.True(t, ok, "%s is recorded", name) {
			assert.Equal(t, unit, m.Unit, name)
		}
	}
	assert.Equal(t, map[string]int64{"busy": 1, "too_large": 1, "unauthorized": 1}, sumBy(t, got[MetricRefused], AttrRefusalReason))
	assert.Equal(t, map[string]int64{"probe": 1}, sumBy(t, got[MetricWorkerRestarts], AttrRestartReason))
	assert.Equal(t, map[string]int64{"strict": 1}, sumBy(t, got[MetricOutputInvalid], AttrValidationMode))
	assert.Equal(t, map[string]int64{"completed": 1}, sumBy(t, got[MetricTasksFinished], AttrTaskStatus))
	assert.Equal(t, map[string]int64{"": 3}, sumBy(t, got[MetricCallsInFlight], "none"))
	assert.Equal(t, map[string]int64{"": 1}, sumBy(t, got[MetricTasksRunning], "none"))

	session := got[MetricSessionDuration].Data.(metricdata.Histogram[float64])
	require.Len(t, session.DataPoints, 1)
	assert.Equal(t, DurationBuckets, session.DataPoints[0].Bounds)
	assert.Equal(t, 90.0, session.DataPoints[0].Sum)
	v, _ := session.DataPoints[0].Attributes.Value("mcp.protocol.version")
	assert.Equal(t, "2025-06-18", v.Emit())
	lag := got[MetricBackplaneLag].Data.(metricdata.Histogram[float64])
	require.Len(t, lag.DataPoints, 1)
	assert.Equal(t, uint64(1), lag.DataPoints[0].Count)
	assert.GreaterOrEqual(t, lag.DataPoints[0].Sum, 0.02)
}

// TestOffAllocatesNothing: with telemetry off (a nil *Telemetry) the calls
// the host makes on a tools/call allocate nothing.
func TestOffAllocatesNothing(t *testing.T) {
	var tel *Telemetry
	ctx := context.Background()
	allocs := testing.AllocsPerRun(100, func() {
		c, span := tel.Span(ctx, SpanValidateInput, "greet")
		c = tel.Timed().Done(c, SpanValidateOutput, "greet", ErrorTypeOutputSchema, "strict")
		span.Set(AttrValidationMode, "strict")
		span.End(ErrorTypeInputSchema)
		_, run := tel.Span(c, SpanTaskRun, "greet")
		run.End("")
		tel.Refused(ctx, RefusedBusy)
		tel.OutputInvalid(ctx, "greet", "strict")
		tel.TaskFinished(ctx, "completed")
		_ = tel.Traceparent(ctx)
		_, _, _, send := tel.BackplaneSend(ctx, "memory", "b", "id")
		send.End("")
		_, recv := tel.BackplaneReceive(ctx, "memory", "b", "id", "", time.Time{})
		recv.End("")
	})
	assert.Zero(t, allocs)
}

// TestLoggerAddsTraceAndSpanIDs: a line logged under a span's context
// carries trace_id and span_id; one without a span carries neither; off,
// the logger is the one given.
func TestLoggerAddsTraceAndSpanIDs(t *testing.T) {
	rc := newRecorded(t)
	var buf bytes.Buffer
	base := slog.New(slog.NewTextHandler(&buf, nil))
	var off *Telemetry
	assert.Same(t, base, off.Logger(base))
	log := rc.tel.Logger(base).With("component", "host")
	ctx, span := rc.tel.tracer.Start(context.Background(), "server")
	log.InfoContext(ctx, "in a request")
	span.End()
	log.Info("outside")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	require.Len(t, lines, 2)
	sc := span.SpanContext()
	assert.Contains(t, lines[0], "component=host trace_id="+sc.TraceID().String()+" span_id="+sc.SpanID().String())
	assert.NotContains(t, lines[1], "trace_id")
}

// TestBackplaneHopIsOneTrace: the PRODUCER span of a send and the CONSUMER
// span of its receipt on the other instance are one trace, linked by the
// traceparent the message carries; the receipt records the lag.
func TestBackplaneHopIsOneTrace(t *testing.T) {
	rc := newRecorded(t)
	ctx, client := rc.tel.tracer.Start(context.Background(), "client")
	_, tp, sent, send := rc.tel.BackplaneSend(ctx, "redis", "instb", "m1")
	send.End("")
	require.NotEmpty(t, tp)
	assert.False(t, sent.IsZero())
	_, recv := rc.tel.BackplaneReceive(context.Background(), "redis", "instb", "m1", tp, sent)
	recv.Set(AttrBackplaneOutcome, "taken")
	recv.End("")
	client.End()

	spans := rc.spans.GetSpans().Snapshots()
	require.Len(t, spans, 3)
	s, r := spans[0], spans[1]
	assert.Equal(t, "send instb", s.Name())
	assert.Equal(t, trace.SpanKindProducer, s.SpanKind())
	assert.Equal(t, client.SpanContext().SpanID(), s.Parent().SpanID())
	assert.Equal(t, "process instb", r.Name())
	assert.Equal(t, trace.SpanKindConsumer, r.SpanKind())
	assert.Equal(t, s.SpanContext().TraceID(), r.SpanContext().TraceID())
	assert.Equal(t, s.SpanContext().SpanID(), r.Parent().SpanID(), "the receipt's parent is the send")
	assert.Equal(t, "taken", attrs(r)[AttrBackplaneOutcome])
	_, ok := rc.collect(t)[MetricBackplaneLag]
	assert.True(t, ok)
}

// TestSessionsEndOnDeleteAndExpiry: the Streamable HTTP endpoint's
// sessions are measured when a DELETE ends one (from when it began) and
// when a request of an expired one is answered 404 (its lifetime); the
// legacy SSE stream is one session from open to close.
func TestSessionsEndOnDeleteAndExpiry(t *testing.T) {
	rc := newRecorded(t)
	began := time.Now().Add(-10 * time.Second)
	session := func(r *http.Request) (mcp.SessionInfo, bool) {
		switch r.Header.Get("Mcp-Session-Id") {
		case "live":
			return mcp.SessionInfo{Version: "2025-06-18", Began: began, Expires: began.Add(time.Hour)}, true
		case "old":
			return mcp.SessionInfo{Began: began, Expires: began.Add(time.Hour), Expired: true}, true
		}
		return mcp.SessionInfo{}, false
	}
	endpoint := rc.tel.Sessions(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Mcp-Session-Id") == "old" {
			w.WriteHeader(http.StatusNotFound)
		}
	}), session)
	serve := func(method, sid string) {
		req := httptest.NewRequest(method, "/runtime/webhooks/mcp", nil)
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
		}
		endpoint.ServeHTTP(httptest.NewRecorder(), req)
	}
	serve(http.MethodPost, "live")   // a request: the session goes on
	serve(http.MethodDelete, "live") // ended by the client
	serve(http.MethodPost, "old")    // expired
	serve(http.MethodDelete, "")     // no session: nothing
	stream := rc.tel.Stream(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }))
	stream.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/sse", nil))

	h := rc.collect(t)[MetricSessionDuration].Data.(metricdata.Histogram[float64])
	var count uint64
	var byVersion = map[string]float64{}
	for _, dp := range h.DataPoints {
		count += dp.Count
		v, _ := dp.Attributes.Value("mcp.protocol.version")
		byVersion[v.Emit()] += dp.Sum
	}
	assert.Equal(t, uint64(3), count, "the DELETE, the expiry and the stream")
	assert.InDelta(t, 10, byVersion["2025-06-18"], 5, "the deleted session lasted from its start")
	assert.InDelta(t, 3600, byVersion[""], 5, "the expired one lasted its lifetime (plus the stream's instant)")
}

// TestHTTPCountsRefusalsAndCarriesTheTrace: the wrapper of the host's
// endpoints counts refusals by status and hands the request's traceparent
// to what the request does.
func TestHTTPCountsRefusalsAndCarriesTheTrace(t *testing.T) {
	rc := newRecorded(t)
	var seen trace.SpanContext
	h := rc.tel.HTTP(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = trace.SpanContextFromContext(r.Context())
		switch r.URL.Path {
		case "/forbidden":
			w.WriteHeader(http.StatusForbidden)
		case "/busy":
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	for _, p := range []string{"/forbidden", "/busy", "/fine"} {
		req := httptest.NewRequest(http.MethodPost, p, nil)
		req.Header.Set("Traceparent", "00-"+httpTrace+"-b7ad6b7169203331-01")
		h.ServeHTTP(httptest.NewRecorder(), req)
	}
	assert.Equal(t, httpTrace, seen.TraceID().String())
	assert.Equal(t, map[string]int64{"forbidden": 1, "unavailable": 1}, sumBy(t, rc.collect(t)[MetricRefused], AttrRefusalReason))
}

// TestValidationSpanOnlyWhenMeasurable: a passing validation shorter than
// ValidationSpanMin makes no span; with the threshold at 0 it makes one
// spanning the step, a child of the caller's span; a failed one always
// makes one, with error.type and the mode.
func TestValidationSpanOnlyWhenMeasurable(t *testing.T) {
	rc := newRecorded(t)
	ctx, parent := rc.tel.tracer.Start(context.Background(), "server")
	count := func() int { return len(rc.spans.GetSpans()) }

	// A validation shorter than the threshold (an hour here, so that no
	// pause of the machine can make it longer) makes no span.
	old := validationSpanMin
	t.Cleanup(func() { validationSpanMin = old })
	validationSpanMin = time.Hour
	got := rc.tel.Timed().Done(ctx, SpanValidateInput, "greet", "", "")
	assert.Equal(t, ctx, got, "a fast validation keeps the caller's context")
	assert.Zero(t, count(), "a validation shorter than the threshold makes no span")

	failed := rc.tel.Timed().Done(ctx, SpanValidateOutput, "greet", ErrorTypeOutputSchema, "warn")
	require.Equal(t, 1, count(), "a failed validation always makes its span")
	s := rc.spans.GetSpans()[0]
	assert.Equal(t, SpanValidateOutput, s.Name)
	assert.Equal(t, parent.SpanContext().SpanID(), s.Parent.SpanID())
	assert.Equal(t, s.SpanContext.SpanID(), trace.SpanContextFromContext(failed).SpanID(), "the failure's line is logged in its span")
	assert.Equal(t, codes.Error, s.Status.Code)
	attrs := map[attribute.Key]string{}
	for _, a := range s.Attributes {
		attrs[a.Key] = a.Value.Emit()
	}
	assert.Equal(t, "greet", attrs["gen_ai.tool.name"])
	assert.Equal(t, ErrorTypeOutputSchema, attrs["error.type"])
	assert.Equal(t, "warn", attrs[AttrValidationMode])

	validationSpanMin = 0
	before := time.Now()
	rc.tel.Timed().Done(ctx, SpanValidateInput, "greet", "", "")
	require.Equal(t, 2, count(), "with the threshold at 0 every validation makes its span")
	s = rc.spans.GetSpans()[1]
	assert.Equal(t, SpanValidateInput, s.Name)
	assert.Equal(t, parent.SpanContext().SpanID(), s.Parent.SpanID())
	assert.False(t, s.StartTime.Before(before), "the span starts when the validation did")
	assert.False(t, s.EndTime.Before(s.StartTime))
	parent.End()
}
