package mcp

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/funcmcp/funcmcp/host/internal/mcp/wire"
)

// The strict reference reading below is the one wire/message_test.go
// checks wire.DecodeMessage against; FuzzRouterAndHandlerAgree holds the
// legacy router and the handler to it.

// The decoder must read every message as a strict reading with
// encoding/json does (below: exact names, a name repeated in any case
// refused).
var decodeSeeds = []string{
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`,
	` { "jsonrpc" : "2.0" , "id" : "a\"b" , "method" : "tools/call" , "params" : { "arguments" : { "a" : [ 1 , { "b" : "}" } ] , "c" : null } , "name" : "x" } } `,
	`{"jsonrpc":"2.0","id":-1.5e3,"method":"tools\/list"}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"n\u00e9","arguments":{"k\u00e9y":"v","k2":{"x":"\\"}},"_meta":{"name":"nope"}}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","name":"b","arguments":{"x":1,"x":2}}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"x":[]}}`,
	`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"bad \xff utf8","arguments":{}}}`,
	`{"jsonrpc":"1.0","id":1,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":1,"method":7}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":"s"}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":true}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":[1,2]}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","METHOD":"notifications/cancelled","params":{"requestId":1}}`,
	`{"jsonrpc":"2.0","id":10,"ID":"x","method":"ping"}`,
	`{"jsonrpc":"2.0","id":1,"method":"ping","\u0069d":2}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","Name":"b"}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"progressToken":1,"progresstoken":2}}}`,
	`{"jsonrpc":"2.0","id":"\ud800","method":"ping"}`, `{"jsonrpc":"2.0","id":1e999,"method":"ping"}`,
	`{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"A":10}`,
	`{}`, `[]`, `1`, `"s"`, `null`, `{"a":`, ``,
}

// strictMessage is a message read with encoding/json, names compared
// exactly, as decodeMessage should read it.
type strictMessage struct {
	code                          int
	id, params                    []byte
	method                        string
	name, arguments, meta         []byte
	paramsProblem                 bool
	hasID, hasParams, hasName     bool
	hasArguments, methodIsNotText bool
}

// readStrict reads the members of a JSON object in order, with
// encoding/json's tokenizer; repeated reports two names equal but for case.
func readStrict(obj []byte) (names []string, values [][]byte, repeated bool) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, nil, false
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, false
		}
		name := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, nil, false
		}
		for _, seen := range names {
			if strings.EqualFold(seen, name) {
				repeated = true
			}
		}
		names, values = append(names, name), append(values, raw)
	}
	return names, values, repeated
}

func strictDecode(body []byte) strictMessage {
	if !json.Valid(body) {
		return strictMessage{code: CodeParseError}
	}
	if wire.FirstByte(body) != '{' {
		return strictMessage{code: CodeInvalidRequest}
	}
	var m strictMessage
	names, values, repeated := readStrict(body)
	if repeated {
		return strictMessage{code: CodeInvalidRequest}
	}
	jsonrpcOK := false
	for i, name := range names {
		v := values[i]
		switch name {
		case "jsonrpc":
			var s string
			jsonrpcOK = json.Unmarshal(v, &s) == nil && v[0] == '"' && s == "2.0"
		case "id":
			m.id, m.hasID = v, true
		case "method":
			m.method, m.methodIsNotText = "", false
			if v[0] == '"' {
				_ = json.Unmarshal(v, &m.method)
			} else if string(v) != "null" {
				m.methodIsNotText = true
			}
		case "params":
			m.params, m.hasParams = v, true
			if v[0] != '{' {
				continue
			}
			pn, pv, prep := readStrict(v)
			m.paramsProblem = prep
			for j, n := range pn {
				switch n {
				case "name":
					m.name, m.hasName = pv[j], true
				case "arguments":
					m.arguments, m.hasArguments = pv[j], true
				case "_meta":
					m.meta = pv[j]
					if pv[j][0] == '{' {
						if _, _, mrep := readStrict(pv[j]); mrep {
							m.paramsProblem = true
						}
					}
				}
			}
		}
	}
	switch {
	case !jsonrpcOK:
		m.code = CodeInvalidRequest
	case m.methodIsNotText:
		m.code = CodeInvalidRequest
	}
	return m
}
