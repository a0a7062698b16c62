package binding

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/metadata"
)

// ruleFunction is a function with one tool trigger carrying the given output
// schema ("" for none).
func ruleFunction(t *testing.T, tool, outputSchema string) *metadata.Function {
	t.Helper()
	b := map[string]any{"type": "mcpToolTrigger", "direction": "in", "name": "context", "toolName": tool, "description": "d", "toolProperties": "[]"}
	if outputSchema != "" {
		b["outputSchema"] = outputSchema
	}
	data, err := json.Marshal(map[string]any{"bindings": []any{b}})
	require.NoError(t, err)
	fn, err := metadata.ParseFunction("f", "f/function.json", data)
	require.NoError(t, err)
	return fn
}

// TestLoadToolRules: the rules LoadTool applies before compiling, each with
// the message both the worker SDK and funchost report.
func TestLoadToolRules(t *testing.T) {
	deep := `{"type":"object","properties":{"x":` + strings.Repeat(`{"type":"array","items":`, 70) + `{}` + strings.Repeat("}", 70) + `}}`
	for _, tc := range []struct {
		name, tool, schema string
		limits             Limits
		message            string
	}{
		{"name with a space", "get weather", "", Limits{}, `tool name "get weather" must be 1 to 128 characters of A-Z, a-z, 0-9, '_', '.' and '-'`},
		{"name too long", strings.Repeat("a", 129), "", Limits{}, "must be 1 to 128 characters"},
		{"name with a slash", "tools/x", "", Limits{}, `tool name "tools/x" must be`},
		{"invalid UTF-8 in a name is not echoed", "a\xffb", "", Limits{}, "tool name \"a\uFFFDb\" must be"},
		{"schema too large", "big", `{"type":"object","description":"` + strings.Repeat("x", 2100) + `"}`, Limits{SchemaBytes: 2048}, "output schema is 2134 bytes, more than the limit of 2048"},
		{"schema too large by default", "big", `{"type":"object","description":"` + strings.Repeat("x", DefaultMaxSchemaBytes) + `"}`, Limits{}, "more than the limit of 262144"},
		{"schema too deep", "deep", deep, Limits{}, "output schema nests 73 levels, more than the limit of 64"},
		{"unresolvable $ref", "badref", `{"type":"object","properties":{"a":{"$ref":"#/$defs/missing"}}}`, Limits{}, `output schema: $ref "#/$defs/missing" at #/properties/a does not resolve`},
		{"unknown anchor", "badanchor", `{"type":"object","properties":{"a":{"$ref":"#nowhere"}}}`, Limits{}, `output schema: $ref "#nowhere" at #/properties/a names no $anchor of the schema`},
		{"bad fragment", "badfrag", `{"type":"object","properties":{"a":{"$ref":"#%zz"}}}`, Limits{}, `output schema: $ref "#%zz" at #/properties/a is not a valid fragment`},
		{"$ref cycle", "refcycle", `{"type":"object","$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}},"properties":{"x":{"$ref":"#/$defs/a"}}}`, Limits{}, "output schema: $ref cycle that never moves into the instance: #/$defs/a → #/$defs/b → #/$defs/a"},
		{"allOf cycle", "allofcycle", `{"type":"object","$defs":{"a":{"allOf":[{"$ref":"#/$defs/a"}]}}}`, Limits{}, "output schema: $ref cycle that never moves into the instance: #/$defs/a/allOf/0 → #/$defs/a → #/$defs/a/allOf/0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &Compiler{Limits: tc.limits}
			_, err := c.LoadTool(ruleFunction(t, tc.tool, tc.schema), nil, "")
			require.Error(t, err, "a nil binding is refused")
			fn := ruleFunction(t, tc.tool, tc.schema)
			_, err = c.LoadTool(fn, fn.Bindings[0], "f/function.json")
			require.Error(t, err)
			var te *ToolError
			require.ErrorAs(t, err, &te)
			assert.Equal(t, "f", te.Function)
			assert.Equal(t, "f/function.json", te.File)
			assert.Contains(t, err.Error(), tc.message)
		})
	}

	// What the rules allow: recursion through properties/items, $anchor.
	for _, schema := range []string{
		`{"type":"object","properties":{"children":{"type":"array","items":{"$ref":"#"}}}}`,
		`{"type":"object","properties":{"a":{"$ref":"#node"}},"$defs":{"n":{"$anchor":"node","type":"string"}}}`,
		// Not schemas: a $ref member inside default, const, enum or an
		// annotation is data.
		`{"type":"object","properties":{"a":{"default":{"$ref":"#/nowhere"},"enum":[{"$ref":"#/x"}]}},"x-note":{"$ref":"#/nope"}}`,
		// A subschema with its own $id resolves against its own base.
		`{"type":"object","properties":{"a":{"$ref":"#/$defs/ext"}},"$defs":{"ext":{"$id":"https://example.com/ext","$ref":"#/$defs/inner","$defs":{"inner":{"type":"string"}}}}}`,
	} {
		fn := ruleFunction(t, "ok.tool-1_x", schema)
		_, err := LoadTool(fn, fn.Bindings[0], "")
		assert.NoError(t, err, schema)
	}
}

func TestSchemaCompileBudget(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	_, err := withinBudget("slow", "slow/function.json", "slow_tool", 50*time.Millisecond, func() (*Tool, error) {
		<-release // a compilation that does not end in time
		return nil, nil
	})
	require.Error(t, err)
	var te *ToolError
	require.ErrorAs(t, err, &te)
	assert.Equal(t, "slow", te.Function)
	assert.Equal(t, "slow_tool", te.Tool)
	assert.Contains(t, err.Error(), "compiling the schemas took longer than the budget of 50ms")

	tool, err := withinBudget("fast", "", "fast_tool", time.Minute, func() (*Tool, error) { return &Tool{}, nil })
	require.NoError(t, err)
	assert.NotNil(t, tool)
}

// FuzzCheckRefs runs the $ref checks on arbitrary schema documents: they
// must end (no cycle is followed forever) and never panic.
func FuzzCheckRefs(f *testing.F) {
	for _, seed := range []string{
		`{"type":"object","$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}}}`,
		`{"type":"object","properties":{"c":{"type":"array","items":{"$ref":"#"}}}}`,
		`{"$defs":{"a":{"allOf":[{"$ref":"#/$defs/a"}]}}}`,
		`{"$ref":"#a","$defs":{"x":{"$anchor":"a","not":{"$ref":"#/$defs/x"}}}}`,
		`{"$ref":"#/$defs/~1~0%25"}`, `{"$ref":"#%zz"}`, `[]`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		var doc any
		if json.Unmarshal([]byte(text), &doc) != nil {
			return
		}
		_ = checkRefs(doc)
	})
}
