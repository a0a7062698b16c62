package binding

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLoadTool(t *testing.T) {
	props := quote(`[{"propertyName":"city","propertyType":"string","isRequired":true},{"propertyName":"days","propertyType":"integer"}]`)
	out := quote(`{"type":"object","properties":{"temp":{"type":"number"}},"required":["temp"]}`)

	t.Run("loaded", func(t *testing.T) {
		b := parseBinding(t, triggerJSON(`"toolProperties":`+props+`,"outputSchema":`+out))
		tool, err := LoadTool(testFunction(b), b, testFile)
		require.NoError(t, err)
		assert.Equal(t, "get_weather", tool.Trigger.ToolName)
		require.NotNil(t, tool.Input)
		assert.Equal(t, `{"type":"object","properties":{"city":{"type":"string","description":""},"days":{"type":"integer","description":""}},"required":["city"]}`, tool.Input.String())
		require.NotNil(t, tool.Output)
		assert.Equal(t, `{"type":"object","properties":{"temp":{"type":"number"}},"required":["temp"]}`, tool.Output.String())
		assert.Equal(t, []string{"city"}, tool.Required)
	})

	t.Run("no output schema", func(t *testing.T) {
		b := parseBinding(t, triggerJSON(""))
		tool, err := LoadTool(testFunction(b), b, testFile)
		require.NoError(t, err)
		assert.NotNil(t, tool.Input)
		assert.Nil(t, tool.Output)
		assert.Empty(t, tool.Required)
	})

	t.Run("both schemas bad", func(t *testing.T) {
		b := parseBinding(t, triggerJSON(`"useWorkerInputSchema":true,"outputSchema":"{\"type\":\"array\"}"`))
		tool, err := LoadTool(testFunction(b), b, testFile)
		assert.Nil(t, tool)
		require.Error(t, err)
		var joined interface{ Unwrap() []error }
		require.ErrorAs(t, err, &joined)
		errs := joined.Unwrap()
		require.Len(t, errs, 2)
		for _, e := range errs {
			var te *ToolError
			require.ErrorAs(t, e, &te)
			assert.Equal(t, "get_weather", te.Tool)
			assert.Equal(t, testFile, te.File)
		}
		assert.ErrorIs(t, errs[0], ErrMissingWorkerInputSchema)
		var se *ShapeError
		require.ErrorAs(t, errs[1], &se)
		assert.Equal(t, OutputSchema, se.Kind)
		assert.Equal(t, RuleTypeObject, se.Rule)
	})

	t.Run("trigger errors stop the load", func(t *testing.T) {
		b := parseBinding(t, `{"type":"mcpToolTrigger","toolName":"t","outputSchema":"{"}`)
		tool, err := LoadTool(testFunction(b), b, testFile)
		assert.Nil(t, tool)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "description is missing")
		var se *SyntaxError
		assert.False(t, errors.As(err, &se), "schemas are not checked when the trigger is broken")
	})
}

func TestMissingArguments(t *testing.T) {
	tool := &Tool{Required: []string{"a", "b", "c"}}
	tests := []struct {
		name string
		args map[string]json.RawMessage
		want []string
	}{
		{name: "nil args", args: nil, want: []string{"a", "b", "c"}},
		{name: "all present", args: map[string]json.RawMessage{"a": json.RawMessage(`1`), "b": json.RawMessage(`"x"`), "c": json.RawMessage(`{}`)}},
		{name: "falsy values are present", args: map[string]json.RawMessage{"a": json.RawMessage(`""`), "b": json.RawMessage(`0`), "c": json.RawMessage(`false`)}},
		{name: "empty containers are present", args: map[string]json.RawMessage{"a": json.RawMessage(`[]`), "b": json.RawMessage(`{}`), "c": json.RawMessage(`[1]`)}},
		{name: "null is missing", args: map[string]json.RawMessage{"a": json.RawMessage(`null`), "b": json.RawMessage(` null `), "c": json.RawMessage(`true`)}, want: []string{"a", "b"}},
		{name: "some absent", args: map[string]json.RawMessage{"b": json.RawMessage(`1`), "z": json.RawMessage(`1`)}, want: []string{"a", "c"}},
		{name: "names are case-sensitive", args: map[string]json.RawMessage{"A": json.RawMessage(`1`), "b": json.RawMessage(`1`), "c": json.RawMessage(`1`)}, want: []string{"a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tool.MissingArguments(tt.args))
		})
	}
	assert.Nil(t, (&Tool{}).MissingArguments(nil), "no required names")
}
