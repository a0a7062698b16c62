package backplane

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"time"
)

// QueuePrefix starts the name of every instance queue (and of the blob
// container holding its large messages).
const QueuePrefix = "mcp-backplane-"

// Message is one client message on its way to the instance holding the
// client's stream.
type Message struct {
	// ID names the message for duplicate suppression and for its outcome;
	// the sender sets it, unique per message.
	ID string `json:"Id,omitempty"`
	// ClientID names the client (the SSE stream) on the receiving instance.
	ClientID string `json:"ClientId"`
	// Body is the JSON-RPC message.
	Body json.RawMessage `json:"Message"`
	// Traceparent is the W3C trace context of the send, when the sender
	// traces it (telemetry on); "" otherwise.
	Traceparent string `json:"Traceparent,omitempty"`
	// Sent is when the sender sent it, for the delivery lag; zero when the
	// sender did not say.
	Sent time.Time `json:"-"`
}

// Outcome is what became of a message at the instance holding its stream.
type Outcome int

// Outcomes of a delivery.
const (
	// Taken: the stream has the message, in its inbox or held for it by
	// its instance, in order, until the inbox has room. It will be answered
	// on the stream, or the stream ends.
	Taken Outcome = iota + 1
	// Full: the stream takes no more for now; the message was dropped and
	// may be sent again.
	Full
	// Gone: the stream is not on that instance: the message can never be
	// delivered.
	Gone
)

func (o Outcome) String() string {
	switch o {
	case Taken:
		return "taken"
	case Full:
		return "full"
	case Gone:
		return "gone"
	}
	return fmt.Sprintf("outcome(%d)", int(o))
}

func parseOutcome(s string) (Outcome, bool) {
	switch s {
	case "taken":
		return Taken, true
	case "full":
		return Full, true
	case "gone":
		return Gone, true
	}
	return 0, false
}

// Deliver hands a received message to its stream and reports what became
// of it: Taken, Full (offered again later, in order) or Gone. It must not
// block: the receive loop waits for it.
type Deliver func(ctx context.Context, m Message) Outcome

// Backplane moves messages between host instances. Implementations are safe
// for concurrent use.
type Backplane interface {
	// Start makes this instance reachable and hands its messages to deliver
	// until Stop. It fails when the instance cannot be reached.
	Start(ctx context.Context, deliver Deliver) error
	// Send hands m to the instance named and returns once that instance
	// decided its outcome. An instance that does not exist, or whose
	// heartbeat is late by DeadBeats heartbeats, gives an error matching
	// ErrUnknownInstance at once; one late by StaleBeats, or whose
	// records storage lost, an error matching ErrUnsure; no
	// decision within the outcome timeout, which covers the storage calls
	// too, gives ErrNoOutcome.
	Send(ctx context.Context, instanceID string, m Message) (Outcome, error)
	// Stop ends delivery and removes this instance from the backplane.
	Stop(ctx context.Context) error
}

// ErrUnknownInstance is returned by Send for an instance that does not
// exist or is dead.
var ErrUnknownInstance = errors.New("unknown host instance")

// ErrNoOutcome is returned by Send when the receiving instance did not say
// in time what became of the message. It may still be delivered.
var ErrNoOutcome = errors.New("the instance did not confirm the message in time")

// ErrUnsure is returned by Send when this instance cannot tell whether
// the other one is alive: its heartbeat is late but not yet given up (it
// may be paused), or storage lost its records (it was restarted empty)
// and the instances are making them again. The message was not sent; it
// may be sent again.
var ErrUnsure = errors.New("cannot tell whether the instance is alive")

// InstanceGoneError is returned by Send for an instance whose heartbeat is
// stale: it was killed or lost its storage. It matches ErrUnknownInstance.
type InstanceGoneError struct {
	Instance string
	LastSeen time.Time // zero when the heartbeat itself is gone
}

func (e *InstanceGoneError) Error() string {
	if e.LastSeen.IsZero() {
		return fmt.Sprintf("instance %q is gone: it has no heartbeat", e.Instance)
	}
	return fmt.Sprintf("instance %q is gone: no heartbeat since %s", e.Instance, e.LastSeen.UTC().Format(time.RFC3339))
}

// Is makes an InstanceGoneError match ErrUnknownInstance.
func (e *InstanceGoneError) Is(target error) bool { return target == ErrUnknownInstance }

// UnsureError is returned by Send when this instance cannot tell whether
// the other one lives: its heartbeat is late by more than StaleBeats
// heartbeats but not yet DeadBeats (LastSeen says when it beat last), or
// storage lost the records of the instances (it was restarted empty) and
// they are being made again. It matches ErrUnsure.
type UnsureError struct {
	Instance string
	LastSeen time.Time // zero when storage lost the records
}

func (e *UnsureError) Error() string {
	if e.LastSeen.IsZero() {
		return fmt.Sprintf("cannot tell whether instance %q is alive: storage lost the records of the instances; they are being made again", e.Instance)
	}
	return fmt.Sprintf("cannot tell whether instance %q is alive: its heartbeat is late (the last at %s)", e.Instance, e.LastSeen.UTC().Format(time.RFC3339))
}

// Is makes an UnsureError match ErrUnsure.
func (e *UnsureError) Is(target error) bool { return target == ErrUnsure }

// verdict judges a peer by its last heartbeat: nil while fresh, an
// UnsureError once late by StaleBeats heartbeats, an InstanceGoneError by
// DeadBeats.
func verdict(id string, beat time.Time, every time.Duration) error {
	switch age := time.Since(beat); {
	case age > DeadBeats*every:
		return &InstanceGoneError{Instance: id, LastSeen: beat}
	case age > StaleBeats*every:
		return &UnsureError{Instance: id, LastSeen: beat}
	}
	return nil
}

// lossClock remembers when this instance found that storage had lost its
// own records (its queue, or its heartbeat key): for StaleBeats heartbeats
// after that, a peer whose records are missing is not called gone, since
// every live instance needs up to that long to make its records again.
type lossClock struct{ at atomic.Int64 }

func (l *lossClock) mark() { l.at.Store(time.Now().UnixNano()) }

func (l *lossClock) recent(every time.Duration) bool {
	at := l.at.Load()
	return at != 0 && time.Since(time.Unix(0, at)) < StaleBeats*every
}

// sendError gives the error of a Send that ran under ctx, the outcome
// deadline made from parent: an error past the deadline (a storage call
// cut short, or no outcome) is ErrNoOutcome.
func sendError(parent, ctx context.Context, to string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrUnknownInstance), errors.Is(err, ErrUnsure), errors.Is(err, ErrNoOutcome):
	case parent.Err() != nil:
		return parent.Err()
	case ctx.Err() != nil:
		return fmt.Errorf("sending to instance %q: %w (%w)", to, ErrNoOutcome, err)
	}
	return fmt.Errorf("sending to instance %q: %w", to, err)
}

// ValidMessageID reports whether id can name a message: 1-64 letters,
// digits, '-' and '_' (^[A-Za-z0-9_-]{1,64}$, written out: compiled at init
// it cost funchost 1,300 allocations before main). It names a blob too,
// and is checked before any storage call.
func ValidMessageID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for i := 0; i < len(id); i++ {
		switch c := id[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}

// checkSend checks what Send is given before any storage call.
func checkSend(to string, m Message) error {
	if !ValidInstanceID(to) {
		return fmt.Errorf("sending to instance %q: %w", to, ErrUnknownInstance)
	}
	if !ValidMessageID(m.ID) {
		return fmt.Errorf("sending to instance %q: message id %q is not 1-64 letters, digits, '-' or '_'", to, m.ID)
	}
	return nil
}

// ValidInstanceID reports whether id can name an instance queue: 1-49
// lower-case letters and digits (^[a-z0-9]{1,49}$, written out as
// ValidMessageID is), so that QueuePrefix+id is a valid queue and container
// name.
func ValidInstanceID(id string) bool {
	if id == "" || len(id) > 49 {
		return false
	}
	for i := 0; i < len(id); i++ {
		switch c := id[i]; {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
		default:
			return false
		}
	}
	return true
}

// keepBeating calls beat every interval, and at once when now fires (nil:
// never), until ctx ends; each beat has one interval to finish. warn hears
// of the first failure in a row and every tenth after it.
func keepBeating(ctx context.Context, every time.Duration, now <-chan struct{}, beat func(context.Context) error, warn func(failures int, err error)) {
	t := time.NewTicker(every)
	defer t.Stop()
	failures := 0
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-now:
		}
		bctx, cancel := context.WithTimeout(ctx, every)
		err := beat(bctx)
		cancel()
		switch {
		case err == nil:
			failures = 0
		case ctx.Err() != nil:
			return
		default:
			failures++
			if failures == 1 || failures%10 == 0 {
				warn(failures, err)
			}
		}
	}
}
