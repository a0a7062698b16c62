package host

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A worker that crashes for as long as the host runs must not grow the
// status without bound: only the latest problems are kept, newest last.
func TestLiveErrorsKeepTheLatest(t *testing.T) {
	h := &Host{}
	for i := range 3 * maxLiveErrors {
		h.addLiveError(fmt.Sprintf("crash %d", i))
	}
	require.Len(t, h.liveErrors, maxLiveErrors)
	assert.Equal(t, fmt.Sprintf("crash %d", 2*maxLiveErrors), h.liveErrors[0])
	assert.Equal(t, fmt.Sprintf("crash %d", 3*maxLiveErrors-1), h.liveErrors[maxLiveErrors-1])
}
