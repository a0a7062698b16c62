package telemetry

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// Attributes of the backplane hop's spans (the messaging conventions).
const (
	attrMessagingOperation   = attribute.Key("messaging.operation.type")
	attrMessagingDestination = attribute.Key("messaging.destination.name")
	attrMessagingID          = attribute.Key("messaging.message.id")
	// AttrBackplaneOutcome is what became of a message: taken, full, gone.
	AttrBackplaneOutcome = attribute.Key("funcmcp.backplane.outcome")
	// ErrorTypeBackplaneSend: the message could not be sent (no instance,
	// no outcome in time, storage).
	ErrorTypeBackplaneSend = "backplane_send"
)

// BackplaneSend starts the PRODUCER span of a message this instance sends
// to instance to through the backplane of kind, and returns the
// traceparent to carry in the message and the time to stamp it with.
// Off, it returns ctx, "" and the zero time: nothing is carried.
func (t *Telemetry) BackplaneSend(ctx context.Context, kind, to, id string) (context.Context, string, time.Time, Ender) {
	if t == nil {
		return ctx, "", time.Time{}, Ender{}
	}
	ctx, span := t.tracer.Start(ctx, "send "+to, trace.WithSpanKind(trace.SpanKindProducer),
		trace.WithAttributes(AttrBackplane.String(kind), attrMessagingOperation.String("send"),
			attrMessagingDestination.String(to), attrMessagingID.String(id)))
	return ctx, t.Traceparent(ctx), time.Now(), Ender{span}
}

// BackplaneReceive starts the CONSUMER span of a message received from
// another instance, whose parent is the traceparent the message carried,
// and records funcmcp.backplane.delivery.lag from its send time (none when
// the sender stamped none). Off, it returns ctx and a zero Ender.
func (t *Telemetry) BackplaneReceive(ctx context.Context, kind, instance, id, traceparent string, sent time.Time) (context.Context, Ender) {
	if t == nil {
		return ctx, Ender{}
	}
	t.BackplaneLag(ctx, kind, sent)
	ctx, span := t.tracer.Start(t.FromTraceparent(ctx, traceparent), "process "+instance, trace.WithSpanKind(trace.SpanKindConsumer),
		trace.WithAttributes(AttrBackplane.String(kind), attrMessagingOperation.String("process"),
			attrMessagingDestination.String(instance), attrMessagingID.String(id)))
	return ctx, Ender{span}
}
