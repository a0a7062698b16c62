package owner

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBudgetBoundsOwnersWithinTheirAddress: owners made up by one address
// (a fresh credential a request) share the address's limit.
func TestBudgetBoundsOwnersWithinTheirAddress(t *testing.T) {
	b := NewBudget("bytes of subscriptions", BudgetLimit{PerOwner: 100, PerAddress: 250, Global: 400}, "FUNCMCP_A", "FUNCMCP_B")
	require.NoError(t, b.Take("key:1", "addr:10.0.0.1", 100))
	err := b.Take("key:1", "addr:10.0.0.1", 1)
	var be *BudgetError
	require.True(t, errors.As(err, &be))
	assert.Equal(t, ScopeOwner, be.Scope)
	assert.Equal(t, "too many bytes of subscriptions for this client (the limit is 100); FUNCMCP_A changes it", err.Error())

	require.NoError(t, b.Take("key:2", "addr:10.0.0.1", 100))
	err = b.Take("key:3", "addr:10.0.0.1", 100)
	require.True(t, errors.As(err, &be))
	assert.Equal(t, ScopeAddress, be.Scope)
	assert.Equal(t, "too many bytes of subscriptions from this client address (the limit is 250); FUNCMCP_B changes it", err.Error())
	assert.Equal(t, int64(200), b.HeldFrom("addr:10.0.0.1"))

	require.NoError(t, b.Take("key:4", "addr:10.0.0.2", 100))
	require.NoError(t, b.Take("key:5", "addr:10.0.0.2", 100))
	err = b.Take("key:6", "addr:10.0.0.3", 1)
	require.True(t, errors.As(err, &be))
	assert.Equal(t, ScopeGlobal, be.Scope)
	assert.Equal(t, "too many bytes of subscriptions on this server (the limit is 400)", err.Error())

	b.Give("key:1", "addr:10.0.0.1", 100)
	assert.Equal(t, int64(0), b.Held("key:1"))
	assert.Equal(t, int64(300), b.Total())
	require.NoError(t, b.Take("key:6", "addr:10.0.0.3", 1))
	b.Give("key:2", "addr:10.0.0.1", 100)
	b.Give("key:4", "addr:10.0.0.2", 100)
	b.Give("key:5", "addr:10.0.0.2", 100)
	b.Give("key:6", "addr:10.0.0.3", 1)
	assert.Equal(t, int64(0), b.Total())
	assert.Empty(t, b.owners, "an owner holding nothing takes no memory")
	assert.Empty(t, b.addrs)
}
