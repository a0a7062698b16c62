package main

import (
	"os"
	"os/exec"
	"path/filepath"
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
