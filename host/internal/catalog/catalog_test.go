package catalog

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/binding"
	"github.com/funcmcp/funcmcp/host/internal/jsonrpc"
	"github.com/funcmcp/funcmcp/metadata"
)

// testLimits returns the host's default limits, with the non-zero fields
// of over.
func testLimits(over *Limits) *Limits {
	l := &Limits{FileBytes: metadata.DefaultMaxFunctionFileBytes, ArgumentBytes: 1 << 20, ArgumentDepth: 64, ArgumentKeys: 10000}
	if over != nil {
		if over.FileBytes != 0 {
			l.FileBytes = over.FileBytes
		}
		l.Schema = over.Schema
	}
	return l
}

// writeFile writes root/name, creating folders.
func writeFile(t testing.TB, root, name, text string) {
	t.Helper()
	p := filepath.Join(root, name)
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
}

// writeTool writes a function folder for one tool with the worker SDK's layout.
func writeTool(t testing.TB, root, function string, opts *metadata.ToolOptions) {
	t.Helper()
	fn, err := metadata.NewToolFunction(function, opts)
	require.NoError(t, err)
	require.NoError(t, metadata.WriteFunction(root, fn))
}

func load(t *testing.T, root string) *Catalog {
	t.Helper()
	c, err := Load(root, testLimits(nil), nil)
	require.NoError(t, err)
	return c
}

const weatherSchema = `{"type":"object","properties":{"city":{"type":"string"},"temp":{"type":"number"}},"required":["city","temp"]}`

func TestLoadRecordsEveryFunction(t *testing.T) {
	root := t.TempDir()
	writeTool(t, root, "b_good", &metadata.ToolOptions{ToolName: "zeta", Description: "Last by name.", OutputSchema: weatherSchema})
	writeTool(t, root, "c_good", &metadata.ToolOptions{ToolName: "Alpha", Description: "First by name."})
	writeTool(t, root, "d_dup", &metadata.ToolOptions{ToolName: "ALPHA", Description: "Duplicate."})
	writeFile(t, root, "a_two/function.json", `{"bindings":[`+
		`{"type":"mcpToolTrigger","direction":"in","name":"context","toolName":"one"},`+
		`{"type":"mcpToolTrigger","direction":"in","name":"other","toolName":"two"}]}`)
	writeFile(t, root, "e_notjson/function.json", `{"bindings":`)
	writeFile(t, root, "f_http/function.json", `{"bindings":[{"type":"httpTrigger","direction":"in","name":"req"},{"type":"http","direction":"out","name":"res"}]}`)
	writeFile(t, root, "g_none/function.json", `{"bindings":[{"type":"blob","direction":"in","name":"b"}]}`)
	c := load(t, root)

	var names []string
	for _, tool := range c.Tools() {
		names = append(names, tool.Name)
	}
	assert.Equal(t, []string{"Alpha", "zeta"}, names, "served tools, by name")
	fns := c.Functions()
	require.Len(t, fns, 7)
	assert.Equal(t, FunctionStatus{Name: "b_good", Trigger: "mcpToolTrigger", Tool: "zeta", Served: true}, fns[1])
	assert.Equal(t, FunctionStatus{Name: "f_http", Trigger: "httpTrigger"}, fns[5])
	assert.Equal(t, FunctionStatus{Name: "g_none"}, fns[6])
	require.Len(t, c.Failures(), 3)
	for i, want := range []string{
		"the function has 2 mcpToolTrigger bindings",
		`tool name "ALPHA" is already registered by function "c_good" (tool names are case-insensitive)`,
		"parsing: unexpected end of JSON input",
	} {
		assert.Contains(t, c.Failures()[i].Error(), want)
	}
	var te *binding.ToolError
	require.True(t, errors.As(c.Failures()[1], &te))
	assert.Equal(t, "d_dup", te.Function)
	fns[0].Name = "changed"
	assert.Equal(t, "a_two", c.Functions()[0].Name, "Functions returns a copy")
}

func TestLookupIsExact(t *testing.T) {
	root := t.TempDir()
	writeTool(t, root, "get_weather", &metadata.ToolOptions{ToolName: "get_weather", Description: "Weather."})
	c := load(t, root)
	tool := c.Lookup("get_weather")
	require.NotNil(t, tool)
	assert.Equal(t, "get_weather", tool.Name)
	assert.Equal(t, "get_weather", tool.Function)
	assert.Equal(t, metadata.TriggerBindingName, tool.DataKey)
	assert.JSONEq(t, string(metadata.TextContent("An error occurred invoking 'get_weather'.")), string(tool.FailureText))
	for _, name := range []string{"GET_WEATHER", "Get_Weather", "get_weathe", "get_weather ", ""} {
		assert.Nil(t, c.Lookup(name), name)
	}
}

// TestToolsListPerRevisionFamily: one array for the revisions before
// 2026-07-28, one for later ones; the same bytes every time.
func TestToolsListPerRevisionFamily(t *testing.T) {
	root := t.TempDir()
	writeTool(t, root, "primes", &metadata.ToolOptions{ToolName: "primes", Description: "Primes.",
		OutputSchema:        `{"type":"object","properties":{"result":{"type":"array","items":{"type":"integer"}}},"required":["result"]}`,
		NaturalOutputSchema: `{"type":"array","items":{"type":"integer"}}`})
	writeFile(t, root, "null_desc/function.json", `{"bindings":[{"type":"mcpToolTrigger","direction":"in","name":"context","toolName":"null_desc","description":null}]}`)
	c := load(t, root)
	outputOf := func(list json.RawMessage) map[string]string {
		var tools []struct {
			Name         string          `json:"name"`
			Description  *string         `json:"description"`
			OutputSchema json.RawMessage `json:"outputSchema"`
		}
		require.NoError(t, json.Unmarshal(list, &tools))
		out := map[string]string{}
		for _, tool := range tools {
			out[tool.Name] = string(tool.OutputSchema)
			if tool.Name == "null_desc" {
				assert.Nil(t, tool.Description, "a null description is not advertised")
			}
		}
		return out
	}
	for _, v := range []string{"2024-11-05", "2025-06-18", "2025-11-25"} {
		assert.Same(t, &c.ToolsList(v)[0], &c.ToolsList("2025-03-26")[0], v)
	}
	assert.Same(t, &c.ToolsList("2026-07-28")[0], &c.ToolsList(binding.ProjectedRevision)[0])
	assert.Contains(t, outputOf(c.ToolsList("2025-06-18"))["primes"], `"type":"object"`)
	assert.Contains(t, outputOf(c.ToolsList("2026-07-28"))["primes"], `"type":"array"`)
	assert.Empty(t, outputOf(c.ToolsList("2025-06-18"))["null_desc"], "no output schema: no key")
}

func manyKeys(n int) string {
	var sb strings.Builder
	for i := range n {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(`"k` + strconv.Itoa(i) + `":0`)
	}
	return sb.String()
}

func TestCheckArguments(t *testing.T) {
	c := &Catalog{lim: *testLimits(nil)}
	tests := []struct {
		name, args, message string
	}{
		{"within the bounds", `{"city":"Oslo","deep":` + strings.Repeat("[", 60) + strings.Repeat("]", 60) + `}`, ""},
		{"2 MiB string", `{"city":"` + strings.Repeat("x", 2<<20) + `"}`, "Invalid params: the arguments exceed 1048576 bytes."},
		{"deep nesting", `{"deep":` + strings.Repeat("[", 200) + strings.Repeat("]", 200) + `}`, "Invalid params: the arguments nest deeper than 64 levels."},
		{"deep objects", `{"deep":` + strings.Repeat(`{"a":`, 100) + `1` + strings.Repeat("}", 100) + `}`, "Invalid params: the arguments nest deeper than 64 levels."},
		{"brackets in strings do not count", `{"s":"` + strings.Repeat(`[{\"`, 100) + `"}`, ""},
		{"many keys", `{"many":{` + manyKeys(20000) + `}}`, "Invalid params: the arguments hold more than 10000 object keys."},
		{"many top-level keys", `{` + manyKeys(10001) + `}`, "Invalid params: the arguments hold more than 10000 object keys."},
		{"as many keys as allowed", `{` + manyKeys(10000) + `}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var args map[string]json.RawMessage
			require.NoError(t, json.Unmarshal([]byte(tt.args), &args))
			// The decoded arguments and the text as sent get one answer.
			for _, err := range []error{c.CheckArguments(args), c.CheckRawArguments(json.RawMessage(tt.args))} {
				if tt.message == "" {
					assert.NoError(t, err)
					continue
				}
				var je *jsonrpc.Error
				require.True(t, errors.As(err, &je), "a *jsonrpc.Error: %v", err)
				assert.Equal(t, jsonrpc.CodeInvalidParams, je.Code)
				assert.Equal(t, tt.message, je.Message)
			}
		})
	}
}

// TestToolsListInParts: a list encoded in parts on several CPUs is the
// bytes one encoding of the whole array gives, for any number of tools.
func TestToolsListInParts(t *testing.T) {
	for _, n := range []int{0, 1, 499, 500, 501, 1234} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			root := t.TempDir()
			for i := range n {
				name := "t" + strconv.Itoa(i)
				writeTool(t, root, name, &metadata.ToolOptions{ToolName: name, Description: "Tool <" + name + "> & co.", OutputSchema: weatherSchema})
			}
			c := load(t, root)
			require.Len(t, c.Tools(), n)
			for _, v := range []string{"2025-06-18", binding.ProjectedRevision} {
				whole, err := metadata.Marshal(c.toolItems(v))
				require.NoError(t, err)
				assert.Equal(t, string(whole), string(c.ToolsList(v)), v)
			}
		})
	}
}

// TestFromFunctionsSharesTheAppsCompiler: an app serving itself hands the
// catalog the compiler it built its tools with; when that compiler checks
// the host's schema limits and defers compiling, the catalog reads each
// schema text through it (none is read again, and the host's deferred
// compile takes the app's schemas too); otherwise the catalog keeps its
// own.
func TestFromFunctionsSharesTheAppsCompiler(t *testing.T) {
	var fns []*metadata.Function
	for _, name := range []string{"a_weather", "b_other"} {
		fn, err := metadata.NewToolFunction(name, &metadata.ToolOptions{ToolName: name, OutputSchema: weatherSchema,
			InputSchema: `{"type":"object","properties":{"` + name + `":{"type":"string"}}}`})
		require.NoError(t, err)
		fns = append(fns, fn)
	}
	built := func(c *binding.Compiler) *binding.Compiler {
		for _, fn := range fns {
			_, err := c.LoadTool(fn, fn.ToolTriggers()[0], "")
			require.NoError(t, err)
		}
		return c
	}

	app := built(&binding.Compiler{Defer: true})
	read, deferred := app.Len(), app.Deferred()
	require.NotZero(t, deferred)
	c, err := FromFunctions("root", fns, testLimits(nil), app, nil)
	require.NoError(t, err)
	require.NotNil(t, c.Lookup("a_weather"))
	assert.Same(t, app, c.compiler, "the host's limits are the compiler's")
	assert.Equal(t, read, app.Len(), "no schema text read again")
	c.CompileDeferred()
	assert.Zero(t, app.Deferred(), "the host's deferred compile took the app's schemas")

	for name, other := range map[string]*binding.Compiler{
		"other limits": built(&binding.Compiler{Defer: true, Limits: binding.Limits{SchemaDepth: 7}}),
		"no deferring": built(&binding.Compiler{}),
	} {
		c, err := FromFunctions("root", fns, testLimits(nil), other, nil)
		require.NoError(t, err, name)
		assert.NotSame(t, other, c.compiler, name)
		require.NotNil(t, c.Lookup("b_other"), name)
	}
	c, err = FromFunctions("root", fns, testLimits(nil), nil, nil)
	require.NoError(t, err)
	assert.NotNil(t, c.compiler, "no compiler given: the catalog's own")
}

// TestAppendToolIsMarshal: the tools/list entries are written without
// reflection, byte for byte as metadata.Marshal writes them: every key
// present and absent, text that needs escaping, raw values that are not
// compact, and a raw value that is not JSON (an error either way).
func TestAppendToolIsMarshal(t *testing.T) {
	empty, odd := "", "<b>&\u2028\"\\\x01\xff"
	cases := []toolJSON{
		{Name: "plain", InputSchema: json.RawMessage(`{"type":"object"}`)},
		{Name: "no_input"},
		{Name: odd, Title: odd, Description: &odd, InputSchema: json.RawMessage(`{ "type" : "object" ,"properties":{"a":{"type":"string","description":"x y"}}}`),
			OutputSchema: json.RawMessage("{\n\t\"type\": \"object\"\n}"), Annotations: json.RawMessage(`{"readOnlyHint":true}`),
			Icons: []metadata.Icon{{Src: "https://x/i.png", MimeType: "image/png", Sizes: []string{"48x48", "any"}, Theme: "dark"}, {Src: "data:,"}},
			Meta:  json.RawMessage(`{"ui":{"resourceUri":"ui://a/b"}}`)},
		{Name: "empty_description", Description: &empty, InputSchema: json.RawMessage(`{}`), OutputSchema: json.RawMessage(`{"type":"object"}`)},
		{Name: "meta_only", InputSchema: json.RawMessage(`{}`), Meta: json.RawMessage(`{"a":[1,2.5e3,null,"\u00e9"]}`)},
	}
	for _, tc := range cases {
		want, wantErr := metadata.Marshal(tc)
		got, err := appendTool(nil, &tc)
		require.NoError(t, wantErr, tc.Name)
		require.NoError(t, err, tc.Name)
		assert.Equal(t, string(want), string(got), tc.Name)
	}
	bad := toolJSON{Name: "bad", InputSchema: json.RawMessage(`{"type":`)}
	_, wantErr := metadata.Marshal(bad)
	_, err := appendTool(nil, &bad)
	assert.Error(t, wantErr)
	assert.Error(t, err, "a raw value that is not JSON")

	// And a loaded catalog's lists, for both revision families.
	root := t.TempDir()
	for i := range 12 {
		opts := &metadata.ToolOptions{ToolName: "tool_" + strconv.Itoa(i), Description: "Tool <" + strconv.Itoa(i) + ">"}
		if i%2 == 0 {
			opts.OutputSchema = weatherSchema
		}
		if i%3 == 0 {
			opts.Title = "Title & " + strconv.Itoa(i)
		}
		writeTool(t, root, "f"+strconv.Itoa(i), opts)
	}
	c := load(t, root)
	for _, version := range []string{projectedFamily, binding.ProjectedRevision} {
		want, err := metadata.Marshal(c.toolItems(version))
		require.NoError(t, err)
		assert.Equal(t, string(want), string(c.ToolsList(version)), version)
	}
}

// BenchmarkEncodeToolList: the tools/list array of 1,000 tools with
// get_weather-sized schemas, written by appendTool (what the catalog does)
// and, for comparison, by encoding/json (metadata.Marshal of the same
// entries, what it did before).
func BenchmarkEncodeToolList(b *testing.B) {
	root := b.TempDir()
	for i := range 1000 {
		writeTool(b, root, "f"+strconv.Itoa(i), &metadata.ToolOptions{ToolName: "tool_" + strconv.Itoa(i),
			Description: "Get the weather forecast for a city.", OutputSchema: weatherSchema})
	}
	c, err := Load(root, testLimits(nil), nil)
	require.NoError(b, err)
	b.Run("appendTool", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := c.encodeToolList(projectedFamily); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding_json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := metadata.Marshal(c.toolItems(projectedFamily)); err != nil {
				b.Fatal(err)
			}
		}
	})
}
