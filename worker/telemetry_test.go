package worker

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeTelemetry is a Telemetry whose instrumentation records what ran.
type fakeTelemetry struct {
	off     bool
	ran     []string
	stopped bool
}

func (f *fakeTelemetry) Start(context.Context) (*Instrumentation, error) {
	if f.off {
		return nil, nil
	}
	return &Instrumentation{
		Hook: func(ctx context.Context, inv *Invocation, next func(context.Context) error) error {
			tp, _ := inv.ClientHeader("TRACEPARENT")
			f.ran = append(f.ran, "hook "+inv.Name+" "+tp)
			return next(ctx)
		},
		Handler: func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				f.ran = append(f.ran, "handler "+r.Header.Get("Traceparent"))
				next.ServeHTTP(w, r)
			})
		},
		Stop: func() { f.stopped = true },
	}, nil
}

// TestTelemetryStartedWhenServing: the app's Telemetry, once started,
// wraps the invocation handler and every handler run (outermost of the
// hooks; the client's headers readable by name), and its Stop is what
// runs when serving ends; a Telemetry that starts nothing adds nothing.
func TestTelemetryStartedWhenServing(t *testing.T) {
	f := &fakeTelemetry{}
	var order []string
	a := New(&Options{Stdout: io.Discard, Stderr: io.Discard, Telemetry: f, Hooks: []Hook{
		func(ctx context.Context, inv *Invocation, next func(context.Context) error) error {
			order = append(order, "app hook after "+f.ran[len(f.ran)-1])
			return next(ctx)
		},
	}})
	a.ConfigureMcpTool("plain").Handle(func(context.Context, *ToolContext) (*Result, error) { return TextResult("ok"), nil })
	stop, err := a.startTelemetry(context.Background())
	require.NoError(t, err)
	srv := httptest.NewServer(a.Handler())
	t.Cleanup(srv.Close)
	transport := `,"transport":{"name":"http-streamable","properties":{"headers":{"traceparent":"client-tp"}}}`
	require.Equal(t, http.StatusOK, postInvocation(t, srv.URL, "plain", `{"name":"plain","arguments":{}`+transport+`}`, map[string]string{"Traceparent": "host-tp"}))
	assert.Equal(t, []string{"handler host-tp", "hook plain client-tp"}, f.ran)
	assert.Equal(t, []string{"app hook after hook plain client-tp"}, order)
	assert.False(t, f.stopped)
	stop()
	assert.True(t, f.stopped)

	off := New(&Options{Stdout: io.Discard, Stderr: io.Discard, Telemetry: &fakeTelemetry{off: true}})
	stop, err = off.startTelemetry(context.Background())
	require.NoError(t, err)
	stop()
	assert.Empty(t, off.hooks)
	assert.Nil(t, off.wrap)
}

// stamp is a slog handler that adds stamped=yes to each record.
type stamp struct{ slog.Handler }

func (s stamp) Handle(ctx context.Context, r slog.Record) error {
	r.AddAttrs(slog.String("stamped", "yes"))
	return s.Handler.Handle(ctx, r)
}

// TestInstrumentWrapsTheAppLogger: a started Telemetry's Logger wraps the
// handler of the app's logger, the one the worker's own lines go to.
func TestInstrumentWrapsTheAppLogger(t *testing.T) {
	var buf bytes.Buffer
	a := New(&Options{Logger: slog.New(slog.NewTextHandler(&buf, nil))})
	a.instrument(&Instrumentation{Logger: func(h slog.Handler) slog.Handler { return stamp{h} }})
	a.logger.InfoContext(context.Background(), "a worker line")
	if got := buf.String(); !strings.Contains(got, "a worker line") || !strings.Contains(got, "stamped=yes") {
		t.Fatalf("the app logger's line %q went around the instrumentation's handler", got)
	}
}
