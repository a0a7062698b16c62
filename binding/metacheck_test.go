package binding

import (
	"bytes"
	"errors"
	"os"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// metaCases are schema documents with whether the quick metaschema check
// may vouch for them. Every one it vouches for must pass the compiler's
// full metaschema validation (TestMetaValidAgreesWithTheMetaschema).
var metaCases = []struct {
	name   string
	schema string
	vouch  bool
}{
	{"empty object", `{}`, true},
	{"true", `true`, true},
	{"false", `false`, true},
	{"typical tool schema", `{"type":"object","properties":{"a":{"type":"string","minLength":1,"maxLength":10,"format":"date"},"b":{"type":["integer","null"],"minimum":0,"maximum":1.5e3,"multipleOf":0.5}},"required":["a"],"additionalProperties":false}`, true},
	{"defs and local ref", `{"type":"object","$defs":{"c":{"enum":["x",1,null]}},"properties":{"c":{"$ref":"#/$defs/c"}}}`, true},
	{"applicators", `{"allOf":[{"type":"object"}],"anyOf":[true],"oneOf":[{"const":{"a":[1]}}],"not":false,"if":{},"then":{},"else":{},"items":{"type":"number"},"prefixItems":[{}],"contains":{},"minContains":0,"maxContains":3,"uniqueItems":true,"propertyNames":{"maxLength":3},"dependentSchemas":{"a":{}},"dependentRequired":{"a":["b"]},"unevaluatedProperties":false,"unevaluatedItems":true}`, true},
	{"annotations", `{"title":"t","description":"d","$comment":"c","default":[1],"examples":[1,"a"],"deprecated":false,"readOnly":true,"writeOnly":false,"contentEncoding":"base64","contentMediaType":"text/plain","contentSchema":{"type":"string"}}`, true},
	{"unknown keywords are free", `{"x-anything":{"type":7},"Type":"nonsense","minlength":-1}`, true},
	{"the 2020-12 $schema", `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object"}`, true},

	// Left to the compiler, although valid.
	{"$id", `{"$id":"https://example.com/s","type":"object"}`, false},
	{"$anchor", `{"$defs":{"a":{"$anchor":"a"}},"$ref":"#a"}`, false},
	{"pattern", `{"type":"string","pattern":"^a+$"}`, false},
	{"patternProperties", `{"patternProperties":{"^a":{}}}`, false},
	{"count written 1.0", `{"minLength":1.0}`, false},
	{"another draft's $schema", `{"$schema":"http://json-schema.org/draft-07/schema#"}`, false},
	{"remote ref", `{"$ref":"http://example.com/s"}`, false},
	{"escaped ref", `{"$ref":"#/$defs/a%20b","$defs":{"a b":{}}}`, false},
	{"definitions", `{"definitions":{"a":{}}}`, false},

	// Invalid: the compiler's validation must say why.
	{"negative count", `{"type":"string","minLength":-1}`, false},
	{"fraction count", `{"maxItems":1.5}`, false},
	{"string count", `{"minItems":"1"}`, false},
	{"unknown type", `{"type":"obj"}`, false},
	{"empty type array", `{"type":[]}`, false},
	{"repeated type", `{"type":["string","string"]}`, false},
	{"zero multipleOf", `{"multipleOf":0}`, false},
	{"repeated required", `{"required":["a","a"]}`, false},
	{"non-string required", `{"required":[1]}`, false},
	{"required object", `{"required":{}}`, false},
	{"enum object", `{"enum":{}}`, false},
	{"properties array", `{"properties":[]}`, false},
	{"property schema string", `{"properties":{"a":"string"}}`, false},
	{"empty allOf", `{"allOf":[]}`, false},
	{"number bound as string", `{"minimum":"0"}`, false},
	{"title number", `{"title":1}`, false},
	{"uniqueItems string", `{"uniqueItems":"yes"}`, false},
	{"ref not a string", `{"$ref":1}`, false},
	{"nested invalid", `{"properties":{"a":{"items":{"type":"nothing"}}}}`, false},
	{"root array", `[]`, false},
}

func TestMetaValid(t *testing.T) {
	for _, tc := range metaCases {
		t.Run(tc.name, func(t *testing.T) {
			doc, err := DecodeJSON([]byte(tc.schema))
			require.NoError(t, err)
			assert.Equal(t, tc.vouch, metaValid(doc))
		})
	}
}

// TestMetaValidAgreesWithTheMetaschema checks every case (and every fuzz
// seed) against the compiler's own metaschema validation: whatever the
// quick check vouches for, the metaschema accepts.
func TestMetaValidAgreesWithTheMetaschema(t *testing.T) {
	for _, tc := range metaCases {
		t.Run(tc.name, func(t *testing.T) {
			checkMetaAgreement(t, []byte(tc.schema))
		})
	}
	weather, err := os.ReadFile("../function-app-sample/weather.schema.json")
	require.NoError(t, err)
	doc, err := DecodeJSON(weather)
	require.NoError(t, err)
	assert.True(t, metaValid(doc), "the sample's output schema is vouched for")
	checkMetaAgreement(t, weather)
}

// checkMetaAgreement fails when metaValid vouches for a document that the
// metaschema rejects.
func checkMetaAgreement(t *testing.T, text []byte) {
	t.Helper()
	doc, err := DecodeJSON(text)
	if err != nil || !metaValid(doc) {
		return
	}
	_, err = compileAt("mem:///schema.json", doc)
	if checkRefs(doc) == nil {
		// Nothing is left that could fail: a deferred schema relies on it.
		assert.NoErrorf(t, err, "vouched for %s, its references resolve, yet it does not compile", text)
	}
	var sve *jsonschema.SchemaValidationError
	if assert.Falsef(t, errors.As(err, &sve), "vouched for %s, which the metaschema rejects: %v", text, err) {
		// A vouched document compiles the same way where the metaschema
		// validation is skipped.
		_, vouchedErr := compileAt(vouchedURL, doc)
		assert.Equal(t, err == nil, vouchedErr == nil, "compiled at %s: %v; with the metaschema: %v", vouchedURL, vouchedErr, err)
	}
}

// TestVouchedURLSkipsTheMetaschema keeps the reason for vouchedURL true:
// the compiler does not validate a document there against the metaschema
// (if it did again, the quick check would only cost time).
func TestVouchedURLSkipsTheMetaschema(t *testing.T) {
	doc, err := DecodeJSON([]byte(`{"type":"string","minLength":-1}`))
	require.NoError(t, err)
	_, err = compileAt("mem:///schema.json", doc)
	assert.Error(t, err)
	_, err = compileAt(vouchedURL, doc)
	assert.NoError(t, err)
}

// FuzzMetaValid looks for a document the quick metaschema check vouches for
// and the compiler's metaschema validation rejects.
func FuzzMetaValid(f *testing.F) {
	for _, tc := range metaCases {
		f.Add([]byte(tc.schema))
	}
	f.Fuzz(func(t *testing.T, text []byte) {
		if len(text) > 4096 || bytes.Count(text, []byte("[")) > 64 || bytes.Count(text, []byte("{")) > 64 {
			return
		}
		checkMetaAgreement(t, text)
	})
}
