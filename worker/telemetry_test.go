package worker

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
)

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
