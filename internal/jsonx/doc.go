// Package jsonx holds the small JSON rules every side of funcmcp shares, each
// written once: the JSON grammar itself ([Scanner], a one-pass reader that
// checks what it reads and builds nothing), what counts as JSON null, how
// deep a JSON text nests, how a JSON pointer token is escaped and followed,
// and how a name taken from a request or an app folder is made fit to echo
// in a message.
//
// It imports only the standard library, so metadata (the wire contract) may
// use it as well as binding, worker and host.
package jsonx
