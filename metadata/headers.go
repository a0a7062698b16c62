package metadata

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/funcmcp/funcmcp/internal/jsonx"
)

// Headers are the client's request headers a call carries in its transport
// properties (transport.properties.headers): names as the host wrote them,
// multi-values joined with ",", read case-insensitively ([Headers.Get]).
//
// A decoded Headers keeps the JSON object as it arrived: [Headers.Get]
// decodes only the value it finds, [Headers.Map] the whole object on its
// first call. A call whose code never reads a header does not pay for
// decoding them (the caller's identity headers alone are about 700 bytes).
// Decoding checks at once that the object holds only strings (and nulls,
// read as ""), so a malformed one fails as it did with a map. A Headers is
// safe for concurrent use; its copies share what is decoded. The zero
// Headers holds none.
type Headers struct{ s *headerSet }

type headerSet struct {
	// raw is the JSON object as it arrived, nil for a map's headers. It
	// does not change once set.
	raw   []byte
	empty bool // raw has no member
	once  sync.Once
	m     map[string]string // from raw on first read (once), or given
}

// MakeHeaders returns the headers of m, which it holds as it is: m must not
// change afterwards.
func MakeHeaders(m map[string]string) Headers {
	if m == nil {
		return Headers{}
	}
	return Headers{&headerSet{m: m}}
}

// Get returns the header called name: the value of a name spelled exactly
// like it, else of the first name equal to it under case folding
// ([LookupFoldMap] over [Headers.Map]). Headers not yet decoded are looked
// up in their JSON, decoding only the value found: reading one header (a
// traceparent) does not decode the others.
func (h Headers) Get(name string) (string, bool) {
	if h.s == nil {
		return "", false
	}
	if h.s.raw != nil {
		return lookupJSON(h.s.raw, name)
	}
	return LookupFoldMap(h.s.m, name)
}

// lookupJSON is LookupFoldMap over the map obj decodes to (an object of
// strings and nulls): of names met more than once the last value counts, as
// when decoding; names are compared as decoded.
func lookupJSON(obj []byte, name string) (string, bool) {
	var (
		exact, folded []byte // the value tokens found
		best          []byte // the smallest name folding to name
		asciiName     = !hasNonASCII(name)
	)
	found := func(key, value []byte) {
		switch {
		case string(key) == name:
			exact = value
		case asciiName && len(key) != len(name) && !hasNonASCII(key):
			// ASCII names of another length never fold to name.
		case strings.EqualFold(string(key), name):
			if folded == nil || string(key) < string(best) {
				best = key
			}
			if string(key) == string(best) {
				folded = value // the last of that name
			}
		}
	}
	sc := jsonx.NewScanner(obj)
	sc.Space()
	_, ok := sc.Object(func(key []byte, escaped bool) bool {
		sc.Space()
		start := sc.Pos()
		if !sc.Skip() {
			return false
		}
		if escaped || !utf8.Valid(key) { // decoded as encoding/json does
			k, ok := jsonx.Unescape(key)
			if !ok {
				return false
			}
			key = []byte(k)
		}
		found(key, obj[start:sc.Pos()])
		return true
	})
	v := exact
	if v == nil {
		v = folded
	}
	if !ok || v == nil {
		return "", false
	}
	s, _ := jsonx.StringValue(v) // "" for null
	return s, true
}

func hasNonASCII[T string | []byte](s T) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return true
		}
	}
	return false
}

// Map returns the headers by name, decoding them on the first call. The map
// is shared by every reader and copy of h: do not change it. It is nil for
// the zero Headers.
func (h Headers) Map() map[string]string {
	if h.s == nil {
		return nil
	}
	h.s.once.Do(h.s.decode)
	return h.s.m
}

// decode decodes raw, which was checked (an object of strings and nulls):
// no error can come of it.
func (s *headerSet) decode() {
	if s.raw != nil {
		_ = json.Unmarshal(s.raw, &s.m)
	}
}

// IsZero reports whether there are no headers (an empty object is none), so
// that the omitzero of [TransportProperties] leaves them out as omitempty
// left out an empty map.
func (h Headers) IsZero() bool {
	switch {
	case h.s == nil:
		return true
	case h.s.raw != nil:
		return h.s.empty
	default:
		return len(h.s.m) == 0
	}
}

// UnmarshalJSON keeps the JSON object, after checking that it holds only
// strings and nulls; decoding waits for the first read. JSON null leaves h
// as it is.
func (h *Headers) UnmarshalJSON(data []byte) error {
	if jsonx.IsNull(data) {
		return nil
	}
	hs, err := readHeaders(data)
	if err == nil && hs.raw != nil {
		hs.raw = bytes.Clone(data) // data is the decoder's, reused after
	}
	if err == nil {
		*h = Headers{hs}
	}
	return err
}

// HeadersOf returns the headers of the JSON object data, as UnmarshalJSON
// reads them, holding data itself: it must not change afterwards.
func HeadersOf(data []byte) (Headers, error) {
	hs, err := readHeaders(data)
	if err != nil {
		return Headers{}, err
	}
	return Headers{hs}, nil
}

// readHeaders checks that data is an object of strings and nulls and
// keeps it, not decoded; any other object of strings is decoded now.
func readHeaders(data []byte) (*headerSet, error) {
	sc := jsonx.NewScanner(data)
	sc.Space()
	n, ok := sc.Object(func([]byte, bool) bool {
		sc.Space()
		if sc.Peek() == '"' {
			_, _, ok := sc.String()
			return ok
		}
		return sc.Literal("null")
	})
	if !ok || !sc.End() {
		// Not an object of strings: the map's decoding says why.
		var m map[string]string
		if err := json.Unmarshal(data, &m); err != nil {
			return nil, err
		}
		return &headerSet{m: m}, nil
	}
	return &headerSet{raw: data, empty: n == 0}, nil
}

// MarshalJSON encodes the headers as encoding/json encodes a
// map[string]string: an object, names in sorted order.
func (h Headers) MarshalJSON() ([]byte, error) {
	return h.appendJSON(nil), nil
}

// appendJSON appends the headers as a JSON object, names in sorted order
// (null for the zero Headers).
func (h Headers) appendJSON(dst []byte) []byte {
	m := h.Map()
	if m == nil {
		return append(dst, "null"...)
	}
	dst = append(dst, '{')
	for i, k := range slices.Sorted(maps.Keys(m)) {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = AppendJSONString(dst, k)
		dst = append(dst, ':')
		dst = AppendJSONString(dst, m[k])
	}
	return append(dst, '}')
}
