package mcp

import "bytes"

// The package's one SSE framer: every event on a stream (a reply, a
// notification, the legacy transport's endpoint and message events) is
//
//	event: <name>
//	data: <one line of JSON>
//	<empty line>
//
// and a keep-alive is a comment line followed by an empty line.

// eventMessage is the name of the events carrying JSON-RPC messages.
const eventMessage = "message"

// eventEnd ends an event: the line break after its data and an empty line.
const eventEnd = "\n\n"

// beginEvent writes the start of an event up to its data; the caller writes
// the data (one line) and then calls endEvent.
func beginEvent(b *bytes.Buffer, name string) {
	b.WriteString("event: ")
	b.WriteString(name)
	b.WriteString("\ndata: ")
}

// endEvent ends the event begun by beginEvent.
func endEvent(b *bytes.Buffer) { b.WriteString(eventEnd) }

// appendEvent writes a whole event.
func appendEvent(b *bytes.Buffer, name string, data []byte) {
	beginEvent(b, name)
	b.Write(data)
	endEvent(b)
}

// keepAliveComment is the comment written on an idle stream.
var keepAliveComment = []byte(": keep-alive" + eventEnd)
