package tests

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// inspectorBuild is the folder of the MCP Inspector CLI's entry point.
const inspectorBuild = "node_modules/@modelcontextprotocol/inspector-cli/build"

// runInspector runs the MCP Inspector CLI (v1.0.3) with --transport http.
//
// It runs in the CLI's build folder: the CLI reads its own package.json by a
// path that it checks relative to the working directory but imports relative
// to its module, which only agree there.
func runInspector(t *testing.T, endpoint string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	node, dir := nodeBin(t, "@modelcontextprotocol/inspector-cli")
	return runNode(t, node, filepath.Join(dir, filepath.FromSlash(inspectorBuild)),
		append([]string{"index.js", endpoint, "--transport", "http"}, args...)...)
}

// TestInspectorCLI lists and calls every sample tool with the MCP Inspector
// CLI. It lists tools before calling, so it validates structuredContent
// against the output schema too; a mismatch exits 1.
func TestInspectorCLI(t *testing.T) {
	t.Parallel()
	nodeBin(t, "@modelcontextprotocol/inspector-cli") // fail fast, before starting anything, when the clients are not installed
	app := sample(t)
	h := startHost(t, app)
	declared := readOutputSchemas(t, app)

	t.Run("tools/list", func(t *testing.T) {
		code, stdout, stderr := runInspector(t, h.endpoint, "--method", "tools/list")
		require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
		var listed struct {
			Tools []struct {
				Name         string          `json:"name"`
				OutputSchema json.RawMessage `json:"outputSchema"`
			} `json:"tools"`
		}
		require.NoError(t, json.Unmarshal([]byte(jsonPart(stdout)), &listed), stdout)
		require.Len(t, listed.Tools, len(sampleTools))
		for _, tool := range listed.Tools {
			if schema, ok := declared[tool.Name]; ok {
				assert.JSONEq(t, schema, string(tool.OutputSchema), tool.Name)
			} else {
				assert.Empty(t, tool.OutputSchema, tool.Name)
			}
		}
	})

	for _, st := range sampleTools {
		t.Run("tools/call "+st.name, func(t *testing.T) {
			args := []string{"--method", "tools/call", "--tool-name", st.name}
			for _, a := range st.inspectorArgs {
				args = append(args, "--tool-arg", a)
			}
			code, stdout, stderr := runInspector(t, h.endpoint, args...)
			if st.refused != "" {
				assert.NotEqual(t, 0, code, "stdout:\n%s", stdout)
				assert.Contains(t, stdout+stderr, "-32600")
				assert.Contains(t, stdout+stderr, st.refused)
				return
			}
			require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
			checkSampleResult(t, st, declared[st.name], json.RawMessage(jsonPart(stdout)))
		})
	}

	t.Run("unknown tool", func(t *testing.T) {
		code, stdout, stderr := runInspector(t, h.endpoint, "--method", "tools/call", "--tool-name", "no_such_tool")
		assert.NotEqual(t, 0, code, "stdout:\n%s", stdout)
		assert.Contains(t, stdout+stderr, "-32602")
	})
}

// jsonPart drops anything the CLI prints before its JSON output (such as a
// deprecation banner).
func jsonPart(s string) string {
	if i := strings.IndexAny(s, "{["); i > 0 {
		return s[i:]
	}
	return s
}
