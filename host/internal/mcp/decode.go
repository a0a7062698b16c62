package mcp

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// The request path reads JSON with a small walker instead of reflection:
// the body is validated once with json.Valid, then the walker only finds the
// spans of values, which is safe because the input is known to be valid.

// message is one decoded JSON-RPC message. Its slices alias the request body.
type message struct {
	jsonrpcOK bool
	id        []byte // nil when absent
	method    string // "" when absent or null
	params    []byte // nil when absent
	hasResult bool
	hasError  bool
}

// decodeMessage parses body into msg. A non-zero code is the JSON-RPC
// error to answer with.
func decodeMessage(body []byte, msg *message) (int, string) {
	if !json.Valid(body) {
		return CodeParseError, "Parse error"
	}
	switch firstByte(body) {
	case '{':
	case '[':
		return CodeInvalidRequest, "Invalid Request: batches are not supported"
	default:
		return CodeInvalidRequest, "Invalid Request: the message must be a JSON object"
	}
	var methodErr bool
	it := members(body)
	for key, val, ok := it.next(); ok; key, val, ok = it.next() {
		switch {
		case keyIs(key, "jsonrpc"):
			s, isString := stringValue(val)
			msg.jsonrpcOK = isString && s == "2.0"
		case keyIs(key, "id"):
			msg.id = val
		case keyIs(key, "method"):
			msg.method, methodErr = "", false
			switch val[0] {
			case '"':
				msg.method = methodString(val)
			case 'n':
			default:
				methodErr = true
			}
		case keyIs(key, "params"):
			msg.params = val
		case keyIs(key, "result"):
			msg.hasResult = true
		case keyIs(key, "error"):
			msg.hasError = true
		}
	}
	if !msg.jsonrpcOK {
		return CodeInvalidRequest, `Invalid Request: jsonrpc must be "2.0"`
	}
	if methodErr {
		return CodeInvalidRequest, "Invalid Request: method must be a string"
	}
	return 0, ""
}

// methodString decodes a method name without allocating for served ones.
func methodString(raw []byte) string {
	switch string(raw) {
	case `"tools/call"`:
		return methodToolsCall
	case `"tools/list"`:
		return methodToolsList
	case `"initialize"`:
		return methodInitialize
	case `"ping"`:
		return methodPing
	}
	s, _ := stringValue(raw)
	return s
}

// Problems with tools/call params, answered with -32602.
const (
	problemParamsNotObject = "Invalid params: params must be an object."
	problemNameNotString   = "Invalid params: 'name' must be a string."
	problemArgsNotObject   = "Invalid params: 'arguments' must be an object."
)

// decodeCallParams reads tools/call params (a valid JSON value or nil). A
// non-empty problem is the -32602 message. The result does not alias
// params: argument values share one copy.
func decodeCallParams(params []byte) (name string, args map[string]json.RawMessage, problem string) {
	if len(params) == 0 || params[0] == 'n' {
		return "", nil, ""
	}
	if params[0] != '{' {
		return "", nil, problemParamsNotObject
	}
	// Duplicate keys: the last one wins, as in encoding/json.
	var argsRaw []byte
	var nameBad, argsBad bool
	it := members(params)
	for key, val, ok := it.next(); ok; key, val, ok = it.next() {
		switch {
		case keyIs(key, "name"):
			name, nameBad = "", false
			switch val[0] {
			case '"':
				name, _ = stringValue(val)
			case 'n':
			default:
				nameBad = true
			}
		case keyIs(key, "arguments"):
			argsRaw, argsBad = nil, false
			switch val[0] {
			case '{':
				argsRaw = val
			case 'n':
			default:
				argsBad = true
			}
		}
	}
	switch {
	case nameBad:
		return "", nil, problemNameNotString
	case argsBad:
		return "", nil, problemArgsNotObject
	}
	if argsRaw == nil {
		return name, nil, ""
	}
	own := bytes.Clone(argsRaw)
	args = make(map[string]json.RawMessage, countMembers(own))
	it = members(own)
	for key, val, ok := it.next(); ok; key, val, ok = it.next() {
		k, _ := stringValue(key)
		args[k] = json.RawMessage(val[:len(val):len(val)])
	}
	return name, args, ""
}

// memberIter walks the members of a valid JSON object.
type memberIter struct {
	b []byte
	i int
}

func members(obj []byte) memberIter {
	i := skipSpace(obj, 0)
	return memberIter{b: obj, i: i + 1} // past '{'
}

// next returns the raw key (with quotes) and the raw value of the next member.
func (it *memberIter) next() (key, val []byte, ok bool) {
	b := it.b
	i := skipSpace(b, it.i)
	if i < len(b) && b[i] == ',' {
		i = skipSpace(b, i+1)
	}
	if i >= len(b) || b[i] != '"' {
		it.i = len(b)
		return nil, nil, false
	}
	end := stringEnd(b, i)
	key = b[i:end]
	i = skipSpace(b, end)
	i = skipSpace(b, i+1) // past ':'
	end = valueEnd(b, i)
	val = b[i:end]
	it.i = end
	return key, val, true
}

func countMembers(obj []byte) int {
	n := 0
	it := members(obj)
	for _, _, ok := it.next(); ok; _, _, ok = it.next() {
		n++
	}
	return n
}

func skipSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\r', '\n':
			i++
		default:
			return i
		}
	}
	return i
}

// stringEnd returns the index after the string starting at b[i] == '"'.
func stringEnd(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(b)
}

// valueEnd returns the index after the valid JSON value starting at b[i].
func valueEnd(b []byte, i int) int {
	if i >= len(b) {
		return len(b)
	}
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				i = stringEnd(b, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
		return len(b)
	}
	for i < len(b) {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\r', '\n':
			return i
		}
		i++
	}
	return i
}

// keyIs compares a raw key with a plain ASCII name, exactly (escaped keys
// are decoded first).
func keyIs(raw []byte, name string) bool {
	if len(raw) == len(name)+2 && string(raw[1:len(raw)-1]) == name {
		return true
	}
	if bytes.IndexByte(raw, '\\') < 0 {
		return false
	}
	s, _ := stringValue(raw)
	return s == name
}

// stringValue decodes a raw JSON string the way encoding/json does; ok is
// false when raw is not a string.
func stringValue(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	inner := raw[1 : len(raw)-1]
	if bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		return string(inner), true
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false
	}
	return s, true
}
