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
