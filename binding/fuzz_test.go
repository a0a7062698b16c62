package binding

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/funcmcp/funcmcp/metadata"
)

// FuzzParseFunctionAndTrigger feeds arbitrary function.json text through
// the host's load path: metadata.ParseFunction, then ParseTrigger and
// LoadTool for each tool trigger. Nothing may panic; a trigger error is a
// *ToolError naming the function.
func FuzzParseFunctionAndTrigger(f *testing.F) {
	for _, seed := range []string{
		`{"bindings":[{"type":"mcpToolTrigger","direction":"in","name":"context","toolName":"t","description":"d","toolProperties":"[]"}]}`,
		`{"bindings":[{"type":"mcpToolTrigger","direction":"in","name":"context","toolName":"t","description":null,"toolProperties":"[{\"propertyName\":\"a\",\"propertyType\":\"string\",\"isRequired\":true}]","outputSchema":"{\"type\":\"object\"}","useResultSchema":true}]}`,
		`{"bindings":[{"type":"MCPTOOLTRIGGER","toolName":"","description":1,"metadata":"{}","inputSchema":"{","useWorkerInputSchema":true}]}`,
		`{"bindings":[{"type":"httpTrigger","direction":"in","name":"req"}]}`,
		`{"bindings":[]}`, `[]`, `null`, `{"bindings":[null]}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fn, err := metadata.ParseFunction("f", "f/function.json", data)
		if err != nil {
			var fe *metadata.FunctionError
			if !errors.As(err, &fe) {
				t.Fatalf("ParseFunction error is not a *FunctionError: %T %v", err, err)
			}
			return
		}
		for _, b := range fn.ToolTriggers() {
			if _, err := ParseTrigger(fn, b, "f/function.json"); err != nil {
				var te *ToolError
				if !errors.As(err, &te) || te.Function != "f" {
					t.Fatalf("ParseTrigger error is not a *ToolError of f: %v", err)
				}
			}
			_, _ = LoadTool(fn, b, "f/function.json")
		}
	})
}

// FuzzOutputSchema checks arbitrary output schema text. An accepted schema
// has a root object whose type is "object".
func FuzzOutputSchema(f *testing.F) {
	for _, seed := range []string{
		`{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`,
		`{"type":"object","$defs":{"n":{"type":"object","properties":{"c":{"$ref":"#/$defs/n"}}}},"$ref":"#/$defs/n"}`,
		`{"type":"array"}`, `{"type":"object","properties":[]}`, `{"type":"object","$ref":"http://example.com/s"}`,
		`{"type":"object","pattern":"("}`, `true`, ``, `{"type":"object","required":[1,"a"]}`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		s, err := ParseSchema(OutputSchema, text)
		if err != nil {
			return
		}
		var root map[string]json.RawMessage
		if json.Unmarshal(s.JSON(), &root) != nil || string(root["type"]) != `"object"` {
			t.Fatalf("accepted output schema without a root type object: %s", s.JSON())
		}
	})
}

// FuzzDecodeReturnValue decodes arbitrary worker return values, with and
// without useResultSchema. Success always yields a result.
func FuzzDecodeReturnValue(f *testing.F) {
	for _, seed := range []string{
		`"{\"type\":\"text\",\"content\":\"[{\\\"type\\\":\\\"text\\\",\\\"text\\\":\\\"hi\\\"}]\",\"structuredContent\":\"{\\\"a\\\":1}\"}"`,
		`{"type":"text","content":"[]"}`, `"plain"`, `42`, `null`, `[1,2]`, `"{\"a\":1}"`, `"{\"type\":\"text\",\"content\":\"not a block\"}"`, `{`,
	} {
		f.Add([]byte(seed), true)
		f.Add([]byte(seed), false)
	}
	f.Fuzz(func(t *testing.T, raw []byte, useResultSchema bool) {
		d, err := DecodeReturnValue(raw, useResultSchema)
		if err != nil {
			return
		}
		if d == nil || d.Result == nil {
			t.Fatalf("DecodeReturnValue(%q) succeeded without a result", raw)
		}
		if _, err := json.Marshal(d.Result); err != nil {
			t.Fatalf("the decoded result does not encode: %v", err)
		}
	})
}
