package wire

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/funcmcp/funcmcp/host/internal/jsonrpc"
	"github.com/funcmcp/funcmcp/host/internal/mcp/wire/wiretest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func FuzzDecodeMessage(f *testing.F) {
	for _, s := range wiretest.DecodeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var msg Message
		code, _ := DecodeMessage(body, &msg)
		want := wiretest.StrictDecode(body)
		require.Equal(t, want.Code, code, "%q", body)
		if code != 0 {
			return
		}
		assert.Equal(t, want.Method, msg.Method)
		assert.Equal(t, string(want.ID), string(msg.ID))
		assert.Equal(t, want.HasID, msg.ID != nil)
		assert.Equal(t, string(want.Params), string(msg.Params))
		assert.Equal(t, want.ParamsProblem, msg.ParamsProblem != "", "params problem %q", msg.ParamsProblem)
		assert.Equal(t, string(want.Name), string(msg.Name))
		assert.Equal(t, string(want.Arguments), string(msg.Arguments))
		assert.Equal(t, string(want.Meta), string(msg.Meta))
		if msg.ParamsProblem != "" || !want.HasParams {
			return
		}

		name, args, raw, problem := DecodeCallParams(&msg)
		if want.Params[0] != '{' {
			assert.Equal(t, ProblemParamsNotObject, problem)
			return
		}
		var wantName string
		if want.HasName && string(want.Name) != "null" {
			if json.Unmarshal(want.Name, &wantName) != nil || want.Name[0] != '"' {
				assert.Equal(t, ProblemNameNotString, problem)
				return
			}
		}
		if want.HasArguments && string(want.Arguments) != "null" && want.Arguments[0] != '{' {
			assert.Equal(t, ProblemArgsNotObject, problem)
			return
		}
		require.Empty(t, problem)
		assert.Equal(t, wantName, name)
		if !want.HasArguments || string(want.Arguments) == "null" {
			assert.Nil(t, args)
			return
		}
		assert.Equal(t, string(want.Arguments), string(raw))
		names, values, _ := wiretest.ReadStrict(want.Arguments)
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
