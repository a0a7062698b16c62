package tasks

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/internal/testutil"
)

// TestAzureStatesSpendOnce: two instances sharing the table (which the
// first records make) spend one state once between them, however many try
// at once; expired rows are swept; a key of another form costs no storage
// call.
func TestAzureStatesSpendOnce(t *testing.T) {
	az := testutil.StartAzurite(t, repoRoot(t))
	ct := &countingTransport{}
	a, err := NewAzureStates(az.ConnectionString(), &AzureOptions{Transport: ct})
	require.NoError(t, err)
	b, err := NewAzureStates(az.ConnectionString(), nil)
	require.NoError(t, err)
	expires := time.Now().Add(time.Hour)
	var first atomic.Int32
	var wg sync.WaitGroup
	for i := range 8 {
		s := a
		if i%2 == 1 {
			s = b
		}
		wg.Go(func() {
			ok, err := s.Spend(t.Context(), "nonce1", expires)
			assert.NoError(t, err)
			if ok {
				first.Add(1)
			}
		})
	}
	wg.Wait()
	assert.Equal(t, int32(1), first.Load(), "one instance spends it")
	ok, err := b.Spend(t.Context(), "nonce2", time.Now().Add(-time.Second))
	require.NoError(t, err)
	assert.True(t, ok)

	require.NoError(t, a.Sweep(t.Context(), time.Now()))
	ok, err = b.Spend(t.Context(), "nonce2", time.Now().Add(time.Hour))
	require.NoError(t, err)
	assert.True(t, ok, "the expired row was swept")
	ok, err = b.Spend(t.Context(), "nonce1", expires)
	require.NoError(t, err)
	assert.False(t, ok, "the live row was not")

	ct.mu.Lock()
	ct.counts = nil
	ct.mu.Unlock()
	for _, key := range []string{"", "a", "a/b", "x'or'1", string(make([]byte, 129))} {
		_, err := a.Spend(t.Context(), key, expires)
		assert.ErrorIs(t, err, ErrStateKey, "%q", key)
	}
	ct.mu.Lock()
	assert.Empty(t, ct.counts)
	ct.mu.Unlock()
}
