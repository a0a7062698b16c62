package worker

import (
	"strings"
	"testing"

	"github.com/funcmcp/funcmcp/metadata"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEncodedSizeRuleAtTheLimit: a function.json of exactly the host's
// limit passes the size rule, one byte more does not; the size is that of
// the indented file (each "<" below is one byte, its escape in an
// encoder's output would be six).
func TestEncodedSizeRuleAtTheLimit(t *testing.T) {
	withDescription := func(n int) *metadata.Function {
		f, err := metadata.NewToolFunction("f", &metadata.ToolOptions{ToolName: "t", Description: strings.Repeat("<", n),
			Properties: []metadata.ToolProperty{{PropertyName: "a", PropertyType: "string"}}})
		require.NoError(t, err)
		return f
	}
	data, err := withDescription(0).Encode()
	require.NoError(t, err)
	n := metadata.DefaultMaxFunctionFileBytes - len(data)
	data, err = withDescription(n).Encode()
	require.NoError(t, err)
	require.Len(t, data, metadata.DefaultMaxFunctionFileBytes)
	assert.NoError(t, checkEncodedSize(withDescription(n)))
	assert.ErrorContains(t, checkEncodedSize(withDescription(n+1)), "the host would not read it")
}
