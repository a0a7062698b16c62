package oauth

import (
	"crypto/sha256"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/host/internal/caller"
	"github.com/funcmcp/funcmcp/host/internal/owner"
	"github.com/funcmcp/funcmcp/internal/testutil"
	"github.com/funcmcp/funcmcp/metadata"
)

// freshHeaders are the identity headers built anew from id's claims, as a
// first validation builds them.
func freshHeaders(t *testing.T, id *Identity) http.Header {
	t.Helper()
	fresh := identityOf(id.Claims)
	require.NoError(t, fresh.encodeHeaders())
	h := http.Header{}
	fresh.setHeaders(h)
	return h
}

// TestRememberedTokenGetsTheSameHeaders: a remembered token's identity
// headers (built once, with its cache entry) are exactly those a fresh
// validation builds; a token whose claims differ gets its own; a request
// that edits the headers it was given changes nothing for the next one.
func TestRememberedTokenGetsTheSameHeaders(t *testing.T) {
	f := newFixture(t, nil)
	alice := f.op.Token(t, f.claims("Tools.Read"))
	bob := f.op.Token(t, testutil.Claims(f.op.URL, testAudience, "user-2", "Tools.Read", "Tools.Admin"))
	var first http.Header
	for i := range 3 {
		resp := f.do(t, alice, callList)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		s := <-f.last
		got := http.Header{}
		for k, v := range s.header {
			if IsReserved(k) {
				got[k] = v
			}
		}
		assert.Equal(t, freshHeaders(t, s.id), got, "request %d", i)
		if first == nil {
			first = got
		}
		assert.Equal(t, first, got)
		assert.Equal(t, "oidc|"+f.op.URL+"|user-1", s.principal)
	}

	// A handler that edits its request's headers leaves the next alone.
	edit := f.guard.Protect(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Header[HeaderPrincipalID][0] = "edited"
		r.Header.Add(HeaderPrincipalName, "more")
	}))
	r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:7071/runtime/webhooks/mcp", strings.NewReader(callList))
	r.Header.Set("Authorization", "Bearer "+alice)
	edit.ServeHTTP(httptest.NewRecorder(), r)
	require.Equal(t, http.StatusOK, f.do(t, alice, callList).StatusCode)
	s := <-f.last
	assert.Equal(t, "user-1", s.header.Get(HeaderPrincipalID))
	assert.Equal(t, []string{"Test user-1"}, s.header.Values(HeaderPrincipalName))

	require.Equal(t, http.StatusOK, f.do(t, bob, callList).StatusCode)
	s = <-f.last
	assert.Equal(t, "user-2", s.header.Get(HeaderPrincipalID))
	assert.NotEqual(t, first.Get(HeaderPrincipal), s.header.Get(HeaderPrincipal))
	assert.Equal(t, freshHeaders(t, s.id).Get(HeaderPrincipal), s.header.Get(HeaderPrincipal))
	assert.Equal(t, "oidc|"+f.op.URL+"|user-2", s.principal)
}

// TestRememberedTokenOwner: the owner of a request with a token is its
// principal's (caller.Caller.Owner), worked out once with the token's
// cache entry.
func TestRememberedTokenOwner(t *testing.T) {
	f := newFixture(t, nil)
	token := f.op.Token(t, f.claims("Tools.Read"))
	var got []owner.ID
	h := f.guard.Protect(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got = append(got, caller.Of(r).Owner()) }))
	for range 2 {
		r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:7071/runtime/webhooks/mcp", strings.NewReader(callList))
		r.Header.Set("Authorization", "Bearer "+token)
		h.ServeHTTP(httptest.NewRecorder(), r)
	}
	want := owner.NewPrincipalOwner("oidc|" + f.op.URL + "|user-1").ID()
	assert.Equal(t, []owner.ID{want, want}, got)
}

// TestVerifierCacheIsBounded: the remembered tokens (each with its
// identity headers) never pass CacheEntries: a full cache is emptied.
func TestVerifierCacheIsBounded(t *testing.T) {
	op := testutil.StartOIDC(t)
	cfg := &Config{Issuer: op.URL, Audiences: []string{testAudience}}
	v := NewVerifier(t.Context(), cfg, nil)
	token := op.Token(t, testutil.Claims(op.URL, testAudience, "user-1"))
	first, err := v.Verify(t.Context(), token)
	require.NoError(t, err)
	v.cacheMu.Lock()
	for i := range CacheEntries - 1 {
		v.cache[sha256.Sum256([]byte(strconv.Itoa(i)))] = cachedToken{id: first, until: v.now().Add(time.Hour)}
	}
	require.Len(t, v.cache, CacheEntries)
	v.cacheMu.Unlock()
	other, err := v.Verify(t.Context(), op.Token(t, testutil.Claims(op.URL, testAudience, "user-2")))
	require.NoError(t, err)
	assert.Equal(t, "user-2", other.Subject)
	v.cacheMu.Lock()
	assert.Len(t, v.cache, 1)
	v.cacheMu.Unlock()
}

// TestEncodedIdentityHeaders: a remembered token's identity headers come
// encoded once, as members of the invocation's headers object, for the
// values its requests get and only those; encoding them costs nothing per
// request.
func TestEncodedIdentityHeaders(t *testing.T) {
	f := newFixture(t, nil)
	token := f.op.Token(t, f.claims("Tools.Read"))
	require.Equal(t, http.StatusOK, f.do(t, token, callList).StatusCode)
	s := <-f.last
	require.NotNil(t, s.id)
	var set int
	for name, values := range s.header {
		if !IsReserved(name) {
			_, ok := s.id.EncodedHeader(name, values[0])
			assert.False(t, ok, "%s is no identity header", name)
			continue
		}
		set++
		require.Len(t, values, 1)
		member, ok := s.id.EncodedHeader(name, values[0])
		require.True(t, ok, name)
		want := metadata.AppendJSONString(nil, name)
		want = append(want, ':')
		assert.Equal(t, string(metadata.AppendJSONString(want, values[0])), member)
		_, ok = s.id.EncodedHeader(name, values[0]+"x")
		assert.False(t, ok, "another value of %s is encoded again", name)
		allocs := testing.AllocsPerRun(100, func() { _, _ = s.id.EncodedHeader(name, values[0]) })
		assert.Zero(t, allocs)
	}
	assert.GreaterOrEqual(t, set, 2, "the principal and its id at least")
	_, ok := identityOf(s.id.Claims).EncodedHeader(HeaderPrincipalID, s.header.Get(HeaderPrincipalID))
	assert.False(t, ok, "an identity not prepared has none encoded")
	_, ok = (*Identity)(nil).EncodedHeader(HeaderPrincipalID, "")
	assert.False(t, ok)
}
