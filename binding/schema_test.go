package binding

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// errClass names which typed error a schema check returns.
type errClass int

const (
	ok errClass = iota
	empty
	syntax
	shape
	compile
	refs
	limit
)

func classify(t *testing.T, err error) errClass {
	t.Helper()
	var (
		se *SyntaxError
		sh *ShapeError
		ce *CompileError
		re *RefError
		le *LimitError
	)
	switch {
	case err == nil:
		return ok
	case errors.Is(err, ErrEmptySchema):
		return empty
	case errors.As(err, &se):
		return syntax
	case errors.As(err, &sh):
		return shape
	case errors.As(err, &ce):
		return compile
	case errors.As(err, &re):
		return refs
	case errors.As(err, &le):
		return limit
	}
	t.Fatalf("untyped schema error: %v", err)
	return ok
}

func TestParseSchema(t *testing.T) {
	tests := []struct {
		name    string
		text    string
		want    errClass
		message string // substring of the error message
	}{
		// Accepted.
		{name: "minimal", text: `{"type":"object"}`},
		{name: "properties and required", text: `{"type":"object","properties":{"x":{"type":"string"}},"required":["x"]}`},
		{name: "empty properties and required", text: `{"type":"object","properties":{},"required":[]}`},
		{name: "required names not in properties", text: `{"type":"object","required":["ghost"]}`},
		{name: "required with numbers", text: `{"type":"object","required":[1,2]}`},
		{name: "required with true", text: `{"type":"object","required":[true]}`},
		{name: "required with null", text: `{"type":"object","required":[null]}`},
		{name: "required with object", text: `{"type":"object","required":[{}]}`},
		{name: "whitespace around", text: " \n\t{ \"type\" : \"object\" }\n"},
		{name: "nested 2020-12 keywords", text: `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",` +
			`"$defs":{"city":{"type":"string","minLength":1}},` +
			`"properties":{"city":{"$ref":"#/$defs/city"},"point":{"type":"array","prefixItems":[{"type":"number"},{"type":"number"}],"items":false},` +
			`"v":{"if":{"type":"string"},"then":{"maxLength":3},"else":{"type":"number"}},"u":{"unevaluatedProperties":false}},` +
			`"dependentRequired":{"city":["point"]}}`},
		{name: "internal ref through own $id", text: `{"$id":"https://example.com/root","type":"object",` +
			`"properties":{"x":{"$ref":"https://example.com/root#/$defs/a"}},"$defs":{"a":{"type":"string"}}}`},
		{name: "draft-07 declared", text: `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object"}`},
		{name: "unknown keywords kept", text: `{"type":"object","x-extra":{"anything":[1,2]}}`},
		{name: "format not asserted", text: `{"type":"object","properties":{"d":{"type":"string","format":"date-time"}}}`},

		// Empty.
		{name: "empty", text: "", want: empty, message: "output schema: schema is empty"},
		{name: "whitespace only", text: " \n\t ", want: empty, message: "schema is empty"},

		// Not JSON.
		{name: "bad JSON", text: `{not json`, want: syntax, message: "output schema is not valid JSON: invalid character 'n'"},
		{name: "truncated", text: `{ "type": "object", "properties": { "x": "string" `, want: syntax, message: "output schema is not valid JSON: unexpected end of JSON input"},
		{name: "double comma", text: `{"type":"object",,"properties":{}}`, want: syntax, message: "not valid JSON"},
		{name: "trailing comma", text: `{"type":"object",}`, want: syntax, message: "not valid JSON"},
		{name: "comment", text: `{"type":"object" /* c */}`, want: syntax, message: "not valid JSON"},
		{name: "two values", text: `{"type":"object"} {}`, want: syntax, message: "not valid JSON"},

		// Shape.
		{name: "array root", text: `[{"type":"string"}]`, want: shape, message: "output schema must be a JSON object"},
		{name: "empty array root", text: `[]`, want: shape, message: "must be a JSON object"},
		{name: "string root", text: `"hello"`, want: shape, message: "must be a JSON object"},
		{name: "number root", text: `42`, want: shape, message: "must be a JSON object"},
		{name: "null root", text: `null`, want: shape, message: "must be a JSON object"},
		{name: "empty object", text: `{}`, want: shape, message: `must have a root "type" property with value "object"`},
		{name: "missing type", text: `{"properties":{}}`, want: shape, message: `"type" property with value "object"`},
		{name: "type string", text: `{"type":"string"}`, want: shape, message: `"type" property with value "object"`},
		{name: "type Object", text: `{"type":"Object"}`, want: shape, message: `"type" property with value "object"`},
		{name: "type array of object", text: `{"type":["object"]}`, want: shape, message: `"type" property with value "object"`},
		{name: "type null", text: `{"type":null}`, want: shape, message: `"type" property with value "object"`},
		{name: "type number", text: `{"type":5}`, want: shape, message: `"type" property with value "object"`},
		{name: "type true", text: `{"type":true}`, want: shape, message: `"type" property with value "object"`},
		{name: "type object value", text: `{"type":{}}`, want: shape, message: `"type" property with value "object"`},
		{name: "properties array", text: `{"type":"object","properties":[]}`, want: shape, message: `"properties" must be a JSON object when present`},
		{name: "properties null", text: `{"type":"object","properties":null}`, want: shape, message: `"properties" must be a JSON object`},
		{name: "properties string", text: `{"type":"object","properties":"x"}`, want: shape, message: `"properties" must be a JSON object`},
		{name: "required object", text: `{"type":"object","required":{}}`, want: shape, message: `"required" must be a JSON array when present`},
		{name: "required string", text: `{"type":"object","required":"x"}`, want: shape, message: `"required" must be a JSON array`},
		{name: "required null", text: `{"type":"object","required":null}`, want: shape, message: `"required" must be a JSON array`},

		// JSON Schema 2020-12.
		{name: "unknown type name", text: `{"type":"object","properties":{"x":{"type":"strin"}}}`, want: compile,
			message: "output schema is not a valid JSON Schema 2020-12 document: at '/properties/x/type': value must be one of"},
		{name: "negative minLength", text: `{"type":"object","properties":{"x":{"type":"string","minLength":-1}}}`, want: compile,
			message: "at '/properties/x/minLength': minimum: got -1, want 0"},
		{name: "required not unique", text: `{"type":"object","required":["a","a"]}`, want: compile, message: "at '/required'"},
		{name: "bad regex", text: `{"type":"object","properties":{"x":{"pattern":"("}}}`, want: compile, message: "is not valid regex"},
		{name: "properties entry not a schema", text: `{"type":"object","properties":{"x":"string"}}`, want: compile, message: "at '/properties/x'"},
		{name: "remote ref", text: `{"type":"object","properties":{"x":{"$ref":"https://example.com/s.json"}}}`, want: compile,
			message: `"https://example.com/s.json" cannot be loaded: only references within the schema`},
		{name: "file ref", text: `{"type":"object","properties":{"x":{"$ref":"file:///etc/passwd"}}}`, want: compile,
			message: `"file:///etc/passwd" cannot be loaded`},
		{name: "relative ref", text: `{"type":"object","properties":{"x":{"$ref":"other.json"}}}`, want: compile, message: "cannot be loaded"},
		{name: "dangling pointer", text: `{"type":"object","properties":{"x":{"$ref":"#/$defs/none"}}}`, want: refs, message: `output schema: $ref "#/$defs/none" at #/properties/x does not resolve`},
		{name: "ref cycle", text: `{"type":"object","$defs":{"a":{"$ref":"#/$defs/a"}},"properties":{"x":{"$ref":"#/$defs/a"}}}`, want: refs, message: "$ref cycle that never moves into the instance"},

		// Bounds.
		{name: "too large", text: `{"type":"object","description":"` + strings.Repeat("x", DefaultMaxSchemaBytes) + `"}`, want: limit, message: "output schema is 262178 bytes, more than the limit of 262144"},
		{name: "too deep", text: strings.Repeat(`{"not":`, 65) + `{}` + strings.Repeat("}", 65), want: limit, message: "output schema nests 66 levels, more than the limit of 64"},
		{name: "unknown metaschema", text: `{"$schema":"https://example.com/meta","type":"object"}`, want: compile, message: `"https://example.com/meta" cannot be loaded`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := ParseSchema(OutputSchema, tt.text)
			assert.Equal(t, tt.want, classify(t, err), "error: %v", err)
			if tt.want == ok {
				require.NoError(t, err)
				require.NotNil(t, s)
				assert.Equal(t, OutputSchema, s.Kind())
				assert.JSONEq(t, tt.text, s.String())
				assert.NotContains(t, string(s.JSON()), "\n", "schema text is compact")
				return
			}
			require.Error(t, err)
			assert.Nil(t, s)
			assert.Contains(t, err.Error(), tt.message)
			assert.NotContains(t, err.Error(), "\n", "one line")
		})
	}
}

func TestParseSchemaKindInMessages(t *testing.T) {
	for _, kind := range []SchemaKind{InputSchema, OutputSchema} {
		for _, text := range []string{"", "{", "[]", `{"type":"object","properties":{"x":{"type":"strin"}}}`} {
			_, err := ParseSchema(kind, text)
			require.Error(t, err)
			assert.Regexp(t, "^"+kind.String()+"[ :]", err.Error())
		}
	}
	assert.Equal(t, "input schema", InputSchema.String())
	assert.Equal(t, "output schema", OutputSchema.String())
}

func TestCheckShapeCompacts(t *testing.T) {
	text, err := CheckShape(InputSchema, "{ \"type\" : \"object\",\n \"description\": \"a < b & c\", \"n\": 1.50 }")
	require.NoError(t, err)
	assert.Equal(t, `{"type":"object","description":"a < b & c","n":1.50}`, string(text))
}

// TestParseSchemaOffline proves that references are never loaded: a schema
// server on 127.0.0.1 and a schema file on disk both exist and would be valid,
// yet the references to them are refused and nothing is read.
func TestParseSchemaOffline(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/schema+json")
		_, _ = w.Write([]byte(`{"type":"string"}`))
	}))
	defer srv.Close()
	file := filepath.Join(t.TempDir(), "s.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"type":"string"}`), 0o600))

	for _, ref := range []string{srv.URL + "/s.json", "file://" + filepath.ToSlash(file)} {
		t.Run(ref, func(t *testing.T) {
			text := fmt.Sprintf(`{"type":"object","properties":{"x":{"$ref":%q}}}`, ref)
			_, err := ParseSchema(OutputSchema, text)
			var ce *CompileError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, OutputSchema, ce.Kind)
			assert.Contains(t, err.Error(), "nothing is fetched")
		})
	}
	assert.Zero(t, hits.Load(), "the schema server was contacted")
}

func TestValidate(t *testing.T) {
	s, err := ParseSchema(OutputSchema, `{"type":"object","properties":{
		"temp":{"type":"number"},
		"city":{"type":"string"},
		"tags":{"type":"array","items":{"type":"string"}},
		"a/b~c":{"$ref":"#/$defs/s"}},
		"required":["temp","city"],"additionalProperties":false,
		"$defs":{"s":{"type":"string"}}}`)
	require.NoError(t, err)

	tests := []struct {
		name     string
		value    string
		problems []Problem
	}{
		{name: "valid", value: `{"temp":21.5,"city":"Oslo","tags":["a"]}`},
		{name: "exact big number", value: `{"temp":12345678901234567890123,"city":"x"}`},
		{name: "several problems", value: `{"temp":"warm","tags":[1],"zz":1,"a/b~c":3}`, problems: []Problem{
			{InstanceLocation: "", KeywordLocation: "/additionalProperties", Message: "additional properties 'zz' not allowed"},
			{InstanceLocation: "", KeywordLocation: "/required", Message: "missing property 'city'"},
			{InstanceLocation: "/a~1b~0c", KeywordLocation: "/$defs/s/type", Message: "got number, want string"},
			{InstanceLocation: "/tags/0", KeywordLocation: "/properties/tags/items/type", Message: "got number, want string"},
			{InstanceLocation: "/temp", KeywordLocation: "/properties/temp/type", Message: "got string, want number"},
		}},
		{name: "extra properties named in order", value: `{"temp":1,"city":"x","zz":1,"b":2,"Y":3,"a":4,"yy":5,"c":6,"X":7,"m":8}`, problems: []Problem{
			{InstanceLocation: "", KeywordLocation: "/additionalProperties", Message: "additional properties 'X', 'Y', 'a', 'b', 'c', 'm', 'yy', 'zz' not allowed"},
		}},
		{name: "not an object", value: `[1]`, problems: []Problem{
			{InstanceLocation: "", KeywordLocation: "/type", Message: "got array, want object"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := s.ValidateJSON([]byte(tt.value))
			if tt.problems == nil {
				require.NoError(t, err)
				assert.NotNil(t, v)
				return
			}
			var ve *ValidationError
			require.ErrorAs(t, err, &ve)
			assert.Equal(t, OutputSchema, ve.Kind)
			assert.Equal(t, tt.problems, ve.Problems)
			assert.Contains(t, err.Error(), "does not match the output schema: at '")
		})
	}

	_, err = s.ValidateJSON([]byte(`{"temp":`))
	require.Error(t, err)
	var ve *ValidationError
	assert.False(t, errors.As(err, &ve), "a decoding error is not a validation error")
}

// Non-string "required" entries are accepted, kept in the advertised text and
// left out of validation; the string entries still apply.
func TestLenientRequired(t *testing.T) {
	s, err := ParseSchema(OutputSchema, `{"type":"object","required":[1,"temp",null,{}]}`)
	require.NoError(t, err)
	assert.Equal(t, `{"type":"object","required":[1,"temp",null,{}]}`, s.String())
	_, err = s.ValidateJSON([]byte(`{"temp":1}`))
	assert.NoError(t, err)
	_, err = s.ValidateJSON([]byte(`{}`))
	var ve *ValidationError
	require.ErrorAs(t, err, &ve)
	assert.Equal(t, []Problem{{InstanceLocation: "", KeywordLocation: "/required", Message: "missing property 'temp'"}}, ve.Problems)
	assert.Equal(t, []string{"temp"}, requiredNames(s))
}
