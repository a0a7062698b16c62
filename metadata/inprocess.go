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
