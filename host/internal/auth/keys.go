package auth

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
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
}

// NewKeys returns the set of the non-empty keys given.
func NewKeys(keys ...string) *Keys {
	k := &Keys{}
	for _, key := range keys {
		if key != "" {
			k.sums = append(k.sums, sha256.Sum256([]byte(key)))
		}
	}
	return k
}

// Empty reports whether no key would be accepted.
func (k *Keys) Empty() bool { return k == nil || len(k.sums) == 0 }

// Match reports whether key is one of the keys. Every known key is compared,
// over fixed-length digests, so the time taken says nothing about the key.
func (k *Keys) Match(key string) bool {
	if k == nil || key == "" {
		return false
	}
	got := sha256.Sum256([]byte(key))
	ok := 0
	for i := range k.sums {
		ok |= subtle.ConstantTimeCompare(got[:], k.sums[i][:])
	}
	return ok == 1
}

// Verify reports whether r carries one of the keys in its x-functions-key
// header or its code query parameter.
func (k *Keys) Verify(r *http.Request) bool {
	key := RequestKey(r)
	return k.Match(key)
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
