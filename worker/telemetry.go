package worker

import (
	"context"
	"log/slog"
	"net/http"
)

// Telemetry instruments the served app ([Options.Telemetry]). The package
// github.com/funcmcp/funcmcp/worker/otel is the OpenTelemetry one; an app
// that sets none links no telemetry code at all.
type Telemetry interface {
	// Start is called once when the app starts serving under a host. It
	// returns what the app adds while it serves, or nil for nothing (the
	// environment asks for no telemetry).
	Start(ctx context.Context) (*Instrumentation, error)
}

// Instrumentation is what a started [Telemetry] adds to the serving app.
// A nil field adds nothing.
type Instrumentation struct {
	// Hook runs around every handler run, outermost of the app's hooks.
	Hook Hook
	// Handler wraps the app's HTTP handler of invocations, e.g. to continue
	// the trace context of the host's request headers.
	Handler func(http.Handler) http.Handler
	// Logger wraps the handler of the app's logger ([Options].Logger, the
	// worker's own log lines), e.g. to stamp each record with the trace
	// context of the context it is logged with.
	Logger func(slog.Handler) slog.Handler
	// Stop flushes what is buffered, when the app stops serving.
	Stop func()
}

// StartTelemetry starts the app's Telemetry ([Options.Telemetry]), as
// serving under a host does, and returns the func that stops it (flushing
// what is buffered); without Telemetry, or when the environment asks for
// none, both do nothing. It is for an app that a host serves in its own
// process (package serve): call it once, before [App.Handler].
func (a *App) StartTelemetry(ctx context.Context) (stop func(), err error) {
	return a.startTelemetry(ctx)
}

// startTelemetry starts the app's Telemetry, if it has one, and returns
// the func to call when serving ends.
func (a *App) startTelemetry(ctx context.Context) (func(), error) {
	if a.telemetry == nil {
		return func() {}, nil
	}
	in, err := a.telemetry.Start(ctx)
	if err != nil || in == nil {
		return func() {}, err
	}
	a.instrument(in)
	if in.Stop == nil {
		return func() {}, nil
	}
	return in.Stop, nil
}

// instrument adds a started instrumentation to the app.
func (a *App) instrument(in *Instrumentation) {
	if in.Hook != nil {
		a.hooks = append([]Hook{in.Hook}, a.hooks...)
	}
	a.wrap = in.Handler
	if in.Logger != nil {
		a.logger = slog.New(in.Logger(a.logger.Handler()))
	}
}

// ClientHeader returns a header of the MCP client's request as the host
// passed it with the invocation (its transport properties), matched
// case-insensitively; ("", false) when the host passed none.
func (inv *Invocation) ClientHeader(name string) (string, bool) {
	return inv.transport.Header(name)
}
