package wire

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/funcmcp/funcmcp/host/internal/jsonrpc"
	"github.com/funcmcp/funcmcp/internal/jsonx"
	"github.com/funcmcp/funcmcp/metadata"
)

// Every path that routes, limits, deduplicates or handles a JSON-RPC message
// reads it with decodeMessage: the Streamable HTTP endpoint, each element of
// a batch, the legacy SSE router (before it queues a message, runs a
// cancellation at once or drops a repeated id) and the messages another
// instance forwards. It reads the text in one pass of the module's JSON
// scanner (jsonx.Scanner), which checks the grammar as it goes, and it reads
// Member names exactly. So that no reader can see another message in the
// same bytes, a message whose envelope, params or params._meta holds two
// Members whose names are equal or differ only in case ("id" and "ID",
// "method" and "METHOD") is refused: -32600 for the envelope, -32602 for
// params and _meta.

// Message is one decoded JSON-RPC message. Its slices alias the request body.
type Message struct {
	JSONRPCOK bool
	ID        []byte // nil when absent
	Method    string // "" when absent or null
	Params    []byte // nil when absent
	HasResult bool
	HasError  bool
	// Result and ErrorBody are the raw members of a response.
	Result, ErrorBody []byte

	// The members of params the handler reads, when params is an object;
	// nil when absent.
	Name, Arguments, Meta []byte
	// ParamsProblem is the -32602 message for params or params._meta
	// holding a member twice; "" when there is none.
	ParamsProblem string
}

// DecodeMessage parses body into msg. A non-zero code is the JSON-RPC
// error to answer with, and then the message has no id to echo.
func DecodeMessage(body []byte, msg *Message) (int, string) {
	s := jsonx.NewScanner(body)
	s.Space()
	switch s.Peek() {
	case '{':
	case '[':
		if !jsonx.Valid(body) {
			return jsonrpc.CodeParseError, "Parse error"
		}
		return jsonrpc.CodeInvalidRequest, "Invalid Request: batches are not supported"
	default:
		if !jsonx.Valid(body) {
			return jsonrpc.CodeParseError, "Parse error"
		}
		return jsonrpc.CodeInvalidRequest, "Invalid Request: the message must be a JSON object"
	}
	var names nameSet
	var problem string
	var methodErr bool
	_, ok := s.Object(func(key []byte, escaped bool) bool {
		name, ok := memberName(key, escaped)
		if !ok {
			return false
		}
		if p := names.add(name); p != "" && problem == "" {
			problem = "Invalid Request: " + p
		}
		switch string(name) {
		case "jsonrpc":
			msg.JSONRPCOK = false
			if s.Peek() != '"' {
				return s.Skip()
			}
			content, escaped, ok := s.String()
			if v, decoded := memberName(content, escaped); ok && decoded {
				msg.JSONRPCOK = string(v) == "2.0"
			}
			return ok
		case "id":
			msg.ID, ok = s.Value()
			return ok
		case "method":
			msg.Method, methodErr = "", false
			switch s.Peek() {
			case '"':
				start := s.Pos()
				if _, _, ok := s.String(); !ok {
					return false
				}
				msg.Method = methodString(body[start:s.Pos()])
				return true
			case 'n':
				return s.Literal("null")
			}
			methodErr = true
			return s.Skip()
		case "params":
			start := s.Pos()
			if s.Peek() == '{' {
				ok = readParams(&s, msg)
			} else {
				ok = s.Skip()
			}
			msg.Params = body[start:s.Pos()]
			return ok
		case "result", "error":
			start := s.Pos()
			if !s.Skip() {
				return false
			}
			if string(name) == "result" {
				msg.HasResult, msg.Result = true, body[start:s.Pos()]
			} else {
				msg.HasError, msg.ErrorBody = true, body[start:s.Pos()]
			}
			return true
		}
		return s.Skip()
	})
	if !ok || !s.End() {
		*msg = Message{}
		return jsonrpc.CodeParseError, "Parse error"
	}
	switch {
	case problem != "":
		*msg = Message{}
		return jsonrpc.CodeInvalidRequest, problem
	case !msg.JSONRPCOK:
		return jsonrpc.CodeInvalidRequest, `Invalid Request: jsonrpc must be "2.0"`
	case methodErr:
		return jsonrpc.CodeInvalidRequest, "Invalid Request: method must be a string"
	}
	return 0, ""
}

// readParams reads a params object, keeping the members the handler reads
// and checking that no member (of params or of its _meta) is there twice.
func readParams(s *jsonx.Scanner, msg *Message) bool {
	var names nameSet
	_, ok := s.Object(func(key []byte, escaped bool) bool {
		name, ok := memberName(key, escaped)
		if !ok {
			return false
		}
		if p := names.add(name); p != "" && msg.ParamsProblem == "" {
			msg.ParamsProblem = "Invalid params: " + p
		}
		var dst *[]byte
		switch string(name) {
		case "name":
			dst = &msg.Name
		case "arguments":
			dst = &msg.Arguments
		case "_meta":
			start := s.Pos()
			if s.Peek() == '{' {
				var metaNames nameSet
				_, ok := s.Object(func(key []byte, escaped bool) bool {
					name, ok := memberName(key, escaped)
					if !ok {
						return false
					}
					if p := metaNames.add(name); p != "" && msg.ParamsProblem == "" {
						msg.ParamsProblem = "Invalid params: _meta: " + p
					}
					return s.Skip()
				})
				msg.Meta = s.Data()[start:s.Pos()]
				return ok
			}
			dst = &msg.Meta
		default:
			return s.Skip()
		}
		*dst, ok = s.Value()
		return ok
	})
	return ok
}

// memberName is a member's name with its escapes decoded; it aliases key
// when there are none.
func memberName(key []byte, escaped bool) ([]byte, bool) {
	if !escaped {
		return key, true
	}
	name, ok := jsonx.Unescape(key)
	return []byte(name), ok
}

// nameSet holds the member names of one object, to find a name repeated
// exactly or in another case.
type nameSet struct {
	few  [8][]byte
	n    int
	many map[string][]byte // folded → as sent, past eight names
}

// add records name and returns the problem when it repeats one already
// there, "" when it is new.
func (ns *nameSet) add(name []byte) string {
	if ns.many == nil {
		for _, seen := range ns.few[:ns.n] {
			if bytes.EqualFold(seen, name) {
				return repeated(seen, name)
			}
		}
		if ns.n < len(ns.few) {
			ns.few[ns.n] = name
			ns.n++
			return ""
		}
		ns.many = make(map[string][]byte, 2*len(ns.few))
		for _, seen := range ns.few {
			ns.many[foldKey(seen)] = seen
		}
	}
	k := foldKey(name)
	if seen, ok := ns.many[k]; ok {
		return repeated(seen, name)
	}
	ns.many[k] = name
	return ""
}

// foldKey maps names that strings.EqualFold finds equal to one key: each
// rune becomes the least rune of its case-folding orbit.
func foldKey(s []byte) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range string(s) {
		least := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			least = min(least, f)
		}
		b.WriteRune(least)
	}
	return b.String()
}

func repeated(seen, name []byte) string {
	if bytes.Equal(seen, name) {
		return "the member " + jsonx.QuoteSafe(string(name)) + " appears twice."
	}
	return "the members " + jsonx.QuoteSafe(string(seen)) + " and " + jsonx.QuoteSafe(string(name)) + " differ only in case."
}

// methodString decodes a method name, without allocating for the methods
// of the method table.
func methodString(raw []byte) string {
	if len(raw) >= 2 && raw[0] == '"' && bytes.IndexByte(raw, '\\') < 0 {
		if m := metadata.LookupMethod(string(raw[1 : len(raw)-1])); m != nil {
			return m.Name
		}
	}
	s, _ := StringValue(raw)
	return s
}

// MaxIDBytes bounds the JSON text of a request's id (a string with its
// quotes and escapes, a number as written), and of a progress token: a
// request with a longer id is refused with -32600 and id null before any
// work, so that no id a client chooses is kept, echoed, logged or put in a
// span beyond it. Ids of 128 bytes leave room for any UUID, ULID or
// counter a client makes.
const MaxIDBytes = 128

// IDTooLong is the -32600 message of a request whose id is over
// [MaxIDBytes].
var IDTooLong = "Invalid Request: the id is longer than " + strconv.Itoa(MaxIDBytes) + " bytes"

// ValidID returns id when it is a JSON-RPC id that can be echoed: at most
// [MaxIDBytes] of JSON text, and a string that is valid UTF-8 and whose
// escapes are valid UTF-16 (no lone surrogate, such as "\ud800"), or a
// number that is finite as a 64-bit float (not 1e999); else nil.
func ValidID(id json.RawMessage) json.RawMessage {
	id = bytes.TrimSpace(id)
	if len(id) > MaxIDBytes {
		return nil
	}
	switch c := FirstByte(id); {
	case c == '"':
		if len(id) < 2 || !utf8.Valid(id) || !validEscapes(id[1:len(id)-1]) {
			return nil
		}
		return id
	case c == '-', c >= '0' && c <= '9':
		f, err := strconv.ParseFloat(string(id), 64)
		if err != nil || math.IsInf(f, 0) {
			return nil
		}
		return id
	}
	return nil
}

// validEscapes reports whether the \u escapes of a JSON string's text pair
// their surrogates.
func validEscapes(text []byte) bool {
	for i := 0; i < len(text); i++ {
		if text[i] != '\\' {
			continue
		}
		if i+1 >= len(text) {
			return false
		}
		if text[i+1] != 'u' {
			i++
			continue
		}
		r, ok := hex4(text, i+2)
		if !ok {
			return false
		}
		i += 5
		switch {
		case r >= 0xDC00 && r <= 0xDFFF:
			return false // a low surrogate first
		case r >= 0xD800 && r <= 0xDBFF:
			if i+6 >= len(text) || text[i+1] != '\\' || text[i+2] != 'u' {
				return false
			}
			lo, ok := hex4(text, i+3)
			if !ok || lo < 0xDC00 || lo > 0xDFFF {
				return false
			}
			i += 6
		}
	}
	return true
}

func hex4(b []byte, at int) (rune, bool) {
	if at+4 > len(b) {
		return 0, false
	}
	v, err := strconv.ParseUint(string(b[at:at+4]), 16, 16)
	return rune(v), err == nil
}

// Problems with tools/call params, answered with -32602.
const (
	ProblemParamsNotObject = "Invalid params: params must be an object."
	ProblemNameNotString   = "Invalid params: 'name' must be a string."
	ProblemArgsNotObject   = "Invalid params: 'arguments' must be an object."
)

// DecodeCallParams reads the tools/call params of a decoded message. A
// non-empty problem is the -32602 message. The result does not alias the
// body: argument values share one copy, the raw arguments object.
func DecodeCallParams(msg *Message) (name string, args map[string]json.RawMessage, raw json.RawMessage, problem string) {
	params := msg.Params
	if len(params) == 0 || params[0] == 'n' {
		return "", nil, nil, ""
	}
	if params[0] != '{' {
		return "", nil, nil, ProblemParamsNotObject
	}
	if msg.ParamsProblem != "" {
		return "", nil, nil, msg.ParamsProblem
	}
	if len(msg.Name) > 0 && msg.Name[0] != 'n' {
		var ok bool
		if name, ok = StringValue(msg.Name); !ok {
			return "", nil, nil, ProblemNameNotString
		}
	}
	argsRaw := msg.Arguments
	switch {
	case len(argsRaw) == 0 || argsRaw[0] == 'n':
		return name, nil, nil, ""
	case argsRaw[0] != '{':
		return "", nil, nil, ProblemArgsNotObject
	}
	own := bytes.Clone(argsRaw)
	args = make(map[string]json.RawMessage, 8)
	it := Members(own)
	for key, val, ok := it.Next(); ok; key, val, ok = it.Next() {
		k, _ := StringValue(key)
		args[k] = json.RawMessage(val[:len(val):len(val)]) // a repeated name: the last one wins, as in encoding/json
	}
	return name, args, own, ""
}

// MemberIter walks the members of a JSON object whose text was checked
// already (a part of a decoded message), with the module's scanner.
type MemberIter struct {
	s    jsonx.Scanner
	done bool
}

func Members(obj []byte) MemberIter {
	it := MemberIter{s: jsonx.NewScanner(obj)}
	it.s.Space()
	if it.s.Peek() != '{' {
		it.done = true
		return it
	}
	it.s.Seek(it.s.Pos() + 1) // past '{'
	return it
}

// Next returns the raw key (with quotes) and the raw value of the next member.
func (it *MemberIter) Next() (key, val []byte, ok bool) {
	if it.done {
		return nil, nil, false
	}
	s := &it.s
	s.Space()
	if s.Peek() == ',' {
		s.Seek(s.Pos() + 1)
		s.Space()
	}
	start := s.Pos()
	if _, _, ok := s.String(); !ok {
		it.done = true
		return nil, nil, false
	}
	key = s.Data()[start:s.Pos()]
	s.Space()
	if s.Peek() != ':' {
		it.done = true
		return nil, nil, false
	}
	s.Seek(s.Pos() + 1)
	s.Space()
	if val, ok = s.Value(); !ok {
		it.done = true
		return nil, nil, false
	}
	return key, val, true
}

// Member returns the value of the member key of a checked JSON object
// (matched exactly), nil when absent or when obj is not an object.
func Member(obj []byte, key string) []byte {
	var v []byte
	it := Members(obj)
	for k, val, ok := it.Next(); ok; k, val, ok = it.Next() {
		if KeyIs(k, key) {
			v = val
		}
	}
	return v
}

// KeyIs compares a raw key with a plain ASCII name, exactly (escaped keys
// are decoded first).
func KeyIs(raw []byte, name string) bool {
	if len(raw) == len(name)+2 && string(raw[1:len(raw)-1]) == name {
		return true
	}
	if bytes.IndexByte(raw, '\\') < 0 {
		return false
	}
	s, _ := StringValue(raw)
	return s == name
}

// StringValue decodes a raw JSON string the way encoding/json does; ok is
// false when raw is not a string.
func StringValue(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	inner := raw[1 : len(raw)-1]
	if bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		return string(inner), true
	}
	return jsonx.Unescape(inner)
}

// FirstByte is the first byte of b that is not JSON white space, 0 when
// there is none.
func FirstByte(b []byte) byte {
	for _, c := range b {
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		}
		return c
	}
	return 0
}
