package binding

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/metadata"
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

func TestLoadToolNaturalOutputSchema(t *testing.T) {
	natural := `{"type":"array","items":{"$ref":"#/$defs/p"},"$defs":{"p":{"type":"integer"}}}`
	projected := `{"type":"object","properties":{"primes":{"type":"array","items":{"$ref":"#/properties/primes/$defs/p"},"$defs":{"p":{"type":"integer"}}}},"required":["primes"]}`
	load := func(t *testing.T, extra string) (*Tool, error) {
		t.Helper()
		b := parseBinding(t, triggerJSON(extra))
		return LoadTool(testFunction(b), b, testFile)
	}

	t.Run("wrapped", func(t *testing.T) {
		tool, err := load(t, `"outputSchema":`+quote(projected)+`,"naturalOutputSchema":`+quote(natural))
		require.NoError(t, err)
		require.NotNil(t, tool.Natural)
		assert.Equal(t, natural, tool.Natural.String())
		assert.Equal(t, "primes", tool.OutputField, "the field is read from the projection")
		for _, v := range []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"} {
			assert.Equal(t, projected, string(tool.AdvertisedOutputSchema(v)), v)
		}
		assert.Equal(t, natural, string(tool.AdvertisedOutputSchema("2026-07-28")))

		res := &metadata.CallToolResult{Content: []json.RawMessage{metadata.TextContent(`{"primes":[2]}`)}, StructuredContent: json.RawMessage(`{"primes":[2]}`)}
		require.NoError(t, tool.ResultFor("2025-11-25", res))
		assert.Equal(t, `{"primes":[2]}`, string(res.StructuredContent), "legacy clients get the projected value")
		require.NoError(t, tool.ResultFor("2026-07-28", res))
		assert.Equal(t, `[2]`, string(res.StructuredContent))
		assert.Equal(t, []json.RawMessage{metadata.TextContent(`[2]`)}, res.Content)
	})

	t.Run("object or null", func(t *testing.T) {
		tool, err := load(t, `"outputSchema":`+quote(`{"type":"object"}`)+`,"naturalOutputSchema":`+quote(`{"type":["object","null"]}`))
		require.NoError(t, err)
		assert.Empty(t, tool.OutputField, "object values are never wrapped")
		assert.Equal(t, `{"type":["object","null"]}`, string(tool.AdvertisedOutputSchema("2026-07-28")))
		assert.Equal(t, `{"type":"object"}`, string(tool.AdvertisedOutputSchema("2025-06-18")))
		res := &metadata.CallToolResult{StructuredContent: json.RawMessage(`{"a":1}`)}
		require.NoError(t, tool.ResultFor("2026-07-28", res))
		assert.Equal(t, `{"a":1}`, string(res.StructuredContent))
	})

	t.Run("boolean natural schema", func(t *testing.T) {
		tool, err := load(t, `"outputSchema":`+quote(`{"type":"object","properties":{"result":true},"required":["result"]}`)+`,"naturalOutputSchema":"true"`)
		require.NoError(t, err)
		assert.Equal(t, "result", tool.OutputField)
		assert.Equal(t, `{}`, string(tool.AdvertisedOutputSchema("2026-07-28")), "the wire wants an object")
	})

	t.Run("without output schema", func(t *testing.T) {
		tool, err := load(t, `"naturalOutputSchema":`+quote(natural))
		assert.Nil(t, tool)
		assert.ErrorIs(t, err, ErrNaturalWithoutOutputSchema)
		var te *ToolError
		require.ErrorAs(t, err, &te)
		assert.Equal(t, testFile, te.File)
	})

	t.Run("not the projection", func(t *testing.T) {
		tool, err := load(t, `"outputSchema":`+quote(`{"type":"object","properties":{"primes":{"type":"array"}},"required":["primes"]}`)+`,"naturalOutputSchema":`+quote(natural))
		assert.Nil(t, tool)
		var npe *NotProjectionError
		require.ErrorAs(t, err, &npe)
		assert.JSONEq(t, projected, string(npe.Want))
		assert.Contains(t, err.Error(), `function "get_weather", tool "get_weather"`)
	})

	t.Run("natural schema invalid", func(t *testing.T) {
		tool, err := load(t, `"outputSchema":`+quote(projected)+`,"naturalOutputSchema":"[1]"`)
		assert.Nil(t, tool)
		var se *ShapeError
		require.ErrorAs(t, err, &se)
		assert.Equal(t, RuleSchemaRoot, se.Rule)
		assert.Contains(t, err.Error(), "naturalOutputSchema")
	})

	t.Run("not a string", func(t *testing.T) {
		tool, err := load(t, `"outputSchema":`+quote(projected)+`,"naturalOutputSchema":{"type":"array"}`)
		assert.Nil(t, tool)
		assert.ErrorContains(t, err, "naturalOutputSchema must be a string")
	})
}

func TestCheckInput(t *testing.T) {
	fn, err := metadata.NewToolFunction("weather", &metadata.ToolOptions{
		ToolName: "weather",
		InputSchema: `{"type":"object","properties":{"city":{"type":"string"},"units":{"enum":["metric","imperial"]},` +
			`"days":{"type":"integer","minimum":1}},"required":["city"],"additionalProperties":false}`,
		Properties: []metadata.ToolProperty{},
	})
	require.NoError(t, err)
	fn.Bindings[0].SetBool(metadata.KeyUseWorkerInputSchema, true)
	tool, err := LoadTool(fn, fn.Bindings[0], "")
	require.NoError(t, err)

	strict := metadata.OutputSettings{}
	for _, tc := range []struct{ args, message string }{
		{`{"city":"Oslo"}`, ""},
		{`{"city":"Oslo","units":"metric","days":3}`, ""},
		{`{"city":"Oslo","units":"kelvin"}`, "Input of tool 'weather' does not match its input schema: at '/units' (/properties/units/enum): value must be one of 'metric', 'imperial'"},
		{`{"city":"Oslo","days":0}`, "at '/days' (/properties/days/minimum): minimum: got 0, want 1"},
		{`{"city":"Oslo","bogus":1}`, "at '' (/additionalProperties): additional properties 'bogus' not allowed"},
		{``, "at '' (/required): missing property 'city'"},
		{`null`, "at '' (/required): missing property 'city'"},
		{`[1]`, "got array, want object"},
	} {
		issue := tool.CheckInput(json.RawMessage(tc.args), strict)
		if tc.message == "" {
			assert.Nil(t, issue, tc.args)
			continue
		}
		require.NotNil(t, issue, tc.args)
		assert.Equal(t, metadata.ValidationStrict, issue.Mode)
		assert.Contains(t, issue.Error(), tc.message)
		var ve *ValidationError
		assert.ErrorAs(t, issue, &ve)
	}

	bad := json.RawMessage(`{"city":1}`)
	warn := tool.CheckInput(bad, metadata.OutputSettings{InputValidation: metadata.ValidationWarn})
	require.NotNil(t, warn)
	assert.True(t, strings.HasSuffix(warn.LogMessage(), "(called anyway: inputValidation is warn)"))
	assert.Nil(t, tool.CheckInput(bad, metadata.OutputSettings{InputValidation: metadata.ValidationOff}))

	// The tool's own setting wins over the app's.
	fn.Bindings[0].SetString(metadata.KeyInputValidation, "off")
	own, err := LoadTool(fn, fn.Bindings[0], "")
	require.NoError(t, err)
	assert.Equal(t, metadata.ValidationOff, own.Trigger.InputValidation)
	assert.Nil(t, own.CheckInput(bad, strict))
	fn.Bindings[0].SetString(metadata.KeyInputValidation, "sometimes")
	_, err = LoadTool(fn, fn.Bindings[0], "")
	assert.ErrorContains(t, err, `inputValidation: "sometimes" is not one of strict, warn, off`)
}
