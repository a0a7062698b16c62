package owner

import (
	"errors"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestOfPrefersTheMostSpecificVerifiedIdentity(t *testing.T) {
	r := httptest.NewRequest("POST", "/runtime/webhooks/mcp", nil)
	r.RemoteAddr = "127.0.0.9:5000"
	assert.Equal(t, ID("addr:127.0.0.9"), Of(r))
	assert.False(t, Of(r).Verified())

	r = r.WithContext(WithVerifiedKey(r.Context(), KeyOwner("k")))
	keyed := Of(r)
	assert.Equal(t, "key", keyed.Kind())
	assert.True(t, keyed.Verified())
	assert.NotContains(t, string(keyed), ":k", "the key itself never shows")

	r = r.WithContext(WithPrincipal(r.Context(), "https://issuer|alice"))
	assert.Equal(t, "principal", Of(r).Kind())
	assert.True(t, Of(r).Verified())
	assert.Equal(t, "https://issuer|alice", Principal(r.Context()))
}

// TestOfBelievesNothingTheClientSends (issue 39, finding 5): what a client
// merely sends (an Authorization header, a function key, a code, a session
// id), however it varies, names no owner: every unauthenticated request of
// one address has the address's owner, so the per-owner limits hold per
// address.
func TestOfBelievesNothingTheClientSends(t *testing.T) {
	seen := map[ID]bool{}
	for i := range 64 {
		r := httptest.NewRequest("POST", "/x?code=c"+strconv.Itoa(i), nil)
		r.RemoteAddr = "192.0.2.7:" + strconv.Itoa(1000+i)
		r.Header.Set("Authorization", "Bearer random-"+strconv.Itoa(i))
		r.Header.Set("X-Functions-Key", "k"+strconv.Itoa(i))
		r.Header.Set("Mcp-Session-Id", "s"+strconv.Itoa(i))
		seen[Of(r)] = true
	}
	assert.Equal(t, map[ID]bool{"addr:192.0.2.7": true}, seen)
}

// TestOfTellsVerifiedIdentitiesApart: verified keys and principals are
// owners of their own, whatever address they come from.
func TestOfTellsVerifiedIdentitiesApart(t *testing.T) {
	r := httptest.NewRequest("POST", "/x", nil)
	one := Of(r.WithContext(WithVerifiedKey(r.Context(), KeyOwner("one"))))
	two := Of(r.WithContext(WithVerifiedKey(r.Context(), KeyOwner("two"))))
	assert.NotEqual(t, one, two)
	assert.NotEqual(t, Of(r), one)
	r.RemoteAddr = "192.0.2.8:1"
	assert.Equal(t, one, Of(r.WithContext(WithVerifiedKey(r.Context(), KeyOwner("one")))))
}

func TestAddressDropsThePort(t *testing.T) {
	assert.Equal(t, Address("10.0.0.1:1"), Address("10.0.0.1:2"))
	assert.Equal(t, ID("addr:::1"), Address("[::1]:80"))
}

func TestCounterBoundsEachOwnerAndAll(t *testing.T) {
	c := NewCounter("running tasks", "FUNCMCP_X", Limit{PerOwner: 2, Global: 3})
	r1, err := c.Take("a", 1)
	require.NoError(t, err)
	_, err = c.Take("a", 1)
	require.NoError(t, err)

	_, err = c.Take("a", 1)
	var le *LimitError
	require.True(t, errors.As(err, &le))
	assert.False(t, le.Global)
	assert.Equal(t, "too many running tasks for this client (the limit is 2); FUNCMCP_X changes it", err.Error())

	_, err = c.Take("b", 1)
	require.NoError(t, err)
	_, err = c.Take("c", 1)
	require.True(t, errors.As(err, &le))
	assert.True(t, le.Global)
	assert.Equal(t, "too many running tasks on this server (the limit is 3)", err.Error())

	r1()
	r1() // a second release gives nothing back twice
	assert.Equal(t, int64(1), c.Held("a"))
	assert.Equal(t, int64(2), c.Total())
	_, err = c.Take("c", 1)
	assert.NoError(t, err)
	assert.Equal(t, 3, c.Owners())
}

func TestCounterForgetsOwnersThatHoldNothing(t *testing.T) {
	c := NewCounter("bytes", "", Limit{})
	var wg sync.WaitGroup
	for i := 0; i < 64; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			release, err := c.Take(ID("o"+strconv.Itoa(i%8)), 100)
			if err == nil {
				release()
			}
		}()
	}
	wg.Wait()
	assert.Equal(t, 0, c.Owners())
	assert.Equal(t, int64(0), c.Total())
}

// TestPrincipalOwnerIsThePrincipals: a principal's owner ID worked out
// beforehand is the one Of works out from the principal alone.
func TestPrincipalOwnerIsThePrincipals(t *testing.T) {
	r := httptest.NewRequest("POST", "/runtime/webhooks/mcp", nil)
	plain := Of(r.WithContext(WithPrincipal(r.Context(), "oidc|https://issuer|alice")))
	p := NewPrincipalOwner("oidc|https://issuer|alice")
	ctx := WithPrincipalOwner(r.Context(), p)
	assert.Equal(t, plain, Of(r.WithContext(ctx)))
	assert.Equal(t, "oidc|https://issuer|alice", Principal(ctx))
	assert.NotEqual(t, plain, Of(r.WithContext(WithPrincipal(r.Context(), "oidc|https://issuer|bob"))))
	assert.Equal(t, Address(r.RemoteAddr), Of(r.WithContext(WithPrincipal(r.Context(), ""))), "an empty principal is none")
}
