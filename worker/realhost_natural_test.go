package worker_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/binding"
	"github.com/funcmcp/funcmcp/metadata"
	"github.com/funcmcp/funcmcp/worker"
)

// TestUnderTheRealHostNaturalOutput drives a tool with a natural array
// output schema as the Azure Functions host does. That host reads only
// outputSchema (it drops naturalOutputSchema with the other keys it does not
// know) and never unwraps, so the worker must answer with the projected
// value: what it returns matches outputSchema as the emitted function.json
// holds it, and the text copy holds the same JSON.
func TestUnderTheRealHostNaturalOutput(t *testing.T) {
	a := worker.New(nil)
	worker.AddTool(a, "squares", func(_ context.Context, _ *worker.ToolContext, _ struct{}) (*worker.Result, []int, error) {
		return nil, []int{1, 4, 9}, nil
	}).WithOutputSchema(`{"type":"array","items":{"$ref":"#/$defs/square"},"$defs":{"square":{"type":"integer","minimum":0}}}`)
	dir := t.TempDir()
	require.NoError(t, a.EmitMetadata(dir))
	fn, err := metadata.ReadFunction(filepath.Join(dir, "squares"), nil)
	require.NoError(t, err)
	trigger := fn.ToolTriggers()[0]
	outputSchema, ok := trigger.LookupString(metadata.KeyOutputSchema)
	require.True(t, ok)
	_, err = binding.CheckShape(binding.OutputSchema, outputSchema)
	require.NoError(t, err, "the real host's extension accepts only object output schemas")

	r := invokeLikeRealHost(t, serve(t, a), "squares")
	require.False(t, r.result.IsError, "%s", r.result.Content)
	assert.JSONEq(t, `{"result":[1,4,9]}`, string(r.result.StructuredContent))
	assert.Equal(t, []string{`{"result":[1,4,9]}`}, texts(t, r.result))
	schema, err := binding.ParseSchema(binding.OutputSchema, outputSchema)
	require.NoError(t, err)
	_, err = schema.ValidateJSON(r.result.StructuredContent)
	assert.NoError(t, err)
}
