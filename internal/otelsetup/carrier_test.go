package otelsetup

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// TestHeaderCarrierReadsAsTheSDKs: the propagator reads the same trace
// context and baggage through HeaderCarrier as through the SDK's carrier,
// whatever the case the headers were set in.
func TestHeaderCarrierReadsAsTheSDKs(t *testing.T) {
	prop := Propagator()
	for _, h := range []http.Header{
		{},
		{"Traceparent": {"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}},
		{"Traceparent": {"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}, "Tracestate": {"vendor=abc"}, "Baggage": {"user=alice"}},
		{"Traceparent": {"not a traceparent"}},
		{"Content-Type": {"application/json"}},
	} {
		for _, set := range []func(http.Header) http.Header{
			func(h http.Header) http.Header { return h },
			func(h http.Header) http.Header { // set through Header.Set, as a client's request arrives
				c := http.Header{}
				for k, v := range h {
					c.Set(k, v[0])
				}
				return c
			},
		} {
			hh := set(h)
			want := prop.Extract(context.Background(), propagation.HeaderCarrier(hh))
			got := prop.Extract(context.Background(), HeaderCarrier(hh))
			assert.Equal(t, trace.SpanContextFromContext(want), trace.SpanContextFromContext(got), "%v", hh)
			assert.Equal(t, baggage.FromContext(want).String(), baggage.FromContext(got).String(), "%v", hh)
		}
	}
	c := HeaderCarrier(http.Header{})
	c.Set("traceparent", "x")
	assert.Equal(t, "x", c.Get("traceparent"))
	assert.Equal(t, []string{"Traceparent"}, c.Keys())
}

// TestHeaderCarrierAllocations: reading a request without trace context
// allocates nothing (the SDK's carrier makes a string for each of the
// three names it looks up).
func TestHeaderCarrierAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under the race detector; make test runs this without it")
	}
	prop := Propagator()
	h := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json"}}
	ctx := context.Background()
	assert.Zero(t, testing.AllocsPerRun(100, func() { _ = prop.Extract(ctx, HeaderCarrier(h)) }))
}

// TestTraceContextReadsAsAMap: the propagator reads a TraceContext as it
// reads a map of the same values.
func TestTraceContextReadsAsAMap(t *testing.T) {
	prop := Propagator()
	for _, c := range []TraceContext{
		{},
		{Traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"},
		{Traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", Tracestate: "vendor=abc", Baggage: "user=alice"},
		{Traceparent: "malformed", Baggage: "user=alice"},
	} {
		m := propagation.MapCarrier{}
		for _, k := range c.Keys() {
			m[k] = c.Get(k)
		}
		want := prop.Extract(context.Background(), m)
		got := prop.Extract(context.Background(), &c)
		assert.Equal(t, trace.SpanContextFromContext(want), trace.SpanContextFromContext(got), "%+v", c)
		assert.Equal(t, baggage.FromContext(want).String(), baggage.FromContext(got).String(), "%+v", c)
	}
	assert.Equal(t, []string{"traceparent", "baggage"}, (&TraceContext{Traceparent: "t", Baggage: "b"}).Keys())
}
