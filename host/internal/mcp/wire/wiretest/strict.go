// Package wiretest holds what the tests of the MCP front's decoders share:
// a strict reference reading of a JSON-RPC message with encoding/json and
// the seeds their fuzzers start from. Only tests import it.
package wiretest

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/funcmcp/funcmcp/host/internal/jsonrpc"
)

// The decoder must read every message as a strict reading with
// encoding/json does (below: exact names, a name repeated in any case
// refused).
var DecodeSeeds = []string{
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

// StrictMessage is a message read with encoding/json, names compared
// exactly, as wire.DecodeMessage should read it.
type StrictMessage struct {
	Code                          int
	ID, Params                    []byte
	Method                        string
	Name, Arguments, Meta         []byte
	ParamsProblem                 bool
	HasID, HasParams, HasName     bool
	HasArguments, MethodIsNotText bool
}

// ReadStrict reads the members of a JSON object in order, with
// encoding/json's tokenizer; repeated reports two names equal but for case.
func ReadStrict(obj []byte) (names []string, values [][]byte, repeated bool) {
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

func StrictDecode(body []byte) StrictMessage {
	if !json.Valid(body) {
		return StrictMessage{Code: jsonrpc.CodeParseError}
	}
	if t := bytes.TrimLeft(body, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		return StrictMessage{Code: jsonrpc.CodeInvalidRequest}
	}
	var m StrictMessage
	names, values, repeated := ReadStrict(body)
	if repeated {
		return StrictMessage{Code: jsonrpc.CodeInvalidRequest}
	}
	jsonrpcOK := false
	for i, name := range names {
		v := values[i]
		switch name {
		case "jsonrpc":
			var s string
			jsonrpcOK = json.Unmarshal(v, &s) == nil && v[0] == '"' && s == "2.0"
		case "id":
			m.ID, m.HasID = v, true
		case "method":
			m.Method, m.MethodIsNotText = "", false
			if v[0] == '"' {
				_ = json.Unmarshal(v, &m.Method)
			} else if string(v) != "null" {
				m.MethodIsNotText = true
			}
		case "params":
			m.Params, m.HasParams = v, true
			if v[0] != '{' {
				continue
			}
			pn, pv, prep := ReadStrict(v)
			m.ParamsProblem = prep
			for j, n := range pn {
				switch n {
				case "name":
					m.Name, m.HasName = pv[j], true
				case "arguments":
					m.Arguments, m.HasArguments = pv[j], true
				case "_meta":
					m.Meta = pv[j]
					if pv[j][0] == '{' {
						if _, _, mrep := ReadStrict(pv[j]); mrep {
							m.ParamsProblem = true
						}
					}
				}
			}
		}
	}
	switch {
	case !jsonrpcOK:
		m.Code = jsonrpc.CodeInvalidRequest
	case m.MethodIsNotText:
		m.Code = jsonrpc.CodeInvalidRequest
	}
	return m
}
