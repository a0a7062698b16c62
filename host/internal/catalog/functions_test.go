package catalog

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/metadata"
)

func writeResource(t *testing.T, root, function string, opts *metadata.ResourceOptions) {
	t.Helper()
	fn, err := metadata.NewResourceFunction(function, opts)
	require.NoError(t, err)
	require.NoError(t, metadata.WriteFunction(root, fn))
}

func writePrompt(t *testing.T, root, function string, opts *metadata.PromptOptions) {
	t.Helper()
	fn, err := metadata.NewPromptFunction(function, opts)
	require.NoError(t, err)
	require.NoError(t, metadata.WriteFunction(root, fn))
}

func TestLoadResourcesTemplatesAndPrompts(t *testing.T) {
	root := t.TempDir()
	writeResource(t, root, "a_static", &metadata.ResourceOptions{URI: "test://a", Name: "a", MimeType: "text/plain"})
	writeResource(t, root, "b_template", &metadata.ResourceOptions{URI: "test://items/{id}", Name: "items"})
	writeResource(t, root, "c_same_structure", &metadata.ResourceOptions{URI: "test://items/{name}", Name: "names"})
	writeResource(t, root, "d_same_uri", &metadata.ResourceOptions{URI: "TEST://A", Name: "a2"})
	writePrompt(t, root, "e_prompt", &metadata.PromptOptions{Name: "greet", Arguments: []metadata.PromptArgument{{Name: "who", Required: true}}})
	writePrompt(t, root, "f_prompt_dup", &metadata.PromptOptions{Name: "GREET"})
	writeFile(t, root, "g_bad/function.json", `{"bindings":[{"type":"mcpResourceTrigger","direction":"in","name":"context","uri":"not a uri","resourceName":"x"}]}`)

	c := load(t, root)
	assert.Len(t, c.ResourceEntries(), 1)
	assert.JSONEq(t, `{"name":"a","uri":"test://a","mimeType":"text/plain"}`, string(c.ResourceEntries()[0]))
	require.Len(t, c.TemplateEntries(), 1)
	assert.JSONEq(t, `{"name":"items","uriTemplate":"test://items/{id}"}`, string(c.TemplateEntries()[0]))
	require.Len(t, c.PromptEntries(), 1)

	res, vars, ok := c.LookupResource("test://items/42")
	require.True(t, ok)
	assert.Equal(t, "b_template", res.Function)
	assert.Equal(t, map[string]string{"id": "42"}, vars)
	_, _, ok = c.LookupResource("test://A")
	assert.True(t, ok, "static URIs compare case-insensitively")
	p, ok := c.Prompt("Greet")
	require.True(t, ok)
	assert.Equal(t, []string{"who"}, p.Required())

	failed := map[string]string{}
	for _, f := range c.Functions() {
		if f.Error != "" {
			failed[f.Name] = f.Error
		}
	}
	assert.Contains(t, failed["c_same_structure"], "equivalent URI pattern is already registered")
	assert.Contains(t, failed["d_same_uri"], "is already registered")
	assert.Contains(t, failed["f_prompt_dup"], "already registered")
	assert.Contains(t, failed["g_bad"], "not a uri")
	assert.Len(t, c.Failures(), 4, "one failure per refused function")
}

func TestDisabledFunctionsAreLeftOut(t *testing.T) {
	root := t.TempDir()
	writeTool(t, root, "by_setting", &metadata.ToolOptions{ToolName: "by_setting"})
	writeTool(t, root, "kept", &metadata.ToolOptions{ToolName: "kept"})
	writeFile(t, root, "by_key/function.json", `{"bindings":[{"type":"mcpResourceTrigger","direction":"in","name":"context","uri":"test://k","resourceName":"k"}],"disabled":true}`)
	settings := map[string]string{"AzureWebJobs.by_setting.Disabled": "1"}
	c, err := Load(root, testLimits(nil), func(name string) (string, bool) { v, ok := settings[name]; return v, ok })
	require.NoError(t, err)
	require.Len(t, c.Tools(), 1)
	assert.Equal(t, "kept", c.Tools()[0].Name)
	assert.Empty(t, c.ResourceEntries())
	disabled := map[string]string{}
	for _, f := range c.Functions() {
		disabled[f.Name] = f.Disabled
	}
	assert.Contains(t, disabled["by_setting"], "AzureWebJobs.by_setting.Disabled")
	assert.Contains(t, disabled["by_key"], `"disabled": true`)
	assert.Empty(t, disabled["kept"])
	assert.Empty(t, c.Failures(), "a disabled function is not a failure")
}

func TestAppToolNeedsItsView(t *testing.T) {
	root := t.TempDir()
	ui := []metadata.Field{{Key: "ui", Value: []byte(`{"resourceUri":"ui://chart/view"}`)}}
	writeTool(t, root, "chart", &metadata.ToolOptions{ToolName: "chart", Metadata: ui})
	c := load(t, root)
	assert.Empty(t, c.Tools())
	require.Len(t, c.Failures(), 1)
	assert.Contains(t, c.Failures()[0].Error(), `the MCP App view is not served: _meta.ui.resourceUri is "ui://chart/view"`)

	view, err := metadata.NewAppViewFunction("chart", "")
	require.NoError(t, err)
	require.NoError(t, metadata.WriteFunction(root, view))
	c = load(t, root)
	assert.Len(t, c.Tools(), 1, "served once its view is")
}

func TestToolsListCarriesAnnotationsAndIcons(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "t/function.json", `{"bindings":[{"type":"mcpToolTrigger","direction":"in","name":"context","toolName":"t","description":"d",`+
		`"annotations":"{\"readOnlyHint\":true,\"title\":\"T\"}","icons":"[{\"src\":\"https://example.com/i.png\",\"mimeType\":\"image/png\"}]"}]}`)
	c := load(t, root)
	require.Len(t, c.Tools(), 1, "%v", c.Failures())
	assert.JSONEq(t, `[{"name":"t","description":"d","inputSchema":{"type":"object","properties":{},"required":[]},`+
		`"annotations":{"readOnlyHint":true,"title":"T"},"icons":[{"src":"https://example.com/i.png","mimeType":"image/png"}]}]`,
		string(c.ToolsList("2025-11-25")))
}
