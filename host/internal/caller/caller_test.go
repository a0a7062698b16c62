package caller

import (
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/funcmcp/funcmcp/host/internal/owner"
)

func TestOwnerPrefersTheMostSpecificVerifiedIdentity(t *testing.T) {
	r := httptest.NewRequest("POST", "/runtime/webhooks/mcp", nil)
	r.RemoteAddr = "127.0.0.9:5000"
	c := Of(r)
	assert.Equal(t, owner.ID("addr:127.0.0.9"), c.Owner())
	assert.False(t, c.Owner().Verified())

	c.SetKey(owner.KeyOwner("k"))
	keyed := c.Owner()
	assert.Equal(t, "key", keyed.Kind())
	assert.True(t, keyed.Verified())
	assert.NotContains(t, string(keyed), ":k", "the key itself never shows")

	c.SetIdentity(owner.NewPrincipalOwner("https://issuer|alice"), nil, nil)
	assert.Equal(t, "principal", c.Owner().Kind())
	assert.True(t, c.Owner().Verified())
	assert.Equal(t, "https://issuer|alice", c.Principal())
	assert.Equal(t, owner.ID("addr:127.0.0.9"), c.Address(), "the address stays the connection's")
}

// TestOwnerBelievesNothingTheClientSends (issue 39, finding 5): what a
// client merely sends (an Authorization header, a function key, a code, a
// session id), however it varies, names no owner: every unauthenticated
// request of one address has the address's owner, so the per-owner limits
// hold per address.
func TestOwnerBelievesNothingTheClientSends(t *testing.T) {
	seen := map[owner.ID]bool{}
	for i := range 64 {
		r := httptest.NewRequest("POST", "/x?code=c"+strconv.Itoa(i), nil)
		r.RemoteAddr = "192.0.2.7:" + strconv.Itoa(1000+i)
		r.Header.Set("Authorization", "Bearer random-"+strconv.Itoa(i))
		r.Header.Set("X-Functions-Key", "k"+strconv.Itoa(i))
		r.Header.Set("Mcp-Session-Id", "s"+strconv.Itoa(i))
		seen[Of(r).Owner()] = true
	}
	assert.Equal(t, map[owner.ID]bool{"addr:192.0.2.7": true}, seen)
}

// TestOwnerTellsVerifiedIdentitiesApart: verified keys and principals are
// owners of their own, whatever address they come from.
func TestOwnerTellsVerifiedIdentitiesApart(t *testing.T) {
	keyed := func(addr owner.ID, key string) owner.ID {
		c := New(addr)
		c.SetKey(owner.KeyOwner(key))
		return c.Owner()
	}
	one, two := keyed("addr:192.0.2.1", "one"), keyed("addr:192.0.2.1", "two")
	assert.NotEqual(t, one, two)
	assert.NotEqual(t, New("addr:192.0.2.1").Owner(), one)
	assert.Equal(t, one, keyed("addr:192.0.2.8", "one"))
}

// TestPrincipalOwnerIsThePrincipals: a principal's owner ID worked out
// beforehand names the principal alone, and an empty principal is none.
func TestPrincipalOwnerIsThePrincipals(t *testing.T) {
	with := func(p string) owner.ID {
		c := New("addr:192.0.2.1")
		c.SetIdentity(owner.NewPrincipalOwner(p), nil, nil)
		return c.Owner()
	}
	alice := with("oidc|https://issuer|alice")
	assert.Equal(t, alice, with("oidc|https://issuer|alice"))
	assert.NotEqual(t, alice, with("oidc|https://issuer|bob"))
	assert.Equal(t, owner.ID("addr:192.0.2.1"), with(""), "an empty principal is none")
}

// TestTheEdgesRecordIsTheOneFilled: what a link fills is what a later
// step reads from the request, and a request the edge did not mark gets a
// record of its connection that the first filling link attaches.
func TestTheEdgesRecordIsTheOneFilled(t *testing.T) {
	r := httptest.NewRequest("POST", "/x", nil)
	r.RemoteAddr = "10.0.0.1:5000"
	r = Attach(r, New("addr:198.51.100.1")) // a trusted proxy's client
	r2, c := Ensure(r)
	assert.Same(t, r, r2, "the edge's record is used")
	c.SetKey(owner.KeyOwner("k"))
	assert.Same(t, c, Of(r2))
	assert.Equal(t, owner.ID("addr:198.51.100.1"), Of(r2).Address())
	assert.Equal(t, owner.KeyOwner("k"), Of(r2).Owner())

	bare := httptest.NewRequest("POST", "/x", nil)
	bare.RemoteAddr = "10.0.0.2:1"
	bare2, c2 := Ensure(bare)
	c2.SetKey(owner.KeyOwner("k2"))
	assert.Equal(t, owner.KeyOwner("k2"), Of(bare2).Owner())
	assert.Equal(t, owner.ID("addr:10.0.0.2"), Of(bare).Owner(), "the request as it came names its connection")
}
