package schema

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/funcmcp/funcmcp/metadata"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// marshalled is what Encode must write for s: MarshalJSON's bytes without
// HTML escapes.
func marshalled(t *testing.T, s *jsonschema.Schema) string {
	t.Helper()
	data, err := json.Marshal(s)
	require.NoError(t, err)
	return string(metadata.UnescapeHTML(data))
}

type withBounds struct {
	I8  int8    `json:"i8"`
	U8  uint8   `json:"u8"`
	I16 int16   `json:"i16"`
	U16 uint16  `json:"u16"`
	I32 int32   `json:"i32"`
	U32 uint32  `json:"u32"`
	U   uint    `json:"u"`
	F   float32 `json:"f"`
}

type odd struct {
	Angle string `json:"a<b>&c" jsonschema:"x < y && \u2028 \"quoted\"\n"`
	Tab   string `json:"tab" enum:"a\tb,<c>"`
}

// TestEncodeMatchesMarshalForGeneratedSchemas: for every schema For makes
// of the package's test types, Encode writes exactly what MarshalJSON
// writes, unescaped.
func TestEncodeMatchesMarshalForGeneratedSchemas(t *testing.T) {
	for _, typ := range []reflect.Type{
		reflect.TypeFor[tagged](), reflect.TypeFor[embedding](), reflect.TypeFor[nested](),
		reflect.TypeFor[pointers](), reflect.TypeFor[withMap](), reflect.TypeFor[withSlices](),
		reflect.TypeFor[withTime](), reflect.TypeFor[withEnum](), reflect.TypeFor[withDescription](),
		reflect.TypeFor[treeNode](), reflect.TypeFor[holder](), reflect.TypeFor[withBytes](),
		reflect.TypeFor[withBounds](), reflect.TypeFor[odd](), reflect.TypeFor[*[]tagged](),
		reflect.TypeFor[map[string][]int](), reflect.TypeFor[struct{}](), reflect.TypeFor[any](),
		reflect.TypeFor[[3]string](), reflect.TypeFor[time.Time](),
	} {
		t.Run(typ.String(), func(t *testing.T) {
			s, err := For(typ)
			require.NoError(t, err)
			got, ok := Encode(s)
			require.True(t, ok, "Encode declined a schema For made")
			assert.Equal(t, marshalled(t, s), string(got))
		})
	}
}

func ptr[T any](v T) *T { return &v }

// TestEncodeMatchesMarshalForEveryFieldItWrites: hand-made schemas that set
// every field Encode writes, in their edge cases.
func TestEncodeMatchesMarshalForEveryFieldItWrites(t *testing.T) {
	falseSchema := &jsonschema.Schema{Not: &jsonschema.Schema{}}
	cases := map[string]*jsonschema.Schema{
		"nil":   nil,
		"empty": {},
		"false": falseSchema,
		"all": {
			Type: "object", Ref: "#/$defs/x", Title: "T <&>", Description: "d\u2029\x01\xff",
			Properties: map[string]*jsonschema.Schema{
				"z": {Type: "string", MinLength: ptr(1), MaxLength: ptr(9), Pattern: "^a+$", Format: "email"},
				"a": {Types: []string{"null", "integer"}, Minimum: ptr(-128.0), Maximum: ptr(1e21)},
				"m": {Type: "number", ExclusiveMinimum: ptr(1e-7), ExclusiveMaximum: ptr(0.5)},
				"n": nil,
				"e": {Enum: []any{"x", "<y>"}},
				"b": {Type: "string", ContentEncoding: "base64"},
			},
			PropertyOrder:        []string{"z", "missing", "m"},
			Required:             []string{"z", "a"},
			AdditionalProperties: falseSchema,
			Defs: map[string]*jsonschema.Schema{
				"x":  {Type: "array", Items: &jsonschema.Schema{}, MinItems: ptr(2), MaxItems: ptr(2)},
				"a2": {AnyOf: []*jsonschema.Schema{{Ref: "#"}, {Type: "null"}}},
				"o":  {OneOf: []*jsonschema.Schema{{}, falseSchema}, AllOf: []*jsonschema.Schema{{Type: "string"}}},
			},
		},
		"empty properties": {Type: "object", Properties: map[string]*jsonschema.Schema{}},
		"empty type list":  {Types: []string{}},
		"negative zero":    {Minimum: ptr(math.Copysign(0, -1)), Maximum: ptr(-1e-9)},
		"not":              {Not: &jsonschema.Schema{Type: "null"}},
	}
	for name, s := range cases {
		t.Run(name, func(t *testing.T) {
			got, ok := Encode(s)
			require.True(t, ok)
			assert.Equal(t, marshalled(t, s), string(got))
		})
	}
}

// TestEncodeDeclines: a schema that sets a field Encode does not write, or
// breaks a rule of MarshalJSON, anywhere in its tree, is left to
// encoding/json.
func TestEncodeDeclines(t *testing.T) {
	for name, s := range map[string]*jsonschema.Schema{
		"const":              {Const: ptr[any](1)},
		"extra":              {Extra: map[string]any{"x-a": 1}},
		"nested default":     {Properties: map[string]*jsonschema.Schema{"a": {Default: json.RawMessage(`1`)}}},
		"enum of numbers":    {Enum: []any{1.0}},
		"items array":        {ItemsArray: []*jsonschema.Schema{{}}},
		"type and types":     {Type: "string", Types: []string{"null"}},
		"duplicate in order": {Properties: map[string]*jsonschema.Schema{"a": {}}, PropertyOrder: []string{"a", "a"}},
		"NaN":                {Minimum: ptr(math.NaN())},
		"in a definition":    {Defs: map[string]*jsonschema.Schema{"d": {Examples: []any{"e"}}}},
	} {
		t.Run(name, func(t *testing.T) {
			_, ok := Encode(s)
			assert.False(t, ok)
		})
	}
}

// BenchmarkEncode compares Encode with what it replaces, json.Marshal and
// the removal of its HTML escapes, on the schema of a struct with nested,
// tagged, bounded and recursive fields; both warm (the start-up cost of
// encoding/json's reflection caches is not in it).
func BenchmarkEncode(b *testing.B) {
	s, err := For(reflect.TypeFor[holder]())
	require.NoError(b, err)
	nest, err := For(reflect.TypeFor[nested]())
	require.NoError(b, err)
	s.Properties["nested"] = nest
	b.Run("Encode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := Encode(s); !ok {
				b.Fatal("declined")
			}
		}
	})
	b.Run("json.Marshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			data, err := json.Marshal(s)
			if err != nil {
				b.Fatal(err)
			}
			_ = metadata.UnescapeHTML(data)
		}
	})
}
