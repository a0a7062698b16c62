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
	epoch, err := a.Epoch(t.Context())
	require.NoError(t, err)
	var first atomic.Int32
	var wg sync.WaitGroup
	for i := range 8 {
		s := a
		if i%2 == 1 {
			s = b
		}
		wg.Go(func() {
			ok, err := s.Spend(t.Context(), "nonce1", epoch, expires)
			assert.NoError(t, err)
			if ok {
				first.Add(1)
			}
		})
	}
	wg.Wait()
	assert.Equal(t, int32(1), first.Load(), "one instance spends it")
	ok, err := b.Spend(t.Context(), "nonce2", epoch, time.Now().Add(-time.Second))
	require.NoError(t, err)
	assert.True(t, ok)

	require.NoError(t, a.Sweep(t.Context(), time.Now()))
	ok, err = b.Spend(t.Context(), "nonce2", epoch, time.Now().Add(time.Hour))
	require.NoError(t, err)
	assert.True(t, ok, "the expired row was swept")
	ok, err = b.Spend(t.Context(), "nonce1", epoch, expires)
	require.NoError(t, err)
	assert.False(t, ok, "the live row was not")

	ct.mu.Lock()
	ct.counts = nil
	ct.mu.Unlock()
	for _, key := range []string{"", "a", "a/b", "x'or'1", string(make([]byte, 129))} {
		_, err := a.Spend(t.Context(), key, epoch, expires)
		assert.ErrorIs(t, err, ErrStateKey, "%q", key)
	}
	ct.mu.Lock()
	assert.Empty(t, ct.counts)
	ct.mu.Unlock()
}

// TestAzureStatesEpoch (issue 41, item 3): the table's epoch is made once,
// whichever instances ask at once, and survives the sweep; once the
// storage restarted empty, a state used before is refused (its epoch is
// gone) instead of opening again, the next Epoch makes a new one, and the
// states given in it open once.
func TestAzureStatesEpoch(t *testing.T) {
	az := testutil.StartAzurite(t, repoRoot(t))
	a, err := NewAzureStates(az.ConnectionString(), nil)
	require.NoError(t, err)
	b, err := NewAzureStates(az.ConnectionString(), nil)
	require.NoError(t, err)
	epochs := make([]string, 6)
	var wg sync.WaitGroup
	for i := range epochs {
		s := a
		if i%2 == 1 {
			s = b
		}
		wg.Go(func() {
			var err error
			epochs[i], err = s.Epoch(t.Context())
			assert.NoError(t, err)
		})
	}
	wg.Wait()
	epoch := epochs[0]
	require.Len(t, epoch, 16)
	for _, e := range epochs {
		assert.Equal(t, epoch, e, "one epoch for all")
	}
	expires := time.Now().Add(time.Hour)
	ok, err := a.Spend(t.Context(), "used1", epoch, expires)
	require.NoError(t, err)
	require.True(t, ok)
	_, err = a.Spend(t.Context(), "other1", "someotherepoch00", expires)
	assert.ErrorIs(t, err, ErrStateEpochChanged, "a state of another epoch")
	_, err = a.Spend(t.Context(), "other2", "", expires)
	assert.ErrorIs(t, err, ErrStateEpochChanged, "a state given without a shared record")
	require.NoError(t, a.Sweep(t.Context(), time.Now().Add(2*time.Hour)))
	e, err := b.Epoch(t.Context())
	require.NoError(t, err)
	assert.Equal(t, epoch, e, "the sweep leaves the epoch")

	az.Stop()
	az.Start() // empty
	_, err = b.Spend(t.Context(), "used1", epoch, expires)
	require.ErrorIs(t, err, ErrStateEpochChanged, "the state used before the storage restarted is refused")
	next, err := b.Epoch(t.Context())
	require.NoError(t, err)
	assert.NotEqual(t, epoch, next, "a new epoch")
	e, err = a.Epoch(t.Context())
	require.NoError(t, err)
	assert.Equal(t, next, e)
	ok, err = a.Spend(t.Context(), "fresh1", next, expires)
	require.NoError(t, err)
	assert.True(t, ok)
	ok, err = b.Spend(t.Context(), "fresh1", next, expires)
	require.NoError(t, err)
	assert.False(t, ok, "a state of the new epoch opens once")
}
