package auth

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"

	"github.com/funcmcp/funcmcp/host/internal/owner"
)

// Where a function key travels in a request.
const (
	// HeaderFunctionsKey is the request header holding a function key.
	HeaderFunctionsKey = "X-Functions-Key"
	// QueryCode is the query parameter holding a function key.
	QueryCode = "code"
)

// SystemKeyName is the name of the MCP extension's system key.
const SystemKeyName = "mcp_extension"

// Keys are the keys a request may present. The zero value and a nil *Keys
// accept no key at all.
type Keys struct {
	sums [][sha256.Size]byte
	// owners are the owners of the keys' holders (owner.KeyOwner), by
	// the index of sums.
	owners []owner.ID
}

// NewKeys returns the set of the non-empty keys given.
func NewKeys(keys ...string) *Keys {
	k := &Keys{}
	for _, key := range keys {
		if key != "" {
			k.sums = append(k.sums, sha256.Sum256([]byte(key)))
			k.owners = append(k.owners, owner.KeyOwner(key))
		}
	}
	return k
}

// Empty reports whether no key would be accepted.
func (k *Keys) Empty() bool { return k == nil || len(k.sums) == 0 }

// Match reports whether key is one of the keys. Every known key is compared,
// over fixed-length digests, so the time taken says nothing about the key.
func (k *Keys) Match(key string) bool { return k.match(key) >= 0 }

// match returns the index of key among the keys, -1 when it is none.
func (k *Keys) match(key string) int {
	if k == nil || key == "" {
		return -1
	}
	got := sha256.Sum256([]byte(key))
	found := -1
	for i := range k.sums {
		found = subtle.ConstantTimeSelect(subtle.ConstantTimeCompare(got[:], k.sums[i][:]), i, found)
	}
	return found
}

// Verify reports whether r carries one of the keys in its x-functions-key
// header or its code query parameter.
func (k *Keys) Verify(r *http.Request) bool {
	_, ok := k.Owner(r)
	return ok
}

// Owner returns the owner of the holders of the key r carries
// (owner.KeyOwner, worked out once per key), false when r carries none of
// the keys.
func (k *Keys) Owner(r *http.Request) (owner.ID, bool) {
	i := k.match(RequestKey(r))
	if i < 0 {
		return "", false
	}
	return k.owners[i], true
}

// RequestKey returns the function key a request presents: the
// x-functions-key header, else the code query parameter; "" when none.
func RequestKey(r *http.Request) string {
	if vals := r.Header[HeaderFunctionsKey]; len(vals) > 0 && vals[0] != "" {
		return vals[0]
	}
	if r.URL == nil || r.URL.RawQuery == "" {
		return ""
	}
	return r.URL.Query().Get(QueryCode)
}
