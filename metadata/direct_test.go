package metadata

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAppendJSONStringEncodesAsMarshal(t *testing.T) {
	inputs := []string{
		"", "plain", `quote " and backslash \`, "<html> & </html>", "tab\tnew\nline\rret",
		"\b\f\x00\x01\x1f\x7f", "snow ☃ and 😀", "line\u2028para\u2029", "bad \xff utf-8 \xc3",
		`{"type":"text","text":"{\"a\":1}"}`,
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 500 {
		b := make([]byte, rng.IntN(40))
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		inputs = append(inputs, string(b))
	}
	for _, s := range inputs {
		want, err := Marshal(s)
		require.NoError(t, err)
		assert.Equal(t, string(want), string(AppendJSONString(nil, s)), "%q", s)
	}
}

func TestAcceptsDirectResult(t *testing.T) {
	for accept, want := range map[string]bool{
		"":                 false,
		"application/json": false,
		MediaTypeDirectResult + ", application/json":       true,
		"application/json, " + MediaTypeDirectResult:       true,
		"Application/Vnd.Funcmcp.Result+JSON;q=0.9":        true,
		"application/vnd.funcmcp.result+jsonx, text/plain": false,
	} {
		assert.Equal(t, want, AcceptsDirectResult(accept), accept)
	}
	assert.True(t, IsDirectResult(MediaTypeDirectResult+"; charset=utf-8"))
	assert.False(t, IsDirectResult("application/json; charset=utf-8"))
	assert.False(t, IsDirectResult(""))
}
