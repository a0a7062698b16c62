package backplane

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
)

// QueuePrefix starts the name of every instance queue.
const QueuePrefix = "mcp-backplane-"

// Message is one client message on its way to the instance holding the
// client's stream.
type Message struct {
	// ID names the message for duplicate suppression; the sender sets it.
	ID string `json:"Id,omitempty"`
	// ClientID names the client (the SSE stream) on the receiving instance.
	ClientID string `json:"ClientId"`
	// Body is the JSON-RPC message.
	Body json.RawMessage `json:"Message"`
}

// Deliver receives the messages addressed to this instance. It must not
// block for long: the receive loop waits for it.
type Deliver func(ctx context.Context, m Message)

// Backplane moves messages between host instances. Implementations are safe
// for concurrent use.
type Backplane interface {
	// Start makes this instance reachable and delivers its messages to
	// deliver until Stop. It fails when the instance cannot be reached.
	Start(ctx context.Context, deliver Deliver) error
	// Send puts m on the queue of the instance named; it returns once the
	// message is stored. An instance that does not exist gives an error
	// matching ErrUnknownInstance.
	Send(ctx context.Context, instanceID string, m Message) error
	// Stop ends delivery and removes this instance's queue.
	Stop(ctx context.Context) error
}

// ErrUnknownInstance is returned by Send for an instance that has no queue.
var ErrUnknownInstance = errors.New("unknown host instance")

var instanceIDPattern = regexp.MustCompile(`^[a-z0-9]{1,49}$`)

// ValidInstanceID reports whether id can name an instance queue: lower-case
// letters and digits, so that QueuePrefix+id is a valid queue name.
func ValidInstanceID(id string) bool { return instanceIDPattern.MatchString(id) }
