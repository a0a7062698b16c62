package mcp

import (
	"context"
	"strings"

	"github.com/funcmcp/funcmcp/host/internal/caller"
	"github.com/funcmcp/funcmcp/host/internal/owner"

	"github.com/funcmcp/funcmcp/metadata"
)

// What a tracing or metrics link reads of an exchange beyond the method,
// name and outcome: what the request names as the app knows it, the
// request id, the trace context of params._meta, and a way to hand the
// handler a context that carries the link's span.

// TargetKind is what a request's method names ([metadata.MethodSpec]'s
// Target).
type TargetKind = metadata.Target

// The kinds of target.
const (
	TargetNone     = metadata.TargetNone     // the method names nothing (tools/list, ping, …)
	TargetTool     = metadata.TargetTool     // tools/call names a tool (params.name)
	TargetPrompt   = metadata.TargetPrompt   // prompts/get names a prompt (params.name)
	TargetResource = metadata.TargetResource // resources/read, resources/subscribe and resources/unsubscribe name a resource (params.uri)
)

// Target is what an exchange is about, told apart into what the endpoint
// and the app know (which may label telemetry: a span's name, a metric's
// attributes) and what the client sent (which may not, uncapped).
type Target struct {
	// Method is the method's name when the endpoint knows it: a method of
	// its table, or a notification a client sends (notifications/…); ""
	// otherwise (the client's text is then only in [Exchange.Method]).
	Method string
	// Kind is what the method names.
	Kind TargetKind
	// Name is what the request names, as sent: the client's text, of any
	// length; "" when it names nothing.
	Name string
	// Known is the app's own name for Name ([Server.Known]): the tool's or
	// the prompt's name, the static resource's URI or the URI template the
	// URI matches; "" when the app serves nothing by Name (or Kind is
	// TargetNone, or the Server has no Known).
	Known string
	// Scoped says that the method's target may require scopes (the
	// method table's Scoped).
	Scoped bool
	// Resolved is what the app serves by Name, found once; nil when it
	// serves nothing by that name (or Kind is TargetNone).
	Resolved *Resolved
}

// RequiredScopes are the scopes the request needs beyond a valid access
// token: those of what it names when its method is scoped; nil otherwise.
func (t *Target) RequiredScopes() []string {
	if !t.Scoped || t.Resolved == nil {
		return nil
	}
	return t.Resolved.RequiredScopes
}

// Target reads what the exchange names. The first call costs one lookup
// of the name in the app's catalog ([Server.Known]) and, for a tool or a
// prompt, the decoding of the name; the others read what it found.
func (x *Exchange) Target() Target {
	if !x.targetRead {
		x.target, x.targetRead = x.readTarget(), true
	}
	return x.target
}

// Caller is who sent the exchange's request, as the edge and the links in
// front of the endpoint verified it: the record read once from the HTTP
// request ([caller.Of]), or for a message of a legacy SSE stream the
// record of the POST that sent it ([legacysse.Origin]). Every later step
// reads its fields, never the request's context.
func (x *Exchange) Caller() *caller.Caller {
	if x.who == nil {
		if x.origin != nil && x.origin.Caller != nil {
			x.who = x.origin.Caller
		} else {
			x.who = caller.Of(x.r)
		}
	}
	return x.who
}

// Owner is whom what the exchange leaves behind counts for: its verified
// principal, else its verified function key, else its client address
// ([caller.Caller.Owner]), worked out once.
func (x *Exchange) Owner() owner.ID {
	if x.owner == "" {
		x.owner = x.Caller().Owner()
	}
	return x.owner
}

func (x *Exchange) readTarget() Target {
	var t Target
	var spec *metadata.MethodSpec
	if x.method != nil {
		spec = x.method.MethodSpec
	} else if s := metadata.LookupMethod(x.msg.Method); s != nil && s.Message == metadata.MessageClientNotification {
		spec = s
	}
	if spec == nil {
		return t
	}
	t.Method, t.Kind, t.Scoped = spec.Name, spec.Target, spec.Scoped
	switch t.Kind {
	case TargetTool, TargetPrompt:
		t.Name, _ = stringValue(x.msg.Name)
	case TargetResource:
		t.Name = paramString(x.msg.Params, "uri")
	}
	if t.Name != "" && t.Kind != TargetNone {
		if t.Resolved = x.h.srv.resolve(t.Kind, t.Name); t.Resolved != nil {
			t.Known = t.Resolved.Known
		}
	}
	return t
}

// ID is the JSON-RPC id as text: a string id without its quotes, a number
// as written; "" for a notification, and for a message refused for its id
// (one that cannot be echoed is never read).
func (x *Exchange) ID() string {
	id := x.id
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
	if len(x.msg.Meta) == 0 {
		return ""
	}
	return paramString(x.msg.Meta, key)
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
