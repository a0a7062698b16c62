package wire

import (
	"bytes"
	"net/http"
	"strings"
)

// The front's one SSE framer: every event on a stream (a reply, a
// notification, the legacy transport's endpoint and message events) is
//
//	event: <name>
//	data: <one line of JSON>
//	<empty line>
//
// and a keep-alive is a comment line followed by an empty line.

// EventMessage is the name of the events carrying JSON-RPC messages.
const EventMessage = "message"

// EventEnd ends an event: the line break after its data and an empty line.
const EventEnd = "\n\n"

// BeginEvent writes the start of an event up to its data; the caller writes
// the data (one line) and then calls EndEvent.
func BeginEvent(b *bytes.Buffer, name string) {
	b.WriteString("event: ")
	b.WriteString(name)
	b.WriteString("\ndata: ")
}

// EndEvent ends the event begun by BeginEvent.
func EndEvent(b *bytes.Buffer) { b.WriteString(EventEnd) }

// AppendEvent writes a whole event.
func AppendEvent(b *bytes.Buffer, name string, data []byte) {
	BeginEvent(b, name)
	b.Write(data)
	EndEvent(b)
}

// KeepAliveComment is the comment written on an idle stream.
var KeepAliveComment = []byte(": keep-alive" + EventEnd)

// Shared header values; net/http never writes into them.
var (
	jsonContentType = []string{"application/json"}
	sseContentType  = []string{"text/event-stream"}
	noCache         = []string{"no-cache"}
	noBuffering     = []string{"no"}
)

// SetFraming sets the header of a response framed as SSE events (sse) or
// as one JSON body.
func SetFraming(hdr http.Header, sse bool) {
	if sse {
		hdr["Content-Type"] = sseContentType
		hdr["Cache-Control"] = noCache
		hdr["X-Accel-Buffering"] = noBuffering
		return
	}
	hdr["Content-Type"] = jsonContentType
}

// AcceptedFraming reads Accept: sse when text/event-stream is listed, ok
// when it or application/json (or a wildcard covering it) is.
func AcceptedFraming(vals []string) (sse, ok bool) {
	var plain bool
	for _, v := range vals {
		for v != "" {
			var part string
			part, v, _ = strings.Cut(v, ",")
			mt, _, _ := strings.Cut(part, ";")
			mt = strings.TrimSpace(mt)
			switch {
			case strings.EqualFold(mt, "text/event-stream"):
				sse = true
			case strings.EqualFold(mt, "application/json"), mt == "*/*", strings.EqualFold(mt, "application/*"):
				plain = true
			}
		}
	}
	return sse, sse || plain
}
