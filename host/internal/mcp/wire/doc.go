// Package wire holds what every part of the MCP front reads and writes
// with: the one decoder of a JSON-RPC message ([DecodeMessage], the
// [Message] it fills, the readers of its members and of tools/call params,
// the ids that can be echoed, [ValidID]), the Mcp-Param-<Name> headers a
// tool declares ([ParamHeadersOf], [CheckParamHeaders]), the one SSE framer (an event is "event: <name>", one "data:" line
// of JSON and an empty line; a keep-alive is a comment), the [SSEWriter] of
// a stream shared by its loop, its calls and its keep-alive timer, the
// ResponseWriter of a message run in-process ([Recorder]), the pool of
// buffers replies are built in, and the canonical digest of a call's
// arguments ([ArgumentsDigest]) that binds a request state to its call. It
// owns no state but that pool and knows nothing of MCP methods.
package wire
