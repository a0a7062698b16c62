package mcp

import (
	"context"
	"strings"
)

// What a tracing or metrics link reads of an exchange beyond the method,
// name and outcome: the request id, the trace context of params._meta, and
// a way to hand the handler a context that carries the link's span.

// ID is the JSON-RPC id as text: a string id without its quotes, a number
// as written; "" for a notification.
func (x *Exchange) ID() string {
	id := x.msg.id
	if s, ok := stringValue(id); ok {
		return s
	}
	if len(id) == 0 || string(id) == "null" {
		return ""
	}
	return string(id)
}

// MetaString is the string member key of params._meta ("traceparent",
// "tracestate", "baggage" of SEP-414); "" when absent or not a string.
func (x *Exchange) MetaString(key string) string {
	if len(x.msg.meta) == 0 {
		return ""
	}
	return paramString(x.msg.meta, key)
}

// ErrorType is the exchange's error class once next returned: the JSON-RPC
// code of an error answer, "tool_error" for a tool's isError result, the
// HTTP status of a refusal; "" when it did not fail.
func (x *Exchange) ErrorType() string {
	o := x.Outcome()
	switch {
	case o == "isError":
		return "tool_error"
	case strings.HasPrefix(o, "error "):
		return o[len("error "):]
	case strings.HasPrefix(o, "refused "):
		return o[len("refused "):]
	}
	return ""
}

// LinkedTrace is, after next returned, the W3C traceparent of the span
// the exchange is about without being its child: the run of the task a
// tasks/get read ([TaskOptions.Traceparent]); "" when none.
func (x *Exchange) LinkedTrace() string { return x.linked }

// SetContext makes ctx the context the rest of the chain and the method's
// handler run under (the parent of the call's context): a link calls it
// before next to pass a span down to the invocation of the worker.
func (x *Exchange) SetContext(ctx context.Context) {
	x.r = x.r.WithContext(ctx)
}
