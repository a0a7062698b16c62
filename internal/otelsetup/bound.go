package otelsetup

import (
	"fmt"
	"reflect"
	"strings"
	"unicode/utf8"

	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
)

// The caps of the strings a client chose, or may have influenced, that go
// into a span: a span holds at most a few of them, so that no request can
// make a span (and the export batch it is in) large. A span name and a
// metric attribute never hold such a string at all: they name only what
// the app declares.
const (
	// MaxIDBytes caps an id: a JSON-RPC request id (funchost refuses a
	// longer one before any work, mcp.MaxIDBytes), an invocation id.
	MaxIDBytes = 128
	// MaxSessionIDBytes caps an Mcp-Session-Id. funchost's are sealed
	// tokens that carry the client's name and capabilities, 150 to 450
	// bytes as clients send them, and stay whole; a longer one (made up by
	// a client) is cut.
	MaxSessionIDBytes = 1024
	// MaxValueBytes caps any other string of a client's: a resource URI,
	// the client's address, a name.
	MaxValueBytes = 256
	// MaxMessageBytes caps an error's text: a span's status description
	// and its exception.message.
	MaxMessageBytes = 1024
)

// Bound returns s cut to at most max bytes, on a UTF-8 boundary, with any
// invalid UTF-8 replaced by U+FFFD: OTLP's protobuf strings must be valid
// UTF-8, and one invalid string fails the marshalling of the whole batch
// it is in (every client's spans). A valid s that fits comes back as is,
// without allocating.
func Bound(s string, max int) string {
	if len(s) > max {
		s = s[:max]
		// Back off a rune cut in two (at most three bytes of one).
		for i := len(s) - 1; i >= 0 && i >= len(s)-utf8.UTFMax; i-- {
			if utf8.RuneStart(s[i]) {
				if !utf8.FullRuneInString(s[i:]) {
					s = s[:i]
				}
				break
			}
		}
	}
	if utf8.ValidString(s) {
		return s
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) > max { // each replacement may be longer than the bytes it replaced
		return Bound(s, max)
	}
	return s
}

// RecordError marks span failed with err: an exception event (as the
// SDK's span.RecordError makes it) and the status Error, each with err's
// text cut to [MaxMessageBytes]: an error's text may repeat what a client
// sent.
func RecordError(span trace.Span, err error) {
	msg := Bound(err.Error(), MaxMessageBytes)
	span.AddEvent(semconv.ExceptionEventName, trace.WithAttributes(
		semconv.ExceptionType(errorType(err)), semconv.ExceptionMessage(msg)))
	span.SetStatus(codes.Error, msg)
}

// errorType names the type of err as the SDK's RecordError does.
func errorType(err error) string {
	t := reflect.TypeOf(err)
	if t.PkgPath() == "" && t.Name() == "" {
		return t.String()
	}
	return fmt.Sprintf("%s.%s", t.PkgPath(), t.Name())
}
