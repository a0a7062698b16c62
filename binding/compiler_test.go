package binding

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/metadata"
)

func TestCompilerSharesSchemas(t *testing.T) {
	var c Compiler
	const text = `{"type":"object","properties":{"temp":{"type":"number"}},"required":["temp"]}`
	var wg sync.WaitGroup
	got := make([]*Schema, 8)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := c.ParseSchema(OutputSchema, text)
			assert.NoError(t, err)
			got[i] = s
		}()
	}
	wg.Wait()
	for _, s := range got {
		assert.Same(t, got[0], s, "the same text compiles once")
	}
	in, err := c.ParseSchema(InputSchema, text)
	require.NoError(t, err)
	assert.NotSame(t, got[0], in, "input and output schemas are kept apart")
	assert.Equal(t, InputSchema, in.Kind())
	assert.Equal(t, 2, c.Len())

	// Errors are remembered too, with their type.
	for range 2 {
		_, err := c.ParseSchema(OutputSchema, `{"type":"string"}`)
		var se *ShapeError
		assert.True(t, errors.As(err, &se), "got %v", err)
	}
	assert.Equal(t, 3, c.Len())
}

func TestCompilerLoadTool(t *testing.T) {
	var c Compiler
	var tools []*Tool
	for i := range 3 {
		name := fmt.Sprintf("tool_%d", i)
		fn, err := metadata.NewToolFunction(name, &metadata.ToolOptions{
			ToolName:     name,
			Properties:   []metadata.ToolProperty{{PropertyName: "city", PropertyType: "string", IsRequired: true}},
			OutputSchema: `{"type":"object"}`,
		})
		require.NoError(t, err)
		tool, err := c.LoadTool(fn, fn.Bindings[0], name+"/function.json")
		require.NoError(t, err)
		tools = append(tools, tool)
	}
	assert.Same(t, tools[0].Output, tools[2].Output)
	assert.Same(t, tools[0].Input, tools[1].Input)
	assert.Equal(t, []string{"city"}, tools[2].Required)
	assert.Equal(t, 2, c.Len())

	// A nil compiler still works, without sharing.
	var nc *Compiler
	a, err := nc.ParseSchema(OutputSchema, `{"type":"object"}`)
	require.NoError(t, err)
	b, err := nc.ParseSchema(OutputSchema, `{"type":"object"}`)
	require.NoError(t, err)
	assert.NotSame(t, a, b)
}

func TestCompilerDeferKeepsLoadErrors(t *testing.T) {
	for _, text := range []string{
		`{"type":"object","properties":{"a":{"type":"string","minLength":-1}}}`,
		`{"type":"object","properties":{"a":{"$ref":"#/$defs/missing"}}}`,
		`{"type":"object","properties":{"a":{"type":"string","pattern":"("}}}`,
		`{"type":"object","required":["a","a"]}`,
		`{"type":"array"}`,
	} {
		t.Run(text, func(t *testing.T) {
			_, eager := ParseSchema(OutputSchema, text)
			require.Error(t, eager)
			_, deferred := (&Compiler{Defer: true}).ParseSchema(OutputSchema, text)
			assert.Equal(t, eager, deferred)
		})
	}
}

func TestCompilerDeferCompilesWhenNeeded(t *testing.T) {
	const text = `{"type":"object","properties":{"n":{"type":"integer","minimum":0}},"required":["n"],"additionalProperties":false}`
	c := &Compiler{Defer: true}
	before := CompileCount()
	s, err := c.ParseSchema(OutputSchema, text)
	require.NoError(t, err)
	assert.Equal(t, before, CompileCount(), "a vouched schema is not compiled at load")

	assert.NoError(t, s.ValidateText([]byte(`{"n":3}`)))
	assert.Equal(t, before, CompileCount(), "a value the check on JSON text accepts needs no compiled schema")

	eager, err := ParseSchema(OutputSchema, text)
	require.NoError(t, err)
	bad := []byte(`{"n":-1,"x":true}`)
	assert.Equal(t, eager.ValidateText(bad), s.ValidateText(bad), "the same verdict and messages as a schema compiled at load")
	assert.Equal(t, before+2, CompileCount(), "the eager schema and the deferred one, once")
	assert.Equal(t, 0, c.CompileDeferred(), "already compiled")

	other, err := c.ParseSchema(InputSchema, `{"type":"object","properties":{"city":{"type":"string"}}}`)
	require.NoError(t, err)
	assert.Equal(t, 1, c.CompileDeferred())
	assert.Equal(t, before+3, CompileCount())
	assert.Error(t, other.ValidateText([]byte(`{"city":1}`)))
	assert.Equal(t, before+3, CompileCount(), "compiled once")
}

func TestCompilerDeferLeavesOtherSchemasEager(t *testing.T) {
	// A pattern takes the compiler's metaschema path, so it is compiled now.
	c := &Compiler{Defer: true}
	before := CompileCount()
	_, err := c.ParseSchema(OutputSchema, `{"type":"object","properties":{"a":{"type":"string","pattern":"^a"}}}`)
	require.NoError(t, err)
	assert.Equal(t, before+1, CompileCount())
	assert.Equal(t, 0, c.CompileDeferred())
}

// TestCompilerSharesAnObjectOutputSchema: an object output schema is parsed
// twice by the worker (its natural schema, when the tool is registered,
// then the outputSchema read back from function.json) and by funchost
// when both keys hold it. Both parses give the same schema, compiled once.
func TestCompilerSharesAnObjectOutputSchema(t *testing.T) {
	// A pattern takes the compiler's metaschema path: compiled at load.
	const text = `{"type":"object","properties":{"a":{"type":"string","pattern":"^a"}},"required":["a"]}`
	for _, naturalFirst := range []bool{true, false} {
		c := &Compiler{Defer: true}
		before := CompileCount()
		first, second := c.ParseNaturalSchema, func(s string) (*Schema, error) { return c.ParseSchema(OutputSchema, s) }
		if !naturalFirst {
			first, second = second, first
		}
		s1, err := first(text)
		require.NoError(t, err)
		s2, err := second(text)
		require.NoError(t, err)
		assert.Same(t, s1, s2, "naturalFirst=%v", naturalFirst)
		assert.Equal(t, before+1, CompileCount(), "naturalFirst=%v: compiled once", naturalFirst)
	}
}

// TestCompilerKeepsTwinsApartWhereTheyDiffer: where the two parses differ
// (ParseSchema drops non-string "required" entries and applies the shape
// rules; ParseNaturalSchema takes any root), each keeps its own result.
func TestCompilerKeepsTwinsApartWhereTheyDiffer(t *testing.T) {
	c := &Compiler{}
	const lenient = `{"type":"object","properties":{"a":{"type":"string"}},"required":["a",1]}`
	plain, err := c.ParseSchema(OutputSchema, lenient)
	require.NoError(t, err)
	_, err = c.ParseNaturalSchema(lenient)
	require.Error(t, err, "the metaschema refuses a non-string required entry")
	assert.NoError(t, plain.Validate(map[string]any{"a": "x"}))

	for _, text := range []string{`{"type":"array"}`, `{"properties":{}}`, `{"type":"string"}`, `true`} {
		_, err := c.ParseNaturalSchema(text)
		require.NoError(t, err, text)
		_, plainErr := c.ParseSchema(OutputSchema, text)
		_, want := ParseSchema(OutputSchema, text)
		require.Error(t, want, text)
		assert.Equal(t, want, plainErr, text)
	}
}

// TestCompilerShares: a compiler serves a loader whose limits are its own
// once the defaults are filled in on both sides, and only if it defers
// compiling as the loader does.
func TestCompilerShares(t *testing.T) {
	defaults := Limits{SchemaBytes: DefaultMaxSchemaBytes, SchemaDepth: DefaultMaxSchemaDepth, CompileTime: DefaultSchemaCompileTime}
	c := &Compiler{Defer: true}
	assert.True(t, c.Shares(Limits{}))
	assert.True(t, c.Shares(defaults), "zero limits are the defaults")
	assert.False(t, c.Shares(Limits{SchemaDepth: 3}))
	assert.False(t, (&Compiler{}).Shares(Limits{}), "a compiler that compiles at once")
	assert.False(t, (*Compiler)(nil).Shares(Limits{}))
	assert.True(t, (&Compiler{Defer: true, Limits: Limits{SchemaDepth: 3}}).Shares(Limits{SchemaDepth: 3}))
}
