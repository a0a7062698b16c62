package cli

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLogger(t *testing.T) {
	var b bytes.Buffer
	l, err := Logger(&b, "json", false)
	require.NoError(t, err)
	l.Debug("hidden")
	l.Info("shown")
	assert.NotContains(t, b.String(), "hidden")
	assert.Contains(t, b.String(), `"msg":"shown"`)

	b.Reset()
	l, err = Logger(&b, "text", true)
	require.NoError(t, err)
	l.Debug("detail")
	assert.Contains(t, b.String(), "level=DEBUG msg=detail")

	_, err = Logger(&b, "xml", false)
	assert.EqualError(t, err, `--log-format "xml" is not text or json`)
}

func TestSplitList(t *testing.T) {
	assert.Equal(t, []string{"a.example", "b.example"}, SplitList(" a.example,, b.example ,"))
	assert.Nil(t, SplitList(""))
}
