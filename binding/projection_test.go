package binding

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/metadata"
)

func TestProjectSchema(t *testing.T) {
	tests := []struct {
		name        string
		natural     string
		field       string
		want        string
		wantWrapped bool
	}{
		{name: "object root unchanged", natural: `{"type":"object","properties":{"a":{"$ref":"#/$defs/x"}},"$defs":{"x":{"type":"integer"}}}`,
			want: `{"type":"object","properties":{"a":{"$ref":"#/$defs/x"}},"$defs":{"x":{"type":"integer"}}}`},
		{name: "object or null becomes object", natural: `{"type":["object","null"],"properties":{"a":{"type":"string"}}}`,
			want: `{"type":"object","properties":{"a":{"type":"string"}}}`},
		{name: "null or object becomes object", natural: `{"properties":{},"type":["null","object"]}`,
			want: `{"properties":{},"type":"object"}`},
		{name: "array root", natural: `{"type":"array","items":{"type":"integer"}}`, wantWrapped: true,
			want: `{"type":"object","properties":{"result":{"type":"array","items":{"type":"integer"}}},"required":["result"]}`},
		{name: "scalar root, own field", natural: ` { "type" : "number" } `, field: "celsius", wantWrapped: true,
			want: `{"type":"object","properties":{"celsius":{"type":"number"}},"required":["celsius"]}`},
		{name: "true", natural: `true`, wantWrapped: true,
			want: `{"type":"object","properties":{"result":true},"required":["result"]}`},
		{name: "empty schema", natural: `{}`, wantWrapped: true,
			want: `{"type":"object","properties":{"result":{}},"required":["result"]}`},
		{name: "object, array or null is not an object root", natural: `{"type":["object","array","null"]}`, wantWrapped: true,
			want: `{"type":"object","properties":{"result":{"type":["object","array","null"]}},"required":["result"]}`},
		{
			name: "oneOf root with refs rewritten in subschemas only",
			natural: `{"$schema":"https://json-schema.org/draft/2020-12/schema","oneOf":[{"$ref":"#/$defs/point"},{"type":"array","items":{"$ref":"#/$defs/point"}},{"type":"array","items":{"$ref":"#"}}],` +
				`"$defs":{"point":{"type":"object","properties":{"x":{"type":"number"},"next":{"$dynamicRef":"#/$defs/point"},"default":{"$ref":"#/$defs/point"}},"default":{"$ref":"#/$defs/point"},"enum":[{"$ref":"#/x"}]},` +
				`"ext":{"$id":"https://example.com/ext","$ref":"#/$defs/inner","$defs":{"inner":{"type":"string"}}}},"x-note":{"$ref":"#/not/a/schema"}}`,
			wantWrapped: true,
			want: `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"result":{"oneOf":[{"$ref":"#/properties/result/$defs/point"},{"type":"array","items":{"$ref":"#/properties/result/$defs/point"}},{"type":"array","items":{"$ref":"#/properties/result"}}],` +
				`"$defs":{"point":{"type":"object","properties":{"x":{"type":"number"},"next":{"$dynamicRef":"#/properties/result/$defs/point"},"default":{"$ref":"#/properties/result/$defs/point"}},"default":{"$ref":"#/$defs/point"},"enum":[{"$ref":"#/x"}]},` +
				`"ext":{"$id":"https://example.com/ext","$ref":"#/$defs/inner","$defs":{"inner":{"type":"string"}}}},"x-note":{"$ref":"#/not/a/schema"}}},"required":["result"]}`,
		},
		{name: "root with $id keeps its refs", natural: `{"$id":"https://example.com/list","type":"array","items":{"$ref":"#/$defs/i"},"$defs":{"i":{"type":"integer"}}}`, wantWrapped: true,
			want: `{"type":"object","properties":{"result":{"$id":"https://example.com/list","type":"array","items":{"$ref":"#/$defs/i"},"$defs":{"i":{"type":"integer"}}}},"required":["result"]}`},
		{name: "field escaped in pointers", natural: `{"type":"array","items":{"$ref":"#/$defs/i"},"$defs":{"i":{"type":"integer"}}}`, field: "a/b c~", wantWrapped: true,
			want: `{"type":"object","properties":{"a/b c~":{"type":"array","items":{"$ref":"#/properties/a~1b%20c~0/$defs/i"},"$defs":{"i":{"type":"integer"}}}},"required":["a/b c~"]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			field := tt.field
			if field == "" {
				field = DefaultOutputField
			}
			got, wrapped, err := ProjectSchema(json.RawMessage(tt.natural), field)
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(got), "key order and text are kept")
			assert.Equal(t, tt.wantWrapped, wrapped)
			_, err = ParseSchema(OutputSchema, string(got))
			assert.NoError(t, err, "the projection is a valid legacy output schema")
		})
	}
}

func TestProjectSchemaRejects(t *testing.T) {
	for _, natural := range []string{``, `[1]`, `"object"`, `{"type":`} {
		_, _, err := ProjectSchema(json.RawMessage(natural), DefaultOutputField)
		assert.Error(t, err, natural)
	}
	_, _, err := ProjectSchema(json.RawMessage(`{"type":"array"}`), "")
	assert.ErrorContains(t, err, "output field name is empty")
}

// TestProjectionValidatesLikeNatural checks both ways for the same tool:
// a value valid under the natural schema is valid wrapped under the
// projection, and a value the natural schema refuses (through a rewritten
// $ref) is refused wrapped too.
func TestProjectionValidatesLikeNatural(t *testing.T) {
	tests := []struct {
		name, natural string
		good, bad     []string
	}{
		{name: "array", natural: `{"type":"array","items":{"$ref":"#/$defs/day"},"$defs":{"day":{"type":"object","properties":{"date":{"type":"string","pattern":"^\\d{4}-\\d{2}-\\d{2}$"}},"required":["date"]}}}`,
			good: []string{`[]`, `[{"date":"2026-07-28"}]`}, bad: []string{`[{"date":"tomorrow"}]`, `{"date":"2026-07-28"}`, `null`}},
		{name: "scalar", natural: `{"type":"integer","minimum":0}`,
			good: []string{`0`, `42`}, bad: []string{`-1`, `"42"`, `[42]`}},
		{name: "oneOf", natural: `{"oneOf":[{"$ref":"#/$defs/n"},{"type":"array","items":{"$ref":"#/$defs/n"}}],"$defs":{"n":{"type":"number","multipleOf":0.5}}}`,
			good: []string{`1.5`, `[0.5,2]`}, bad: []string{`1.25`, `[1,0.3]`, `"x"`}},
		{name: "recursive", natural: `{"type":"array","items":{"anyOf":[{"type":"integer"},{"$ref":"#"}]}}`,
			good: []string{`[1,[2,[3]]]`}, bad: []string{`[1,["x"]]`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			natural, err := ParseNaturalSchema(tt.natural)
			require.NoError(t, err)
			text, wrapped, err := ProjectSchema(natural.JSON(), DefaultOutputField)
			require.NoError(t, err)
			require.True(t, wrapped)
			projected, err := ParseSchema(OutputSchema, string(text))
			require.NoError(t, err)
			check := func(value string, valid bool) {
				_, errNatural := natural.ValidateJSON([]byte(value))
				wrappedValue, err := ProjectValue(json.RawMessage(value), DefaultOutputField)
				require.NoError(t, err)
				_, errProjected := projected.ValidateJSON(wrappedValue)
				assert.Equal(t, valid, errNatural == nil, "natural %s: %v", value, errNatural)
				assert.Equal(t, valid, errProjected == nil, "projected %s: %v", wrappedValue, errProjected)
				back, err := UnprojectValue(wrappedValue, DefaultOutputField)
				require.NoError(t, err)
				assert.JSONEq(t, value, string(back))
			}
			for _, v := range tt.good {
				check(v, true)
			}
			for _, v := range tt.bad {
				check(v, false)
			}
		})
	}
}

func TestProjectValue(t *testing.T) {
	got, err := ProjectValue(json.RawMessage(` [1, 2] `), "primes")
	require.NoError(t, err)
	assert.Equal(t, `{"primes":[1,2]}`, string(got))
	got, err = ProjectValue(json.RawMessage(`"<b>"`), "a<b")
	require.NoError(t, err)
	assert.Equal(t, `{"a<b":"<b>"}`, string(got), "no HTML escaping")
	_, err = ProjectValue(json.RawMessage(`[1,`), "x")
	assert.Error(t, err)
}

func TestUnprojectValue(t *testing.T) {
	got, err := UnprojectValue(json.RawMessage(`{"other":1,"result":[1,{"a":2}]}`), "result")
	require.NoError(t, err)
	assert.Equal(t, `[1,{"a":2}]`, string(got))
	for _, tc := range []struct{ projected, field, want string }{
		{`{"result":1,"x":2}`, "result", `1`},                 // a second member: not the fast path
		{` { "result" : [1, 2] } `, "result", `[1,2]`},        // not compact
		{`{"a\"b":true}`, `a"b`, `true`},                      // an escaped field name
		{`{"result":{"result":0}}`, "result", `{"result":0}`}, // nested
	} {
		got, err := UnprojectValue(json.RawMessage(tc.projected), tc.field)
		require.NoError(t, err, tc.projected)
		assert.JSONEq(t, tc.want, string(got), tc.projected)
	}
	_, err = UnprojectValue(json.RawMessage(`{"other":1}`), "result")
	assert.ErrorContains(t, err, `no "result" member`)
	_, err = UnprojectValue(json.RawMessage(`[1]`), "result")
	assert.ErrorContains(t, err, "not an object")
}

func TestUnprojectResult(t *testing.T) {
	image := metadata.ImageContent("aGk=", "image/png")
	tests := []struct {
		name        string
		res         metadata.CallToolResult
		wantContent []json.RawMessage
		wantSC      string
	}{
		{
			name:        "mirror text replaced",
			res:         metadata.CallToolResult{Content: []json.RawMessage{metadata.TextContent(`{"result":[2,3]}`)}, StructuredContent: json.RawMessage(`{"result":[2,3]}`)},
			wantContent: []json.RawMessage{metadata.TextContent(`[2,3]`)},
			wantSC:      `[2,3]`,
		},
		{
			name:        "text copy added when there is none",
			res:         metadata.CallToolResult{Content: []json.RawMessage{image}, StructuredContent: json.RawMessage(`{"result":"x"}`)},
			wantContent: []json.RawMessage{image, metadata.TextContent(`"x"`)},
			wantSC:      `"x"`,
		},
		{
			name:        "other text kept, copy added",
			res:         metadata.CallToolResult{Content: []json.RawMessage{metadata.TextContent("7 primes")}, StructuredContent: json.RawMessage(`{"result":7}`)},
			wantContent: []json.RawMessage{metadata.TextContent("7 primes"), metadata.TextContent(`7`)},
			wantSC:      `7`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := tt.res
			shared := res.Content
			require.NoError(t, UnprojectResult(&res, DefaultOutputField))
			assert.Equal(t, tt.wantContent, res.Content)
			assert.Equal(t, tt.wantSC, string(res.StructuredContent))
			assert.Equal(t, tt.res.Content[0], shared[0], "the caller's content slice is not modified")
		})
	}

	errRes := metadata.CallToolResult{Content: []json.RawMessage{metadata.TextContent("boom")}, IsError: true}
	require.NoError(t, UnprojectResult(&errRes, DefaultOutputField))
	assert.Equal(t, []json.RawMessage{metadata.TextContent("boom")}, errRes.Content)

	bad := metadata.CallToolResult{StructuredContent: json.RawMessage(`{"x":1}`)}
	assert.Error(t, UnprojectResult(&bad, DefaultOutputField))
}

func TestWireSchema(t *testing.T) {
	assert.Equal(t, `{}`, string(WireSchema(json.RawMessage(`true`))))
	assert.Equal(t, `{"not":{}}`, string(WireSchema(json.RawMessage(`false`))))
	assert.Equal(t, `{"type":"array"}`, string(WireSchema(json.RawMessage(`{"type":"array"}`))))
}

func TestParseNaturalSchema(t *testing.T) {
	for _, ok := range []string{`true`, `false`, `{}`, `{"type":"array","items":{"type":"string"}}`, `{"type":"string"}`, `{"oneOf":[{"type":"number"},{"type":"null"}]}`} {
		s, err := ParseNaturalSchema(ok)
		if assert.NoError(t, err, ok) {
			assert.Equal(t, OutputSchema, s.Kind())
		}
	}
	var se *ShapeError
	_, err := ParseNaturalSchema(`[{"type":"string"}]`)
	require.True(t, errors.As(err, &se), "%v", err)
	assert.Equal(t, RuleSchemaRoot, se.Rule)
	var syn *SyntaxError
	_, err = ParseNaturalSchema(`{"type":`)
	assert.True(t, errors.As(err, &syn), "%v", err)
	var ce *CompileError
	_, err = ParseNaturalSchema(`{"type":"array","items":{"$ref":"https://example.com/x.json"}}`)
	assert.True(t, errors.As(err, &ce), "%v", err)
	_, err = ParseNaturalSchema(`{"type":"array","minItems":-1}`)
	assert.True(t, errors.As(err, &ce), "%v", err)
	_, err = ParseNaturalSchema(" ")
	assert.ErrorIs(t, err, ErrEmptySchema)
}

func TestNeedsProjection(t *testing.T) {
	for _, v := range []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"} {
		assert.True(t, NeedsProjection(v), v)
	}
	assert.False(t, NeedsProjection("2026-07-28"))
}

// BenchmarkUnprojectResult is what a 2026-07-28 call of a wrapped tool adds
// in funchost: unwrapping a 30-element array and rewriting its text copy.
func BenchmarkUnprojectResult(b *testing.B) {
	var list []int
	for i := range 30 {
		list = append(list, i*7919)
	}
	natural, _ := json.Marshal(list)
	wrapped, _ := ProjectValue(natural, DefaultOutputField)
	content := []json.RawMessage{metadata.TextContent(string(wrapped))}
	b.ReportAllocs()
	for b.Loop() {
		res := metadata.CallToolResult{Content: content, StructuredContent: wrapped}
		if err := UnprojectResult(&res, DefaultOutputField); err != nil {
			b.Fatal(err)
		}
	}
}
