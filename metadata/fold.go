package metadata

import (
	"iter"
	"strings"
)

// LookupFold returns the value of key among all: the value of a key spelled
// exactly like key when there is one, else the first key equal to it under
// Unicode case folding. It is the one rule for the case-insensitive lookups
// of the contract (binding keys, invocation Data, arguments, headers,
// envelope fields, host.json keys), as the Functions host and the .NET
// worker match them.
func LookupFold[V any](all iter.Seq2[string, V], key string) (V, bool) {
	var (
		folded V
		found  bool
	)
	for k, v := range all {
		if k == key {
			return v, true
		}
		if !found && strings.EqualFold(k, key) {
			folded, found = v, true
		}
	}
	return folded, found
}

// LookupFoldMap is [LookupFold] over a map, with the exact key looked up
// first. When several keys of m fold to key and none is exact, the smallest
// of them (in byte order) wins, so the answer never depends on the map's
// iteration order.
func LookupFoldMap[V any](m map[string]V, key string) (V, bool) {
	if v, ok := m[key]; ok {
		return v, true
	}
	var (
		best  string
		value V
		found bool
	)
	for k, v := range m {
		if strings.EqualFold(k, key) && (!found || k < best) {
			best, value, found = k, v, true
		}
	}
	return value, found
}
