package telemetry

import (
	"strconv"
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
)

// maxDurationSets bounds the attribute sets of mcp.server.operation.duration
// kept for reuse; past it a set is built for each recording. Tool and
// prompt names are few, resource URIs may not be.
const maxDurationSets = 1024

// durationKey is what the attributes of one mcp.server.operation.duration
// recording are made of.
type durationKey struct {
	method    string
	target    attribute.KeyValue // gen_ai.tool.name, gen_ai.prompt.name, mcp.resource.uri; invalid for none
	version   string
	errorType string
}

// durationSets keeps the attribute set of each durationKey seen, so that
// recording a duration neither builds, sorts nor hashes a set again.
type durationSets struct {
	m sync.Map // durationKey → attribute.Set
	n atomic.Int32
}

func (d *durationSets) of(k durationKey) attribute.Set {
	if s, ok := d.m.Load(k); ok {
		return s.(attribute.Set)
	}
	s := k.set()
	if d.n.Load() < maxDurationSets {
		if _, loaded := d.m.LoadOrStore(k, s); !loaded {
			d.n.Add(1)
		}
	}
	return s
}

// set is the attribute set of k: mcp.method.name, the target, the
// protocol version, error.type and, for a JSON-RPC code,
// rpc.response.status_code.
func (k durationKey) set() attribute.Set {
	attrs := make([]attribute.KeyValue, 0, 5)
	attrs = append(attrs, semconv.McpMethodNameKey.String(k.method))
	if k.target.Valid() {
		attrs = append(attrs, k.target)
	}
	if k.version != "" {
		attrs = append(attrs, semconv.McpProtocolVersionKey.String(k.version))
	}
	if k.errorType != "" {
		attrs = append(attrs, semconv.ErrorTypeKey.String(k.errorType))
		if isRPCCode(k.errorType) {
			attrs = append(attrs, semconv.RPCResponseStatusCode(k.errorType))
		}
	}
	return attribute.NewSet(attrs...)
}

// isRPCCode reports whether an error.type is a JSON-RPC error code.
func isRPCCode(et string) bool {
	_, err := strconv.Atoi(et)
	return err == nil && et != "" && et[0] == '-'
}

// startKey names the start options of one kind of child span: an
// INTERNAL span about a tool (validation, a task's run), or the CLIENT
// span of an invocation of a function.
type startKey struct {
	kind           trace.SpanKind
	tool, function string
}

// started are the name, start options and attributes of a startKey's
// spans. The attributes are set after the start (no sampler of
// OTEL_TRACES_SAMPLER reads them): as a start option they would be copied
// into the start config before the span.
type started struct {
	name  string // the CLIENT span's ("invoke {function}"); INTERNAL spans are named by their caller
	opts  []trace.SpanStartOption
	attrs []attribute.KeyValue
}

// startOptions keeps the start options of each startKey seen (at most
// maxDurationSets), so that starting a child span does not build its
// name, attributes and options again: functions and tools are few.
type startOptions struct {
	m sync.Map // startKey → started
	n atomic.Int32
}

func (o *startOptions) of(k startKey) started {
	if s, ok := o.m.Load(k); ok {
		return s.(started)
	}
	var s started
	if k.kind == trace.SpanKindClient {
		s = started{name: "invoke " + k.function, opts: []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindClient)},
			attrs: []attribute.KeyValue{semconv.FaaSInvokedName(k.function)}}
	} else {
		s = started{opts: []trace.SpanStartOption{trace.WithSpanKind(k.kind)}, attrs: []attribute.KeyValue{semconv.GenAIToolName(k.tool)}}
	}
	if o.n.Load() < maxDurationSets {
		if _, loaded := o.m.LoadOrStore(k, s); !loaded {
			o.n.Add(1)
		}
	}
	return s
}
