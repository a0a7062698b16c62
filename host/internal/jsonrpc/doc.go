// Package jsonrpc is the JSON-RPC 2.0 wire shared by the packages that
// answer or refuse in JSON-RPC: the MCP protocol front (package mcp), the
// HTTP guards (package guard), the argument bounds (package catalog) and
// the task stores (package tasks): the [Error] type and codes, the one
// writer of response envelopes and error objects ([AppendResponseStart],
// [AppendErrorMember], [AppendError]), and the plain refusal body
// [Refuse] writes for transport-level refusals.
//
// Everything is written without HTML escaping, byte for byte as
// encoding/json would otherwise write it.
package jsonrpc
