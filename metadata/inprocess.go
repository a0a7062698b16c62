package metadata

import (
	"context"
	"net/http"
)

// channelKey is the context key of an in-process call channel.
type channelKey struct{}

// WithChannel returns ctx carrying rt, the transport of the call channel
// (HeaderNotifyURL) when the host serves the invocation in the worker's
// own process: the worker sends the invocation's notifications and
// requests through rt, with no connection, instead of over the network.
// A host across the network never sets it.
func WithChannel(ctx context.Context, rt http.RoundTripper) context.Context {
	return context.WithValue(ctx, channelKey{}, rt)
}

// Channel returns the in-process call channel transport ctx carries, nil
// when none.
func Channel(ctx context.Context) http.RoundTripper {
	rt, _ := ctx.Value(channelKey{}).(http.RoundTripper)
	return rt
}

// LocalToolCall is a tool call a host hands to a worker in its own process
// without the custom-handler encoding: what the worker would decode from
// the request the host sends otherwise.
type LocalToolCall struct {
	// Function is the function called (POST /{Function}).
	Function string
	// Context is the tool invocation context, as
	// [DecodeToolInvocationContext] returns it from that request: its
	// Arguments' values are slices of its RawArguments. The worker must
	// not change what it holds.
	Context *ToolInvocationContext
	// Header is the request's header, keys in their canonical spelling:
	// the invocation id, the trace context, the call channel.
	Header http.Header
}

// LocalToolCaller runs tool calls in the host's process with no encoding
// on either side. A funcmcp worker's custom-handler handler offers one
// ([LocalTools]) when nothing wraps the handler (its telemetry does: a
// call then goes through the handler, which makes the worker's span).
type LocalToolCaller interface {
	// CallToolLocal runs call and returns what the handler's direct reply
	// would hold ([DirectReply]; the result is the caller's to keep), or,
	// for any other answer (a failure, a function that is no tool), its
	// HTTP status and JSON body.
	CallToolLocal(ctx context.Context, call *LocalToolCall) (reply *DirectReply, status int, body []byte)
}

// LocalTools returns the tool caller a handler offers, nil when it offers
// none: a handler offers one with a method LocalTools() LocalToolCaller,
// which may return nil.
func LocalTools(h http.Handler) LocalToolCaller {
	if p, ok := h.(interface{ LocalTools() LocalToolCaller }); ok {
		return p.LocalTools()
	}
	return nil
}
