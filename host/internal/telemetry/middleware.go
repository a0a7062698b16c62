package telemetry

import (
	"context"
	"net"
	"net/http"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/funcmcp/funcmcp/host/internal/invoke"
	"github.com/funcmcp/funcmcp/host/internal/mcp"
)

// ErrorTypeTool is the error.type of a tool's isError result.
const ErrorTypeTool = "tool_error"

// Middleware returns the link of the MCP chain that traces and measures
// every exchange: nil when t is nil (telemetry off).
//
// The span is a SERVER span named "{mcp.method.name} {target}" (the tool
// or the prompt name; the method alone otherwise). Its parent is the trace
// context of params._meta (SEP-414) when the client sent one, else the HTTP
// request's traceparent; when both are there and differ, the HTTP one is a
// link. Its context is the handler's, so the invocation of the worker is
// its child. An exchange that fails (a JSON-RPC error, a tool's isError
// result, an HTTP refusal) has error.type and status Error.
func (t *Telemetry) Middleware() []mcp.Middleware {
	if t == nil {
		return nil
	}
	return []mcp.Middleware{t.link}
}

func (t *Telemetry) link(next mcp.MethodHandler) mcp.MethodHandler {
	return func(x *mcp.Exchange) {
		start := time.Now()
		r := x.Request()
		base := r.Context()
		httpCtx := t.prop.Extract(base, propagation.HeaderCarrier(r.Header))
		parent := httpCtx
		var opts []trace.SpanStartOption
		if tp := x.MetaString("traceparent"); tp != "" {
			carrier := propagation.MapCarrier{"traceparent": tp}
			if ts := x.MetaString("tracestate"); ts != "" {
				carrier["tracestate"] = ts
			}
			if b := x.MetaString("baggage"); b != "" {
				carrier["baggage"] = b
			}
			metaCtx := t.prop.Extract(base, carrier)
			if msc := trace.SpanContextFromContext(metaCtx); msc.IsValid() {
				parent = metaCtx
				if hsc := trace.SpanContextFromContext(httpCtx); hsc.IsValid() && !hsc.Equal(msc) {
					opts = append(opts, trace.WithLinks(trace.Link{SpanContext: hsc}))
				}
			}
		}

		method, name := x.Method(), x.Name()
		attrs := make([]attribute.KeyValue, 0, 10)
		attrs = append(attrs, semconv.McpMethodNameKey.String(method))
		spanName := method
		target := targetAttr(method, name)
		if target.Valid() {
			attrs = append(attrs, target)
			if target.Key != semconv.McpResourceURIKey {
				spanName += " " + name
			}
			if method == "tools/call" {
				attrs = append(attrs, semconv.GenAIOperationNameExecuteTool)
			}
		}
		if id := x.ID(); id != "" {
			attrs = append(attrs, semconv.JSONRPCRequestID(id))
		}
		if sid := r.Header.Get("Mcp-Session-Id"); sid != "" {
			attrs = append(attrs, semconv.McpSessionIDKey.String(sid))
		}
		attrs = append(attrs, semconv.NetworkTransportTCP, semconv.NetworkProtocolName("http"))
		if host, port, err := net.SplitHostPort(r.RemoteAddr); err == nil {
			attrs = append(attrs, semconv.ClientAddress(host))
			if p, err := strconv.Atoi(port); err == nil {
				attrs = append(attrs, semconv.ClientPort(p))
			}
		}
		opts = append(opts, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attrs...), trace.WithTimestamp(start))
		ctx, span := t.tracer.Start(parent, spanName, opts...)
		x.SetContext(ctx)

		next(x)

		if lt := x.LinkedTrace(); lt != "" {
			if sc := t.linkOf(lt); sc.IsValid() {
				span.AddLink(trace.Link{SpanContext: sc})
			}
		}
		version, et := x.ProtocolVersion(), x.ErrorType()
		if version != "" {
			span.SetAttributes(semconv.McpProtocolVersionKey.String(version))
		}
		if et != "" {
			span.SetAttributes(semconv.ErrorTypeKey.String(et))
			if isRPCCode(et) {
				span.SetAttributes(semconv.RPCResponseStatusCode(et))
			}
			span.SetStatus(codes.Error, x.Outcome())
		}
		span.End()
		t.duration.RecordSet(context.WithoutCancel(ctx), time.Since(start).Seconds(),
			t.durationSets.of(durationKey{method: method, target: target, version: version, errorType: et}))
	}
}

// targetAttr is what the request names, as the conventions spell it for
// its method; an invalid attribute when it names nothing.
func targetAttr(method, name string) attribute.KeyValue {
	if name == "" {
		return attribute.KeyValue{}
	}
	switch method {
	case "tools/call":
		return semconv.GenAIToolName(name)
	case "prompts/get":
		return semconv.GenAIPromptName(name)
	case "resources/read", "resources/subscribe", "resources/unsubscribe":
		return semconv.McpResourceURIKey.String(name)
	}
	return attribute.KeyValue{}
}

// InvokeTrace returns the [invoke.Trace] that wraps each invocation of the
// worker in a CLIENT span and sends its W3C trace context (traceparent,
// tracestate, baggage) in the POST's headers; nil when t is nil.
func (t *Telemetry) InvokeTrace() invoke.Trace {
	if t == nil {
		return nil
	}
	return func(ctx context.Context, function string) (context.Context, http.Header, func(error)) {
		o := t.startOptions.of(startKey{kind: trace.SpanKindClient, function: function})
		ctx, span := t.tracer.Start(ctx, o.name, o.opts...)
		h := traceHeaders(ctx, span.SpanContext())
		return ctx, h, func(err error) {
			if err != nil {
				span.RecordError(err)
				span.SetAttributes(semconv.ErrorTypeKey.String("invoke"))
				span.SetStatus(codes.Error, err.Error())
			}
			span.End()
		}
	}
}

// traceHeaders are the W3C headers of the invocation of sc: what the
// propagator would write (traceparent; tracestate and baggage when there
// are any), written straight from the span context.
func traceHeaders(ctx context.Context, sc trace.SpanContext) http.Header {
	if !sc.IsValid() {
		return nil
	}
	h := make(http.Header, 3)
	h["Traceparent"] = []string{"00-" + sc.TraceID().String() + "-" + sc.SpanID().String() + "-" + w3cFlags(sc)}
	if ts := sc.TraceState(); ts.Len() > 0 {
		h["Tracestate"] = []string{ts.String()}
	}
	if b := baggage.FromContext(ctx); b.Len() > 0 {
		h["Baggage"] = []string{b.String()}
	}
	return h
}

// w3cFlags are the trace flags of sc as W3C trace context carries them:
// the sampled and random bits only, as the propagator writes them.
func w3cFlags(sc trace.SpanContext) string {
	return (sc.TraceFlags() & (trace.FlagsSampled | trace.FlagsRandom)).String()
}

// Propagator is the W3C trace-context and baggage propagator the host
// reads and writes.
func (t *Telemetry) Propagator() propagation.TextMapPropagator { return t.prop }
