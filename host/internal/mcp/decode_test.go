package mcp

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The walker must agree with encoding/json on every valid message.
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
	`{}`, `[]`, `1`, `"s"`, `null`, `{"a":`, ``,
}

// reference decodes msg with encoding/json, as the walker should.
type reference struct {
	JSONRPC any             `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  any             `json:"method"`
	Params  json.RawMessage `json:"params"`
}

func FuzzDecodeMessage(f *testing.F) {
	for _, s := range decodeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var msg message
		code, _ := decodeMessage(body, &msg)
		if !json.Valid(body) {
			assert.Equal(t, CodeParseError, code)
			return
		}
		if firstByte(body) != '{' {
			assert.Equal(t, CodeInvalidRequest, code)
			return
		}
		if caseFoldedKeys(body) {
			return // encoding/json matches keys case-insensitively, MCP does not
		}
		var ref reference
		if err := json.Unmarshal(body, &ref); err != nil {
			return // a case-folded duplicate key can confuse the reference
		}
		if code != 0 {
			return
		}
		assert.Equal(t, "2.0", ref.JSONRPC)
		if ref.Method != nil {
			assert.Equal(t, ref.Method, msg.method)
		}
		if ref.ID != nil {
			assert.JSONEq(t, string(ref.ID), string(msg.id))
		}
		if ref.Params == nil || msg.method != methodToolsCall {
			return
		}
		var p struct {
			Name      any                        `json:"name"`
			Arguments map[string]json.RawMessage `json:"arguments"`
		}
		if err := json.Unmarshal(ref.Params, &p); err != nil {
			_, _, problem := decodeCallParams(msg.params)
			assert.NotEmpty(t, problem, "encoding/json refused %s: %v", ref.Params, err)
			return
		}
		name, args, problem := decodeCallParams(msg.params)
		if problem != "" {
			_, isString := p.Name.(string)
			assert.False(t, isString || p.Name == nil, "walker refused %s: %s", ref.Params, problem)
			return
		}
		if s, ok := p.Name.(string); ok {
			assert.Equal(t, s, name)
		}
		require.Len(t, args, len(p.Arguments))
		for k, v := range p.Arguments {
			assert.Equal(t, string(v), string(args[k]), "argument %q", k)
		}
	})
}

// caseFoldedKeys reports a key spelled like a JSON-RPC or tools/call key
// in another case.
func caseFoldedKeys(body []byte) bool {
	lower := bytes.ToLower(body)
	for _, k := range []string{"jsonrpc", "id", "method", "params", "result", "error", "name", "arguments"} {
		q := []byte(`"` + k + `"`)
		if bytes.Count(lower, q) != bytes.Count(body, q) {
			return true
		}
	}
	return false
}

func TestDecodeCallParamsDoesNotAlias(t *testing.T) {
	params := []byte(`{"name":"echo","arguments":{"text":"hi"}}`)
	name, args, problem := decodeCallParams(params)
	require.Empty(t, problem)
	copy(params, make([]byte, len(params)))
	assert.Equal(t, "echo", name)
	assert.Equal(t, `"hi"`, string(args["text"]))
}
