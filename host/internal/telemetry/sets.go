package telemetry

import (
	"strconv"
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
)

// The caches of this file keep what the link makes for each kind of
// exchange, so that recording one builds nothing again. Their keys are the
// server's own names only, never a client's text: the methods the endpoint
// knows or [Other], the tools, prompts, resources and templates the app
// declares or [Other], the revisions it speaks, the error types it answers
// with, the functions it invokes. So they are bounded by construction,
// whatever clients send; maxCached is a second bound, for an app that
// declares more than it.
const maxCached = 1024

// durationKey is what the attributes of one mcp.server.operation.duration
// recording are made of.
type durationKey struct {
	method string
	// target is gen_ai.tool.name, gen_ai.prompt.name or mcp.resource.uri
	// with the app's own name or Other; invalid for none.
	target    attribute.KeyValue
	version   string
	errorType string
}

// durationSets keeps the attribute set of each durationKey seen, so that
// recording a duration neither builds, sorts nor hashes a set again.
type durationSets struct {
	mu sync.RWMutex
	m  map[durationKey]attribute.Set
}

func (d *durationSets) of(k durationKey) attribute.Set {
	d.mu.RLock()
	s, ok := d.m[k]
	d.mu.RUnlock()
	if ok {
		return s
	}
	s = k.set()
	d.mu.Lock()
	if d.m == nil {
		d.m = make(map[durationKey]attribute.Set)
	}
	if len(d.m) < maxCached {
		d.m[k] = s
	}
	d.mu.Unlock()
	return s
}

// len is how many sets are kept.
func (d *durationSets) len() int {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return len(d.m)
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

// spanNameKey is what a SERVER span's name is made of: the method and the
// tool or prompt (the app's name or Other).
type spanNameKey struct{ method, target string }

// spanNames keeps the names of the SERVER spans: "{method} {target}" for a
// tool or a prompt, made once each.
type spanNames struct {
	mu sync.RWMutex
	m  map[spanNameKey]string
}

// of is the name of the SERVER span of method about target: the method
// alone when the target is none or the method's table entry does not name
// its span by its target (named false: a URI, even a declared one, is no
// span name).
func (n *spanNames) of(method string, target attribute.KeyValue, named bool) string {
	if !target.Valid() || !named {
		return method
	}
	k := spanNameKey{method: method, target: target.Value.AsString()}
	n.mu.RLock()
	name, ok := n.m[k]
	n.mu.RUnlock()
	if ok {
		return name
	}
	name = method + " " + k.target
	n.mu.Lock()
	if n.m == nil {
		n.m = make(map[spanNameKey]string)
	}
	if len(n.m) < maxCached {
		n.m[k] = name
	}
	n.mu.Unlock()
	return name
}

// len is how many names are kept.
func (n *spanNames) len() int {
	n.mu.RLock()
	defer n.mu.RUnlock()
	return len(n.m)
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
// maxCached), so that starting a child span does not build its name,
// attributes and options again. Its keys are the host's: the tools a task
// runs or a validation checks, the functions it invokes, never a name a
// client sent.
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
	if o.n.Load() < maxCached {
		if _, loaded := o.m.LoadOrStore(k, s); !loaded {
			o.n.Add(1)
		}
	}
	return s
}
