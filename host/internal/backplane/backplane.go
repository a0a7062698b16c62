package backplane

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
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
	// heartbeat is stale, gives an error matching ErrUnknownInstance at
	// once; no decision in time gives ErrNoOutcome.
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

var instanceIDPattern = regexp.MustCompile(`^[a-z0-9]{1,49}$`)

// ValidInstanceID reports whether id can name an instance queue: lower-case
// letters and digits, so that QueuePrefix+id is a valid queue and container
// name.
func ValidInstanceID(id string) bool { return instanceIDPattern.MatchString(id) }

// keepBeating calls beat every interval until ctx ends; warn hears of the
// first failure in a row and every tenth after it.
func keepBeating(ctx context.Context, every time.Duration, beat func(context.Context) error, warn func(failures int, err error)) {
	t := time.NewTicker(every)
	defer t.Stop()
	failures := 0
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		err := beat(ctx)
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
