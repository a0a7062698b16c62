package otelsetup

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// BenchmarkSDKOTLPExport_ExportOnly measures the SDK's OTLP/HTTP trace
// exporter alone: one batch of 512 ended server spans shaped like
// funchost's for a tools/call (its ten attributes), transformed,
// marshalled and posted to a receiver in this process that drops them.
// It leaves out making the spans and the processes' collection of the
// garbage around a real call; per span: ns/span, and B/op and allocs/op
// divided by 512.
func BenchmarkSDKOTLPExport_ExportOnly(b *testing.B) {
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(http.StatusOK)
	}))
	defer recv.Close()
	exp, err := otlptracehttp.New(context.Background(), otlptracehttp.WithEndpointURL(recv.URL+"/v1/traces"))
	if err != nil {
		b.Fatal(err)
	}
	defer exp.Shutdown(context.Background())
	rec := tracetest.NewSpanRecorder()
	tr := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)).Tracer("funchost")
	for range 512 {
		_, s := tr.Start(context.Background(), "tools/call get_weather", trace.WithSpanKind(trace.SpanKindServer))
		s.SetAttributes(
			attribute.String("mcp.method.name", "tools/call"), attribute.String("gen_ai.tool.name", "get_weather"),
			attribute.String("gen_ai.operation.name", "execute_tool"), attribute.String("jsonrpc.request.id", "12"),
			attribute.String("mcp.session.id", "3f2a9c0e5b7d41e8a6c2f0b9d4e7a1c3"), attribute.String("network.transport", "tcp"),
			attribute.String("network.protocol.name", "http"), attribute.String("client.address", "127.0.0.1"),
			attribute.Int("client.port", 43210), attribute.String("mcp.protocol.version", "2025-11-25"))
		s.End()
	}
	spans := rec.Ended()
	b.ReportAllocs()
	for b.Loop() {
		if err := exp.ExportSpans(context.Background(), spans); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(spans)), "ns/span")
}
