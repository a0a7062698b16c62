package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/metadata"
)

// TestEmitMetadata builds the example and writes its function folder as
// `handler emit-metadata DIR` does in a real app's build.
func TestEmitMetadata(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "handler")
	build := exec.Command("go", "build", "-o", bin, ".")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)
	out, err = exec.Command(bin, "emit-metadata", dir).CombinedOutput()
	require.NoError(t, err, "%s", out)
	fn, err := metadata.ReadFunction(filepath.Join(dir, "count_words"), nil)
	require.NoError(t, err)
	schema, ok := fn.ToolTriggers()[0].LookupString(metadata.KeyOutputSchema)
	require.True(t, ok)
	assert.JSONEq(t, `{"type":"object","properties":{"characters":{"type":"integer","description":"Unicode code points."},`+
		`"words":{"type":"integer","description":"Runs of letters and digits."}},"required":["words","characters"],"additionalProperties":false}`, schema)
	_, err = os.Stat(filepath.Join(dir, "count_words", metadata.FunctionFile))
	assert.NoError(t, err)
}

// TestHostJSON: README's recipe serves the example with its own host.json,
// which names this server and its one tool, not the sample's.
func TestHostJSON(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	require.NoError(t, err)
	assert.True(t, strings.Contains(string(readme), "cp examples/hello/host.json dist/"), "README copies examples/hello/host.json")
	assert.False(t, strings.Contains(string(readme), "cp host.json dist/"), "the repository's host.json is the sample's")

	data, err := os.ReadFile("host.json")
	require.NoError(t, err)
	var host struct {
		CustomHandler struct {
			Description struct {
				DefaultExecutablePath string `json:"defaultExecutablePath"`
			} `json:"description"`
		} `json:"customHandler"`
		Extensions struct {
			MCP struct {
				ServerName   string `json:"serverName"`
				Instructions string `json:"instructions"`
			} `json:"mcp"`
		} `json:"extensions"`
	}
	require.NoError(t, json.Unmarshal(data, &host))
	assert.Equal(t, "handler", host.CustomHandler.Description.DefaultExecutablePath)
	assert.Equal(t, "hello", host.Extensions.MCP.ServerName)
	assert.Contains(t, host.Extensions.MCP.Instructions, "count_words")
	assert.NotContains(t, host.Extensions.MCP.Instructions, "get_weather")
}
