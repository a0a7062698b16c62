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
	"github.com/funcmcp/funcmcp/internal/otelsetup"
	"github.com/funcmcp/funcmcp/metadata"
)

// ErrorTypeTool is the error.type of a tool's isError result.
const ErrorTypeTool = "tool_error"

// Other is what telemetry calls a method, tool, prompt or resource the
// server does not know, as the OpenTelemetry conventions do ("_OTHER"):
// a span's name and a metric's attributes name only what the app declares,
// so that no client can add a series or a name of its choosing.
const Other = "_OTHER"

// Middleware returns the link of the MCP chain that traces and measures
// every exchange: nil when t is nil (telemetry off).
//
// The span is a SERVER span named "{mcp.method.name} {target}" (the tool
// or the prompt; the method alone otherwise), where the method and the
// target are the server's own names ([mcp.Exchange.Target]) or [Other].
// Its parent is the trace context of params._meta (SEP-414) when the
// client sent one, else the HTTP request's traceparent; when both are
// there and differ, the HTTP one is a link. Its context is the handler's,
// so the invocation of the worker is its child. An exchange that fails (a
// JSON-RPC error, a tool's isError result, an HTTP refusal) has error.type
// and status Error. What the client chose and the span carries is cut: the
// request id to otelsetup.MaxIDBytes (the endpoint refuses a longer one),
// the session id to otelsetup.MaxSessionIDBytes, a resource URI and the
// client's address to otelsetup.MaxValueBytes.
func (t *Telemetry) Middleware() []mcp.Middleware {
	if t == nil {
		return nil
	}
	return []mcp.Middleware{t.link}
}

func (t *Telemetry) link(next mcp.MethodHandler) mcp.MethodHandler {
	return func(x *mcp.Exchange) {
		if x.Stream() != "" {
			// A GET stream is no MCP operation: the HTTP request's span
			// (Telemetry.HTTP) is its record.
			next(x)
			return
		}
		start := time.Now()
		r := x.Request()
		base := r.Context()
		httpCtx := t.prop.Extract(base, otelsetup.HeaderCarrier(r.Header))
		parent := httpCtx
		opts := make([]trace.SpanStartOption, 0, 3)
		opts = append(opts, trace.WithSpanKind(trace.SpanKindServer), trace.WithTimestamp(start))
		if tp := x.MetaString("traceparent"); tp != "" {
			metaCtx := t.prop.Extract(base, &otelsetup.TraceContext{Traceparent: tp, Tracestate: x.MetaString("tracestate"), Baggage: x.MetaString("baggage")})
			if msc := trace.SpanContextFromContext(metaCtx); msc.IsValid() {
				parent = metaCtx
				if hsc := trace.SpanContextFromContext(httpCtx); hsc.IsValid() && !hsc.Equal(msc) {
					opts = append(opts, trace.WithLinks(trace.Link{SpanContext: hsc}))
				}
			}
		}

		// The attributes are set once, when the exchange is over, with
		// those only known then (the revision, error.type): one copy into
		// the span, where setting some at the start and the rest at the end
		// copies them twice and grows the span's slice. No sampler of
		// OTEL_TRACES_SAMPLER reads attributes, so the decision is the same.
		tg := x.Target()
		method := tg.Method
		if method == "" {
			method = Other
		}
		target := targetAttr(tg)
		ctx, span := t.tracer.Start(parent, t.spanNames.of(method, target, spanTarget(tg.Method)), opts...)
		x.SetContext(ctx)

		next(x)

		if lt := x.LinkedTrace(); lt != "" {
			if sc := t.linkOf(lt); sc.IsValid() {
				span.AddLink(trace.Link{SpanContext: sc})
			}
		}
		version, et := x.ProtocolVersion(), x.ErrorType()
		otelsetup.SetAttributes(span, func(a []attribute.KeyValue) []attribute.KeyValue {
			a = append(a, semconv.McpMethodNameKey.String(method))
			switch {
			case tg.Kind == mcp.TargetResource && target.Valid():
				// The span is one request's: it may say which URI, cut.
				a = append(a, semconv.McpResourceURIKey.String(otelsetup.Bound(tg.Name, otelsetup.MaxValueBytes)))
			case target.Valid():
				a = append(a, target)
				if tg.Kind == mcp.TargetTool {
					a = append(a, semconv.GenAIOperationNameExecuteTool)
				}
			}
			if id := x.ID(); id != "" {
				a = append(a, semconv.JSONRPCRequestID(otelsetup.Bound(id, otelsetup.MaxIDBytes)))
			}
			if sid := r.Header.Get("Mcp-Session-Id"); sid != "" {
				a = append(a, semconv.McpSessionIDKey.String(otelsetup.Bound(sid, otelsetup.MaxSessionIDBytes)))
			}
			a = append(a, semconv.NetworkTransportTCP, semconv.NetworkProtocolName("http"))
			if host, port, err := net.SplitHostPort(r.RemoteAddr); err == nil {
				a = append(a, semconv.ClientAddress(otelsetup.Bound(host, otelsetup.MaxValueBytes)))
				if p, err := strconv.Atoi(port); err == nil {
					a = append(a, semconv.ClientPort(p))
				}
			}
			if version != "" {
				a = append(a, semconv.McpProtocolVersionKey.String(version))
			}
			if et != "" {
				a = append(a, semconv.ErrorTypeKey.String(et))
				if isRPCCode(et) {
					a = append(a, semconv.RPCResponseStatusCode(et))
				}
			}
			return a
		})
		if et != "" {
			span.SetStatus(codes.Error, x.Outcome())
		}
		span.End()
		t.duration.RecordSet(context.WithoutCancel(ctx), time.Since(start).Seconds(),
			t.durationSets.of(durationKey{method: method, target: target, version: version, errorType: et}))
	}
}

// spanTarget reports whether the method table names the spans of method
// by their target.
func spanTarget(method string) bool {
	m := metadata.LookupMethod(method)
	return m != nil && m.SpanTarget
}

// targetAttr is what the request names, as the conventions spell it for
// its kind, with the app's own name for it or [Other]: the tool
// (gen_ai.tool.name), the prompt (gen_ai.prompt.name), the resource
// (mcp.resource.uri: the static resource's URI or the template the URI
// matched); an invalid attribute when it names nothing.
func targetAttr(tg mcp.Target) attribute.KeyValue {
	if tg.Name == "" {
		return attribute.KeyValue{}
	}
	label := tg.Known
	if label == "" {
		label = Other
	}
	switch tg.Kind {
	case mcp.TargetTool:
		return semconv.GenAIToolName(label)
	case mcp.TargetPrompt:
		return semconv.GenAIPromptName(label)
	case mcp.TargetResource:
		return semconv.McpResourceURIKey.String(label)
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
		span.SetAttributes(o.attrs...)
		h := traceHeaders(ctx, span.SpanContext())
		return ctx, h, func(err error) {
			if err != nil {
				otelsetup.RecordError(span, err)
				span.SetAttributes(semconv.ErrorTypeKey.String("invoke"))
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
	h["Traceparent"] = []string{traceparent(sc)}
	if ts := sc.TraceState(); ts.Len() > 0 {
		h["Tracestate"] = []string{ts.String()}
	}
	if b := baggage.FromContext(ctx); b.Len() > 0 {
		h["Baggage"] = []string{b.String()}
	}
	return h
}

// traceparent is the W3C traceparent of sc, as the propagator writes it:
// of the trace flags, the sampled and random bits only.
func traceparent(sc trace.SpanContext) string {
	flags := sc.TraceFlags() & (trace.FlagsSampled | trace.FlagsRandom)
	return "00-" + sc.TraceID().String() + "-" + sc.SpanID().String() + "-" + flags.String()
}

// Propagator is the W3C trace-context and baggage propagator the host
// reads and writes.
func (t *Telemetry) Propagator() propagation.TextMapPropagator { return t.prop }
