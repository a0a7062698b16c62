package invoke

import (
	"context"
	"net/http"
)

// Trace wraps one invocation of the worker when telemetry is on
// ([Options.Trace]): it starts the invocation's span under ctx and returns
// the context that carries it, the trace headers to send with the POST
// (W3C traceparent, tracestate, baggage) and the func that ends the span
// with the call's error (nil when the worker answered).
type Trace func(ctx context.Context, function string) (context.Context, http.Header, func(error))

type traceHeadersKey struct{}

// traced runs call inside the client's Trace; without one it is call.
func (inv *Client) traced(ctx context.Context, function string, call func(context.Context) (*Reply, error)) (*Reply, error) {
	if inv.trace == nil {
		return call(ctx)
	}
	ctx, h, end := inv.trace(ctx, function)
	if len(h) > 0 {
		ctx = context.WithValue(ctx, traceHeadersKey{}, h)
	}
	reply, err := call(ctx)
	end(err)
	return reply, err
}

// addTraceHeaders copies the trace headers of the invocation's context,
// when it has any, to h.
func addTraceHeaders(ctx context.Context, h http.Header) {
	if th, ok := ctx.Value(traceHeadersKey{}).(http.Header); ok {
		for k, v := range th {
			h[k] = v
		}
	}
}
