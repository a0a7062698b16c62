package tests

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"image/png"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/binding"
)

// sampleTool is one tool of function-app-sample, how the clients call it and
// what must come back.
type sampleTool struct {
	name string
	args map[string]any
	// inspectorArgs are the same arguments as --tool-arg key=value pairs.
	inspectorArgs []string
	// hasOutputSchema: the tool advertises an outputSchema and returns
	// structuredContent.
	hasOutputSchema bool
	// outputField is the field a non-object output is wrapped in for
	// clients before MCP 2026-07-28 ("" for object outputs).
	outputField string
	// checkStructured checks structuredContent (decoded JSON).
	checkStructured func(t *testing.T, sc map[string]any)
	// checkContent checks the content blocks (decoded JSON objects).
	checkContent func(t *testing.T, content []map[string]any)
	// refused, when not "", says the call is refused with a JSON-RPC
	// error (-32600) whose message contains it: the tool requires a scope
	// and funchost, without FUNCMCP_AUTH_ISSUER, authenticates no caller.
	refused string
}

// sampleTools is every tool of the sample app; each client calls each one.
var sampleTools = []sampleTool{
	{
		name:            "get_weather",
		args:            map[string]any{"city": "Oslo", "units": "metric", "days": 3, "date": "2026-05-17"},
		inspectorArgs:   []string{"city=Oslo", "units=metric", "days=3", "date=2026-05-17"},
		hasOutputSchema: true,
		checkStructured: func(t *testing.T, sc map[string]any) {
			assert.Equal(t, "Oslo", sc["city"])
			assert.Equal(t, "metric", sc["units"])
			assert.Equal(t, "2026-05-17", sc["startDate"])
			assert.Len(t, sc["daily"], 3)
		},
	},
	{
		name:            "mortgage_payment",
		args:            map[string]any{"principal": 350000, "annual_rate_percent": 4.5, "years": 30},
		inspectorArgs:   []string{"principal=350000", "annual_rate_percent=4.5", "years=30"},
		hasOutputSchema: true,
		checkStructured: func(t *testing.T, sc map[string]any) {
			assert.InDelta(t, 1773.40, sc["monthly_payment"], 0.001)
			assert.EqualValues(t, 360, sc["months"])
			assert.Len(t, sc["schedule"], 30)
		},
	},
	{
		name:            "list_holidays",
		args:            map[string]any{"country": "NO", "year": 2026},
		inspectorArgs:   []string{"country=NO", "year=2026"},
		hasOutputSchema: true,
		outputField:     "result",
		checkStructured: func(t *testing.T, sc map[string]any) {
			require.Contains(t, sc, "result", "a slice result is wrapped as {\"result\": [...]}")
			list, ok := sc["result"].([]any)
			require.True(t, ok, "result is an array: %v", sc["result"])
			require.Len(t, list, 12)
			assert.Equal(t, map[string]any{"date": "2026-05-17", "weekday": "Sunday", "name": "Constitution Day", "local_name": "Grunnlovsdag"}, list[7])
		},
	},
	{
		name:            "primes",
		args:            map[string]any{"from": 10, "to": 50},
		inspectorArgs:   []string{"from=10", "to=50"},
		hasOutputSchema: true,
		outputField:     "primes",
		checkStructured: func(t *testing.T, sc map[string]any) {
			assert.Equal(t, []any{11.0, 13.0, 17.0, 19.0, 23.0, 29.0, 31.0, 37.0, 41.0, 43.0, 47.0}, sc["primes"])
		},
	},
	{
		// An explicit array output schema with a $ref (SEP-2106).
		name:            "fibonacci",
		args:            map[string]any{"count": 10},
		inspectorArgs:   []string{"count=10"},
		hasOutputSchema: true,
		outputField:     "result",
		checkStructured: func(t *testing.T, sc map[string]any) {
			assert.Equal(t, []any{0.0, 1.0, 1.0, 2.0, 3.0, 5.0, 8.0, 13.0, 21.0, 34.0}, sc["result"])
		},
	},
	{
		// Long-running with many samples; here small (progress is checked in progress_test.go).
		name:            "estimate_pi",
		args:            map[string]any{"samples": 100000, "batches": 4},
		inspectorArgs:   []string{"samples=100000", "batches=4"},
		hasOutputSchema: true,
		checkStructured: func(t *testing.T, sc map[string]any) {
			assert.EqualValues(t, 100000, sc["samples"])
			assert.EqualValues(t, 4, sc["batches"])
			assert.InDelta(t, 3.14, sc["estimate"], 0.05)
		},
	},
	{
		// 20 seconds by default, minutes with duration_seconds as a task;
		// here one second, synchronously for clients without tasks.
		name:            "simulate_epidemic",
		args:            map[string]any{"population": 10000, "days": 60, "duration_seconds": 1, "seed": 1},
		inspectorArgs:   []string{"population=10000", "days=60", "duration_seconds=1", "seed=1"},
		hasOutputSchema: true,
		checkStructured: func(t *testing.T, sc map[string]any) {
			assert.EqualValues(t, 10000, sc["population"])
			assert.EqualValues(t, 60, sc["days"])
			assert.Len(t, sc["weekly"], 9)
			final, ok := sc["final"].(map[string]any)
			require.True(t, ok, "final is an object: %v", sc["final"])
			assert.EqualValues(t, 60, final["day"])
		},
	},
	{
		name:          "to_roman",
		args:          map[string]any{"number": 2026},
		inspectorArgs: []string{"number=2026"},
		checkContent: func(t *testing.T, content []map[string]any) {
			require.Len(t, content, 1)
			assert.Equal(t, map[string]any{"type": "text", "text": "MMXXVI"}, content[0])
		},
	},
	{
		// Asks the user to confirm; clients here declare no elicitation
		// (tests/clientreq_test.go drives the question).
		name:            "book_days_off",
		args:            map[string]any{"country": "US", "from": "2026-07-03", "to": "2026-07-05"},
		inspectorArgs:   []string{"country=US", "from=2026-07-03", "to=2026-07-05"},
		hasOutputSchema: true,
		checkStructured: func(t *testing.T, sc map[string]any) {
			assert.Equal(t, "unconfirmed", sc["status"])
			assert.EqualValues(t, 1, sc["leave_days"])
			assert.Equal(t, []any{"2026-07-04 Independence Day"}, sc["holidays"])
		},
	},
	{
		// No caller identity without FUNCMCP_AUTH_ISSUER (tests/oauth_test.go
		// calls it with one).
		name:            "whoami",
		args:            map[string]any{},
		hasOutputSchema: true,
		checkStructured: func(t *testing.T, sc map[string]any) {
			assert.Equal(t, false, sc["authenticated"])
			assert.Equal(t, "", sc["subject"])
		},
	},
	{
		// It requires a scope: without FUNCMCP_AUTH_ISSUER nothing can grant
		// it, so funchost refuses every call (tests/oauth_test.go calls it
		// with a token that has the scope).
		name:            "caller_claims",
		args:            map[string]any{},
		hasOutputSchema: true,
		refused:         "requires the scope Claims.Read, and this server authenticates no caller",
	},
	{
		// Asks the client's model; without sampling it suggests on its own.
		name:            "suggest_trip",
		args:            map[string]any{"country": "NO", "year": 2026},
		inspectorArgs:   []string{"country=NO", "year=2026"},
		hasOutputSchema: true,
		checkStructured: func(t *testing.T, sc map[string]any) {
			assert.Equal(t, "NO", sc["country"])
			assert.Equal(t, "built-in", sc["source"])
			assert.NotEmpty(t, sc["suggestion"])
			assert.Contains(t, sc, "break")
		},
	},
	{
		name:            "pin_note",
		args:            map[string]any{"text": "Buy milk"},
		inspectorArgs:   []string{"text=Buy milk"},
		hasOutputSchema: true,
		checkStructured: func(t *testing.T, sc map[string]any) {
			assert.Equal(t, "note://pinned", sc["uri"])
			assert.Equal(t, "Buy milk", sc["text"])
			assert.Equal(t, true, sc["announced"], "funchost took the change")
			assert.Equal(t, "sent", sc["delivery"], "a single funchost has no other instance to wait for")
			assert.Greater(t, sc["revision"], float64(0))
		},
	},
	{
		name:          "bar_chart",
		args:          map[string]any{"values": []any{3, 1, 4, 1, 5}, "color": "orange"},
		inspectorArgs: []string{"values=[3,1,4,1,5]", "color=orange"},
		checkContent: func(t *testing.T, content []map[string]any) {
			require.NotEmpty(t, content)
			img := content[0]
			assert.Equal(t, "image", img["type"])
			assert.Equal(t, "image/png", img["mimeType"])
			data, err := base64.StdEncoding.DecodeString(img["data"].(string))
			require.NoError(t, err)
			cfg, err := png.DecodeConfig(bytes.NewReader(data))
			require.NoError(t, err, "the image is a PNG")
			assert.Equal(t, 8+5*(24+8), cfg.Width)
			assert.Equal(t, 120, cfg.Height)
		},
	},
}

// checkSampleResult checks one tools/call result (as JSON) of a sample tool:
// isError false, structuredContent valid against the advertised schema and
// mirrored in a text block, or the tool's own content checks. outputSchema is
// what the client was shown: the object projection for clients before MCP
// 2026-07-28 (then structuredContent must be an object), the natural schema
// for later ones (then a non-object value is wrapped in tool.outputField
// before the tool's own checks, which read the projected form).
func checkSampleResult(t *testing.T, tool sampleTool, outputSchema string, result json.RawMessage) {
	t.Helper()
	var res struct {
		Content           []map[string]any `json:"content"`
		StructuredContent json.RawMessage  `json:"structuredContent"`
		IsError           bool             `json:"isError"`
	}
	require.NoError(t, json.Unmarshal(result, &res), "result: %s", result)
	require.False(t, res.IsError, "result: %s", result)
	if !tool.hasOutputSchema {
		assert.Empty(t, res.StructuredContent, "a tool without output schema returns no structuredContent")
		tool.checkContent(t, res.Content)
		return
	}
	require.NotEmpty(t, res.StructuredContent, "result: %s", result)
	require.NotEmpty(t, outputSchema, "tool %s advertises an output schema", tool.name)
	schema, err := binding.ParseNaturalSchema(outputSchema)
	require.NoError(t, err)
	_, err = schema.ValidateJSON(res.StructuredContent)
	assert.NoError(t, err, "structuredContent validates against the output schema")

	projected := res.StructuredContent
	if _, err := binding.ParseSchema(binding.OutputSchema, outputSchema); err != nil {
		require.NotEmpty(t, tool.outputField, "%s has a natural non-object schema", tool.name)
		projected, err = binding.ProjectValue(res.StructuredContent, tool.outputField)
		require.NoError(t, err)
	}
	var sc map[string]any
	require.NoError(t, json.Unmarshal(projected, &sc), "structuredContent is a JSON object (once projected)")
	tool.checkStructured(t, sc)

	// Older clients read the text block: it holds the same JSON.
	var mirrored bool
	for _, c := range res.Content {
		if c["type"] != "text" {
			continue
		}
		text, _ := c["text"].(string)
		if json.Valid([]byte(text)) {
			assert.JSONEq(t, string(res.StructuredContent), text)
			mirrored = true
		}
	}
	assert.True(t, mirrored, "a text block mirrors structuredContent: %s", result)
}
