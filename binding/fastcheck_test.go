package binding

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fastSchemas are schemas inside the fast check's subset, with values they
// accept.
var fastSchemas = []struct {
	name, schema string
	valid        []string
}{
	{"bounds and integers", `{"type":"object","properties":{"n":{"type":"integer","minimum":0,"maximum":100},` +
		`"x":{"type":"number","exclusiveMinimum":-1.5,"exclusiveMaximum":2},"s":{"type":"string","minLength":2,"maxLength":4}},"required":["n"]}`,
		[]string{`{"n":0}`, `{"n":100,"x":1.99,"s":"ab"}`, `{"n":7,"x":-1.4,"s":"äöüß"}`, ` { "n" : 5 , "other" : [1, {"a":null}] } `}},
	{"enums and const", `{"type":"object","properties":{"c":{"enum":["a","b",1,true,null]},"k":{"const":"x"},"t":{"type":["string","null"]}},"additionalProperties":false}`,
		[]string{`{}`, `{"c":"a","k":"x","t":null}`, `{"c":1,"t":"s"}`, `{"c":true}`, `{"c":null}`}},
	{"refs and arrays", `{"type":"object","$defs":{"node":{"type":"object","properties":{"v":{"type":"integer"},"kids":{"type":"array","items":{"$ref":"#/$defs/node"}}},"required":["v"]},` +
		`"pos":{"type":"number","minimum":0}},"properties":{"root":{"$ref":"#/$defs/node"},"p":{"$ref":"#/$defs/pos","maximum":10},"list":{"type":"array","items":{"$ref":"#/$defs/pos"},"minItems":1,"maxItems":3}}}`,
		[]string{`{"root":{"v":1,"kids":[{"v":2,"kids":[]},{"v":3}]},"p":10,"list":[0,1.5]}`, `{}`}},
	{"additional properties as a schema", `{"type":"object","properties":{"a":true,"b":false},"additionalProperties":{"type":"string","maxLength":3},"minProperties":1,"maxProperties":3}`,
		[]string{`{"a":[1,2]}`, `{"x":"abc","y":"é"}`}},
	{"lenient required", `{"type":"object","required":["a",1]}`, []string{`{"a":1}`}},
}

// TestFastCheckNeverAcceptsWhatTheValidatorRejects compares the check on
// JSON text with the compiled validator over valid values and many values
// mutated from them: it may be unsure, never wrong.
func TestFastCheckNeverAcceptsWhatTheValidatorRejects(t *testing.T) {
	weather, err := os.ReadFile(filepath.Join("..", "function-app-sample", "weather.schema.json"))
	require.NoError(t, err)
	cases := append(fastSchemas[:len(fastSchemas):len(fastSchemas)], struct {
		name, schema string
		valid        []string
	}{"sample weather", string(weather), []string{`{"city":"Oslo","units":"metric","startDate":"2026-03-01",` +
		`"current":{"temperature":-3.5,"feelsLike":-8,"humidity":100,"condition":"snow","wind":{"speed":0,"direction":"NW"}},` +
		`"daily":[{"date":"2026-03-01","high":1,"low":-4.5,"condition":"snow","precipitationChance":0}],"summary":"Oslo: snow"}`}})
	rng := rand.New(rand.NewPCG(11, 12))
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := ParseSchema(OutputSchema, tc.schema)
			require.NoError(t, err)
			require.NotNil(t, s.fast, "the schema is inside the subset")
			checked, agreed := 0, 0
			for _, v := range tc.valid {
				require.NoError(t, s.Validate(mustDecode(t, v)), v)
				assert.True(t, fastValid(s.fast, []byte(v)), "the fast check vouches for %s", v)
				for range 1500 {
					m := mutate(rng, v)
					fast := fastValid(s.fast, []byte(m))
					dv, derr := DecodeJSON([]byte(m))
					slow := derr == nil && s.Validate(dv) == nil
					if fast && !slow {
						t.Errorf("the fast check accepts %s, the validator rejects it", m)
					}
					checked++
					if fast == slow {
						agreed++
					}
				}
			}
			t.Logf("%d mutated values, the fast check decided %d alone", checked, agreed)
		})
	}
}

func mustDecode(t *testing.T, s string) any {
	t.Helper()
	v, err := DecodeJSON([]byte(s))
	require.NoError(t, err)
	return v
}

// mutate changes a JSON text: a value swapped for another kind or a bound,
// a key dropped or added, or a byte of the text changed.
func mutate(rng *rand.Rand, text string) string {
	var v any
	if rng.IntN(5) == 0 || json.Unmarshal([]byte(text), &v) != nil {
		b := []byte(text)
		if len(b) > 0 {
			const chars = "{}[]\",:0123456789.-eE ntfa\\\xff"
			b[rng.IntN(len(b))] = chars[rng.IntN(len(chars))]
		}
		return string(b)
	}
	v = mutateValue(rng, v, 0)
	out, _ := json.Marshal(v)
	if rng.IntN(8) == 0 { // the same key twice
		s := string(out)
		if i := strings.Index(s, `{"`); i >= 0 {
			if j := strings.Index(s[i:], ","); j > 0 {
				return s[:i+1] + s[i+1:i+j] + "," + s[i+1:]
			}
		}
	}
	return string(out)
}

var replacements = []any{
	nil, true, false, 0, -1, 100, 101, 1.5, 2, -1.5, json.Number("1.0"), json.Number("1e2"), json.Number("100.0000000000000000001"),
	"", "a", "ab", "abcde", "x", "snow", "NW", "metric", "Oslo", "\u00e9\u00e9", "2026-03-01",
	[]any{}, []any{1}, map[string]any{}, map[string]any{"v": 1},
}

func mutateValue(rng *rand.Rand, v any, depth int) any {
	if rng.IntN(6) == 0 {
		return replacements[rng.IntN(len(replacements))]
	}
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		switch r := rng.IntN(10); {
		case r == 0 && len(keys) > 0:
			delete(x, keys[rng.IntN(len(keys))])
		case r == 1:
			x[fmt.Sprintf("extra%d", rng.IntN(3))] = replacements[rng.IntN(len(replacements))]
		case len(keys) > 0:
			k := keys[rng.IntN(len(keys))]
			x[k] = mutateValue(rng, x[k], depth+1)
		}
		return x
	case []any:
		switch r := rng.IntN(6); {
		case r == 0 && len(x) > 0:
			return x[1:]
		case r == 1 && len(x) > 0:
			return append(x, x[0], x[0], x[0])
		case len(x) > 0:
			i := rng.IntN(len(x))
			x[i] = mutateValue(rng, x[i], depth+1)
		}
		return x
	}
	return replacements[rng.IntN(len(replacements))]
}

func TestFastCheckLeavesOtherSchemasToTheValidator(t *testing.T) {
	for _, schema := range []string{
		`{"type":"object","properties":{"s":{"type":"string","pattern":"^a"}}}`,
		`{"type":"object","oneOf":[{"required":["a"]},{"required":["b"]}]}`,
		`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object"}`,
		`{"type":"object","properties":{"a":{"$ref":"#"}}}`,
		`{"type":"object","properties":{"e":{"enum":[{"a":1}]}}}`,
		`{"type":"object","properties":{"n":{"type":"number","multipleOf":2}}}`,
	} {
		s, err := ParseSchema(OutputSchema, schema)
		require.NoError(t, err, schema)
		assert.Nil(t, s.fast, schema)
		require.NoError(t, s.ValidateText([]byte(`{"a":{}}`)), schema)
	}
}

func TestValidateTextReportsProblems(t *testing.T) {
	s, err := ParseSchema(OutputSchema, fastSchemas[0].schema)
	require.NoError(t, err)
	require.NoError(t, s.ValidateText([]byte(`{"n":3}`)))
	err = s.ValidateText([]byte(`{"n":-1}`))
	var ve *ValidationError
	require.ErrorAs(t, err, &ve)
	assert.Equal(t, "/n", ve.Problems[0].InstanceLocation)
	require.ErrorAs(t, s.ValidateText([]byte(`{"n":`)), &ve)
}

// FuzzFastCheck checks, on any text, that the check on JSON text never
// vouches for a value the compiled validator rejects.
func FuzzFastCheck(f *testing.F) {
	var schemas []*Schema
	for _, tc := range fastSchemas {
		s, err := ParseSchema(OutputSchema, tc.schema)
		require.NoError(f, err)
		schemas = append(schemas, s)
		for _, v := range tc.valid {
			f.Add(uint8(len(schemas)-1), []byte(v))
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		s := schemas[int(which)%len(schemas)]
		if !fastValid(s.fast, data) {
			return
		}
		v, err := DecodeJSON(data)
		require.NoError(t, err, "the fast check accepts text that is not JSON: %q", data)
		require.NoError(t, s.Validate(v), "the fast check accepts %q", data)
	})
}
