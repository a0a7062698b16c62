// Package wire holds what every transport of the MCP front writes with: the
// one SSE framer (an event is "event: <name>", one "data:" line of JSON and
// an empty line; a keep-alive is a comment), the [SSEWriter] of a stream
// shared by its loop, its calls and its keep-alive timer, and the pool of
// buffers replies are built in. It owns no state but that pool and knows
// nothing of JSON-RPC or of MCP methods.
package wire
