package otelsetup

import (
	"context"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

func TestBound(t *testing.T) {
	for _, c := range []struct {
		name, in string
		max      int
		want     string
	}{
		{"fits", "get_weather", 16, "get_weather"},
		{"cut", "abcdef", 4, "abcd"},
		{"cut before a rune it would split", "ab€", 4, "ab"}, // € is three bytes
		{"a rune that ends at the cap stays", "a€", 4, "a€"},
		{"invalid UTF-8 is replaced", "a\xffb", 16, "a\uFFFDb"},
		{"replaced, then cut on a boundary", "\xff\xff\xff", 4, "\uFFFD"},
		{"a rune cut in two by the client", "ab\xe2\x82", 16, "ab\uFFFD"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := Bound(c.in, c.max)
			assert.Equal(t, c.want, got)
			assert.LessOrEqual(t, len(got), c.max)
			assert.True(t, utf8.ValidString(got))
		})
	}
	long := strings.Repeat("é", 1<<19) // 1 MiB
	assert.Len(t, Bound(long, MaxIDBytes), MaxIDBytes)
}

// TestBoundAllocatesNothingForAValidString: the cap is on the path of
// every exchange's span.
func TestBoundAllocatesNothingForAValidString(t *testing.T) {
	s := strings.Repeat("x", 300)
	assert.Zero(t, testing.AllocsPerRun(100, func() { _ = Bound(s, MaxValueBytes) }))
}

// TestRecordErrorCapsTheMessage: a long error's text (it may repeat what a
// client sent) is cut in the exception event and in the status.
func TestRecordErrorCapsTheMessage(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	_, span := tp.Tracer("t").Start(context.Background(), "s")
	RecordError(span, errors.New("unknown city "+strings.Repeat("x", 1<<20)))
	span.End()
	ended := rec.Ended()
	require.Len(t, ended, 1)
	s := ended[0]
	assert.Equal(t, codes.Error, s.Status().Code)
	assert.Len(t, s.Status().Description, MaxMessageBytes)
	require.Len(t, s.Events(), 1)
	e := s.Events()[0]
	assert.Equal(t, "exception", e.Name)
	for _, kv := range e.Attributes {
		assert.LessOrEqual(t, len(kv.Value.Emit()), MaxMessageBytes, kv.Key)
		if kv.Key == "exception.type" {
			assert.Equal(t, "*errors.errorString", kv.Value.AsString())
		}
	}
}
