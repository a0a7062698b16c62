package backplane

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// envelope is what travels in a queue or list: a client message (the
// extension's {"ClientId","Message"} plus its id, its sender and, for a
// large one, the blob holding it instead of Message), or the outcome of a
// message, sent back to its sender.
type envelope struct {
	ID       string          `json:"Id,omitempty"`
	ClientID string          `json:"ClientId,omitempty"`
	Message  json.RawMessage `json:"Message,omitempty"`
	// From is the sending instance, which waits for the outcome; "" when
	// nobody waits.
	From string `json:"From,omitempty"`
	// Blob names the blob (in the receiver's container) holding the
	// message, when it is too large for a queue message.
	Blob string `json:"Blob,omitempty"`
	// Outcome, in an outcome envelope, is what became of message ID.
	Outcome string `json:"Outcome,omitempty"`
	// Traceparent and SentMs (Unix milliseconds) are Message.Traceparent
	// and Message.Sent; absent when the sender traces nothing, and ignored
	// by a receiver that does not read them.
	Traceparent string `json:"Traceparent,omitempty"`
	SentMs      int64  `json:"SentMs,omitempty"`
	// Cast marks a broadcast: Wire is what was broadcast, or Blob names
	// the blob holding it in the sender's container. ID names the
	// broadcast; nobody waits for an outcome.
	Cast bool   `json:"Cast,omitempty"`
	Wire []byte `json:"Wire,omitempty"`
	// Burst, on a broadcast, says that its sender broadcast another one
	// within HotWindow before it: more are likely to follow, and the
	// receiver polls as for client messages. A lone broadcast (a timer's
	// change, once a minute) leaves the receiver's polling as it was.
	Burst bool `json:"Burst,omitempty"`
}

// stamp copies the trace context and send time of m into e.
func (e *envelope) stamp(m *Message) {
	e.Traceparent = m.Traceparent
	if !m.Sent.IsZero() {
		e.SentMs = m.Sent.UnixMilli()
	}
}

// message is the client message e carries (its body still in a blob when
// e.Blob is set).
func (e *envelope) message() Message {
	m := Message{ID: e.ID, ClientID: e.ClientID, Body: e.Message, Traceparent: e.Traceparent}
	if e.SentMs > 0 {
		m.Sent = time.UnixMilli(e.SentMs)
	}
	return m
}

// isOutcome reports whether e carries an outcome rather than a message.
func (e *envelope) isOutcome() bool { return e.Outcome != "" }

// isBroadcast reports whether e carries a broadcast.
func (e *envelope) isBroadcast() bool { return e.Cast }

// decodeEnvelope reads a queue message: base64 of the JSON, or the JSON
// itself.
func decodeEnvelope(text string) (envelope, error) {
	data, err := base64.StdEncoding.DecodeString(strings.TrimSpace(text))
	if err != nil {
		data = []byte(text)
	}
	return decodeEnvelopeJSON(data)
}

func decodeEnvelopeJSON(data []byte) (envelope, error) {
	var e envelope
	if err := json.Unmarshal(data, &e); err != nil {
		return envelope{}, fmt.Errorf("decoding the message: %w", err)
	}
	switch {
	case e.ID != "" && !ValidMessageID(e.ID):
		return envelope{}, fmt.Errorf("decoding the message: id %q is not 1-64 letters, digits, '-' or '_'", e.ID)
	case e.Blob != "" && !ValidMessageID(e.Blob):
		return envelope{}, fmt.Errorf("decoding the message: blob name %q is not 1-64 letters, digits, '-' or '_'", e.Blob)
	case e.From != "" && !ValidInstanceID(e.From):
		return envelope{}, fmt.Errorf("decoding the message: sender %q is not an instance id", e.From)
	}
	if e.isBroadcast() {
		if e.ID == "" || e.From == "" || (len(e.Wire) == 0 && e.Blob == "") || len(e.Wire) > MaxBroadcast {
			return envelope{}, errors.New("decoding the message: a broadcast needs an id, its sender and at most MaxBroadcast bytes")
		}
		return e, nil
	}
	if e.isOutcome() {
		if _, ok := parseOutcome(e.Outcome); !ok || e.ID == "" {
			return envelope{}, fmt.Errorf("decoding the message: outcome %q of message %q", e.Outcome, e.ID)
		}
		return e, nil
	}
	if e.ClientID == "" || (e.Blob == "" && (len(e.Message) == 0 || string(e.Message) == "null")) {
		return envelope{}, errors.New("decoding the message: ClientId and Message are required")
	}
	return e, nil
}
