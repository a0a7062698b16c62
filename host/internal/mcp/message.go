package mcp

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/funcmcp/funcmcp/host/internal/mcp/wire"
)

// Every message is read by wire.DecodeMessage (see package wire); the names
// below keep the core's spelling of what it reads with.

// message is one decoded JSON-RPC message. Its slices alias the request body.
type message = wire.Message

// MaxIDBytes bounds the JSON text of a request's id (see [wire.MaxIDBytes]).
const MaxIDBytes = wire.MaxIDBytes

// ParamHeader is an argument a tool mirrors in an Mcp-Param-<Name> header
// (see [wire.ParamHeader]).
type ParamHeader = wire.ParamHeader

// ParamHeadersOf lists the x-mcp-header arguments of an input schema.
func ParamHeadersOf(inputSchema json.RawMessage) []ParamHeader {
	return wire.ParamHeadersOf(inputSchema)
}

var idTooLong = wire.IDTooLong

func decodeMessage(body []byte, msg *message) (int, string) { return wire.DecodeMessage(body, msg) }
func validID(id json.RawMessage) json.RawMessage            { return wire.ValidID(id) }
func members(obj []byte) wire.MemberIter                    { return wire.Members(obj) }
func member(obj []byte, key string) []byte                  { return wire.Member(obj, key) }
func keyIs(raw []byte, name string) bool                    { return wire.KeyIs(raw, name) }
func stringValue(raw []byte) (string, bool)                 { return wire.StringValue(raw) }

func decodeCallParams(msg *message) (string, map[string]json.RawMessage, json.RawMessage, string) {
	return wire.DecodeCallParams(msg)
}

func checkParamHeaders(hdr http.Header, params []byte, declared []ParamHeader) string {
	return wire.CheckParamHeaders(hdr, params, declared)
}

// checkArguments bounds an arguments object as sent with
// Options.CheckArguments, before anything decodes it: the error to answer
// with, nil when it passes (or is not an object, which its reader refuses).
func (h *handler) checkArguments(raw []byte) *ProtocolError {
	if h.checkArgs == nil || len(raw) == 0 || raw[0] != '{' {
		return nil
	}
	err := h.checkArgs(raw)
	if err == nil {
		return nil
	}
	if pe, ok := errors.AsType[*ProtocolError](err); ok {
		return pe
	}
	return &ProtocolError{Code: CodeInvalidParams, Message: "Invalid params: " + err.Error()}
}
