// Package jsonrpc is the JSON-RPC 2.0 wire shared by the MCP protocol front
// (package mcp) and the HTTP guards (package guard): the [Error] type and
// codes, the one writer of response envelopes and error objects, the plain
// refusal body [Refuse] writes for transport-level refusals.
//
// Everything is written without HTML escaping, byte for byte as
// encoding/json would otherwise write it.
package jsonrpc
