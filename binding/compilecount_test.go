package binding

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCompileCountCountsCompilesOnly(t *testing.T) {
	before := CompileCount()
	s, err := ParseSchema(OutputSchema, `{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`)
	require.NoError(t, err)
	assert.Equal(t, before+1, CompileCount(), "ParseSchema compiles once")

	_, err = s.ValidateJSON([]byte(`{"n":1}`))
	require.NoError(t, err)
	_, err = s.ValidateJSON([]byte(`{"n":"x"}`))
	require.Error(t, err)
	assert.Equal(t, before+1, CompileCount(), "validating compiles nothing")
}
