package wire

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/funcmcp/funcmcp/host/internal/jsonrpc"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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
		return strictMessage{code: jsonrpc.CodeParseError}
	}
	if FirstByte(body) != '{' {
		return strictMessage{code: jsonrpc.CodeInvalidRequest}
	}
	var m strictMessage
	names, values, repeated := readStrict(body)
	if repeated {
		return strictMessage{code: jsonrpc.CodeInvalidRequest}
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
		m.code = jsonrpc.CodeInvalidRequest
	case m.methodIsNotText:
		m.code = jsonrpc.CodeInvalidRequest
	}
	return m
}

func FuzzDecodeMessage(f *testing.F) {
	for _, s := range decodeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var msg Message
		code, _ := DecodeMessage(body, &msg)
		want := strictDecode(body)
		require.Equal(t, want.code, code, "%q", body)
		if code != 0 {
			return
		}
		assert.Equal(t, want.method, msg.Method)
		assert.Equal(t, string(want.id), string(msg.ID))
		assert.Equal(t, want.hasID, msg.ID != nil)
		assert.Equal(t, string(want.params), string(msg.Params))
		assert.Equal(t, want.paramsProblem, msg.ParamsProblem != "", "params problem %q", msg.ParamsProblem)
		assert.Equal(t, string(want.name), string(msg.Name))
		assert.Equal(t, string(want.arguments), string(msg.Arguments))
		assert.Equal(t, string(want.meta), string(msg.Meta))
		if msg.ParamsProblem != "" || !want.hasParams {
			return
		}

		name, args, raw, problem := DecodeCallParams(&msg)
		if want.params[0] != '{' {
			assert.Equal(t, ProblemParamsNotObject, problem)
			return
		}
		var wantName string
		if want.hasName && string(want.name) != "null" {
			if json.Unmarshal(want.name, &wantName) != nil || want.name[0] != '"' {
				assert.Equal(t, ProblemNameNotString, problem)
				return
			}
		}
		if want.hasArguments && string(want.arguments) != "null" && want.arguments[0] != '{' {
			assert.Equal(t, ProblemArgsNotObject, problem)
			return
		}
		require.Empty(t, problem)
		assert.Equal(t, wantName, name)
		if !want.hasArguments || string(want.arguments) == "null" {
			assert.Nil(t, args)
			return
		}
		assert.Equal(t, string(want.arguments), string(raw))
		names, values, _ := readStrict(want.arguments)
		wantArgs := map[string]string{}
		for i, n := range names {
			wantArgs[n] = string(values[i]) // the last one wins
		}
		require.Len(t, args, len(wantArgs))
		for k, v := range wantArgs {
			assert.Equal(t, v, string(args[k]), "argument %q", k)
		}
	})
}

func TestDecodeMessageRefusesRepeatedNames(t *testing.T) {
	for _, tc := range []struct{ body, code, message string }{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","METHOD":"notifications/cancelled"}`, "-32600",
			`Invalid Request: the members "method" and "METHOD" differ only in case.`},
		{`{"jsonrpc":"2.0","id":10,"ID":"x","method":"ping"}`, "-32600", `Invalid Request: the members "id" and "ID" differ only in case.`},
		{`{"jsonrpc":"2.0","id":1,"method":"ping","\u0069d":2}`, "-32600", `Invalid Request: the member "id" appears twice.`},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","Name":"b"}}`, "-32602", `Invalid params: the members "name" and "Name" differ only in case.`},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"progressToken":1,"progressToken":2}}}`, "-32602",
			`Invalid params: _meta: the member "progressToken" appears twice.`},
	} {
		var msg Message
		code, text := DecodeMessage([]byte(tc.body), &msg)
		if code == 0 {
			code, text = jsonrpc.CodeInvalidParams, msg.ParamsProblem
		}
		assert.Equal(t, tc.code, strconv.Itoa(code), tc.body)
		assert.Equal(t, tc.message, text, tc.body)
	}
}

func TestValidID(t *testing.T) {
	for id, ok := range map[string]bool{
		`1`: true, `-2.5e3`: true, `"a"`: true, `"\ud83d\ude00"`: true, `"é"`: true, `"\\ud800"`: true,
		`"\ud800"`: false, `"\udc00"`: false, `"\ud800x"`: false, `"\ud800\u0041"`: false, "\"\xff\"": false,
		`1e999`: false, `-1e400`: false, `null`: false, `true`: false, `{}`: false, `[]`: false,
	} {
		assert.Equal(t, ok, ValidID(json.RawMessage(id)) != nil, id)
	}
	assert.NotNil(t, ValidID(json.RawMessage(stringID(MaxIDBytes))), "an id of MaxIDBytes")
	assert.Nil(t, ValidID(json.RawMessage(stringID(MaxIDBytes+1))), "an id over MaxIDBytes")
	assert.Nil(t, ValidID(json.RawMessage("1"+strings.Repeat("0", MaxIDBytes))), "a number over MaxIDBytes")
}

func TestDecodeCallParamsDoesNotAlias(t *testing.T) {
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`)
	var msg Message
	code, _ := DecodeMessage(body, &msg)
	require.Zero(t, code)
	name, args, raw, problem := DecodeCallParams(&msg)
	require.Empty(t, problem)
	copy(body, make([]byte, len(body)))
	assert.Equal(t, "echo", name)
	assert.Equal(t, `"hi"`, string(args["text"]))
	assert.Equal(t, `{"text":"hi"}`, string(raw))
}

// stringID is a JSON string id of n bytes of text, quotes included.
func stringID(n int) string { return `"` + strings.Repeat("i", n-2) + `"` }
