package inittrace

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParse(t *testing.T) {
	trace := []byte("init internal/godebug @0.5 ms, 0.01 ms clock, 312 bytes, 7 allocs\n" +
		"init github.com/x/y @2.1 ms, 0.5 ms clock, 225288 bytes, 3298 allocs\n" +
		"init github.com/x/y/z @2.7 ms, 0.1 ms clock, 16 bytes, 1 allocs\n")
	c, err := parse(trace, "github.com/x/y")
	require.NoError(t, err)
	assert.Equal(t, Cost{Bytes: 225288, Allocs: 3298}, c)
	c, err = parse(trace, "github.com/x")
	require.NoError(t, err)
	assert.Zero(t, c, "no line: no init work")
	_, err = parse([]byte("init github.com/x/y @2.1 ms, garbage\n"), "github.com/x/y")
	assert.Error(t, err)
}

// initWork allocates at init, so that the trace has a line for this
// package.
var initWork = func() []*int {
	out := make([]*int, 8)
	for i := range out {
		out[i] = new(int)
	}
	return out
}()

func TestOfReadsThisBinary(t *testing.T) {
	c := Of(t, "github.com/funcmcp/funcmcp/internal/inittrace")
	assert.GreaterOrEqual(t, c.Allocs, int64(len(initWork)))
}
