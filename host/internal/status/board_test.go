package status

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A worker that crashes for as long as the host runs must not grow the
// status without bound: only the latest problems are kept, newest last.
func TestLiveErrorsKeepTheLatest(t *testing.T) {
	b := &Board{}
	for i := range 3 * maxLiveErrors {
		b.AddLiveError(fmt.Sprintf("crash %d", i))
	}
	require.Len(t, b.liveErrors, maxLiveErrors)
	assert.Equal(t, fmt.Sprintf("crash %d", 2*maxLiveErrors), b.liveErrors[0])
	assert.Equal(t, fmt.Sprintf("crash %d", 3*maxLiveErrors-1), b.liveErrors[maxLiveErrors-1])
}
