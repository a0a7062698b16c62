package binding

import (
	"bytes"
	"encoding/json"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"
)

// A fastNode is one schema of the subset of JSON Schema 2020-12 that
// [Schema.ValidateJSON] checks straight on the JSON text, without decoding
// it into Go values first: type, properties, required,
// additionalProperties, items, min/maxItems, min/maxProperties, enum,
// const, minimum, maximum, exclusiveMinimum, exclusiveMaximum, min/maxLength,
// local $ref into $defs, and the annotations (title, description, format,
// …). A schema that uses anything else has no fast check.
//
// The fast check only ever says "valid" when the compiled validator would
// too; whenever it cannot tell (a value that breaks the schema, a number at
// a bound, an integer written with a fraction, an escape in a string it must
// measure, …) the value is decoded and validated as before, and that result
// (with its error messages) is the answer.
type fastNode struct {
	any     bool // true schema: anything
	never   bool // false schema: nothing
	types   uint8
	props   map[string]*fastNode
	req     []string
	noExtra bool      // additionalProperties: false
	extra   *fastNode // additionalProperties as a schema
	items   *fastNode
	minN    int // items or properties, -1 when unset
	maxN    int
	enum    []fastConst // enum and const values, nil when unset
	hasEnum bool
	bounds  []fastBound
	minLen  int
	maxLen  int
	ref     *fastNode
	refName string
	bare    bool // only a $ref (and annotations)
}

const (
	tNull uint8 = 1 << iota
	tBool
	tNumber
	tInteger
	tString
	tArray
	tObject
)

var typeBits = map[string]uint8{
	"null": tNull, "boolean": tBool, "number": tNumber, "integer": tInteger,
	"string": tString, "array": tArray, "object": tObject,
}

// fastConst is an enum or const value the fast check compares: a string, a
// number, true, false or null.
type fastConst struct {
	kind uint8 // tString, tNumber, tBool, tNull
	str  string
	num  *big.Rat
	b    bool
}

// fastBound is minimum, maximum or an exclusive bound.
type fastBound struct {
	v         *big.Rat
	f         float64
	upper     bool
	exclusive bool
}

// annotations are the keywords that never change whether a value is valid
// (format is an annotation in 2020-12 unless the format-assertion
// vocabulary is on, which funcmcp never turns on).
var annotations = map[string]bool{
	"title": true, "description": true, "examples": true, "default": true, "deprecated": true,
	"readOnly": true, "writeOnly": true, "$comment": true, "format": true, "contentMediaType": true,
	"contentEncoding": true,
}

// compileFast builds the fast check of a schema document (decoded with
// encoding/json and UseNumber), or returns nil when it uses anything outside
// the subset.
func compileFast(doc any) *fastNode {
	root, ok := doc.(map[string]any)
	if !ok {
		return nil
	}
	if s, ok := root["$schema"]; ok && s != "https://json-schema.org/draft/2020-12/schema" {
		return nil
	}
	fc := &fastCompiler{root: root, defs: map[string]*fastNode{}}
	n := fc.node(doc, true)
	if n == nil || fc.failed {
		return nil
	}
	for _, d := range fc.pending {
		target := fc.defs[d.refName]
		if target == nil {
			return nil
		}
		d.ref = target
	}
	return n
}

type fastCompiler struct {
	root    map[string]any
	defs    map[string]*fastNode
	pending []*fastNode
	failed  bool
	depth   int
}

func (fc *fastCompiler) node(v any, isRoot bool) *fastNode {
	fc.depth++
	defer func() { fc.depth-- }()
	if fc.depth > 64 {
		fc.failed = true
		return nil
	}
	switch s := v.(type) {
	case bool:
		return &fastNode{any: s, never: !s}
	case map[string]any:
		n := &fastNode{minN: -1, maxN: -1, minLen: -1, maxLen: -1}
		isObjectish, isArrayish := false, false
		constraints := 0
		for k, val := range s {
			if !annotations[k] && k != "$schema" && k != "$defs" && k != "$ref" {
				constraints++
			}
			switch {
			case annotations[k]:
			case k == "$schema" && isRoot:
			case k == "$defs" && isRoot:
				defs, ok := val.(map[string]any)
				if !ok {
					return fc.fail()
				}
				for name, d := range defs {
					dn := fc.node(d, false)
					if dn == nil {
						return fc.fail()
					}
					fc.defs[name] = dn
				}
			case k == "type":
				switch t := val.(type) {
				case string:
					if typeBits[t] == 0 {
						return fc.fail()
					}
					n.types |= typeBits[t]
				case []any:
					for _, e := range t {
						es, ok := e.(string)
						if !ok || typeBits[es] == 0 {
							return fc.fail()
						}
						n.types |= typeBits[es]
					}
				default:
					return fc.fail()
				}
			case k == "properties":
				props, ok := val.(map[string]any)
				if !ok {
					return fc.fail()
				}
				n.props = make(map[string]*fastNode, len(props))
				for name, p := range props {
					pn := fc.node(p, false)
					if pn == nil {
						return fc.fail()
					}
					n.props[name] = pn
				}
				isObjectish = true
			case k == "required":
				req, ok := val.([]any)
				if !ok {
					return fc.fail()
				}
				for _, r := range req {
					if name, ok := r.(string); ok { // others are dropped, as by ParseSchema
						n.req = append(n.req, name)
					}
				}
				if len(n.req) > 64 {
					return fc.fail()
				}
				isObjectish = true
			case k == "additionalProperties":
				if b, ok := val.(bool); ok {
					n.noExtra = !b
				} else if n.extra = fc.node(val, false); n.extra == nil {
					return fc.fail()
				}
				isObjectish = true
			case k == "items":
				if n.items = fc.node(val, false); n.items == nil {
					return fc.fail()
				}
				isArrayish = true
			case k == "minItems" || k == "maxItems":
				if !fc.count(val, k == "minItems", n) {
					return fc.fail()
				}
				isArrayish = true
			case k == "minProperties" || k == "maxProperties":
				if !fc.count(val, k == "minProperties", n) {
					return fc.fail()
				}
				isObjectish = true
			case k == "minLength" || k == "maxLength":
				c, ok := toCount(val)
				if !ok {
					return fc.fail()
				}
				if k == "minLength" {
					n.minLen = c
				} else {
					n.maxLen = c
				}
			case k == "enum" || k == "const":
				vals := []any{val}
				if k == "enum" {
					e, ok := val.([]any)
					if !ok {
						return fc.fail()
					}
					vals = e
				}
				if n.hasEnum { // enum and const together: not worth it
					return fc.fail()
				}
				n.hasEnum = true
				for _, e := range vals {
					c, ok := toConst(e)
					if !ok {
						return fc.fail()
					}
					n.enum = append(n.enum, c)
				}
			case k == "minimum" || k == "maximum" || k == "exclusiveMinimum" || k == "exclusiveMaximum":
				num, ok := val.(json.Number)
				if !ok {
					return fc.fail()
				}
				r, ok := new(big.Rat).SetString(string(num))
				if !ok {
					return fc.fail()
				}
				f, _ := r.Float64()
				n.bounds = append(n.bounds, fastBound{v: r, f: f, upper: strings.Contains(k, "ax"), exclusive: strings.HasPrefix(k, "exclusive")})
			case k == "$ref":
				ref, ok := val.(string)
				name, found := strings.CutPrefix(ref, "#/$defs/")
				if !ok || !found || name == "" || strings.ContainsAny(name, "/~%") {
					return fc.fail()
				}
				n.refName = name
				fc.pending = append(fc.pending, n)
			default:
				return fc.fail()
			}
		}
		// min/max counts apply to arrays and objects alike in this node;
		// one node using both kinds of keywords is not worth telling apart.
		if isObjectish && isArrayish {
			return fc.fail()
		}
		if n.minN >= 0 || n.maxN >= 0 {
			if !isObjectish && !isArrayish {
				return fc.fail()
			}
		}
		n.bare = n.refName != "" && constraints == 0
		return n
	}
	return fc.fail()
}

func (fc *fastCompiler) fail() *fastNode {
	fc.failed = true
	return nil
}

func (fc *fastCompiler) count(val any, isMin bool, n *fastNode) bool {
	c, ok := toCount(val)
	if !ok {
		return false
	}
	if isMin {
		n.minN = c
	} else {
		n.maxN = c
	}
	return true
}

func toCount(v any) (int, bool) {
	num, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	i, err := strconv.Atoi(string(num))
	return i, err == nil && i >= 0
}

func toConst(v any) (fastConst, bool) {
	switch c := v.(type) {
	case string:
		return fastConst{kind: tString, str: c}, true
	case json.Number:
		r, ok := new(big.Rat).SetString(string(c))
		return fastConst{kind: tNumber, num: r}, ok
	case bool:
		return fastConst{kind: tBool, b: c}, true
	case nil:
		return fastConst{kind: tNull}, true
	}
	return fastConst{}, false
}

// fastValid reports whether data is certainly valid against n: one pass
// over the JSON text, no values built. false means "not certain".
func fastValid(n *fastNode, data []byte) bool {
	s := fastScanner{data: data}
	s.ws()
	if !s.value(n, 0) {
		return false
	}
	s.ws()
	return s.i == len(s.data)
}

type fastScanner struct {
	data []byte
	i    int
}

func (s *fastScanner) ws() {
	for s.i < len(s.data) {
		switch s.data[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

const maxFastDepth = 200

// value checks one JSON value against n (nil: anything).
func (s *fastScanner) value(n *fastNode, depth int) bool {
	if depth > maxFastDepth || s.i >= len(s.data) {
		return false
	}
	for hops := 0; n != nil && n.bare; hops++ {
		if hops > 32 { // $ref to $ref to …
			return false
		}
		n = n.ref
	}
	if n != nil && n.never {
		return false
	}
	if n != nil && n.any {
		n = nil
	}
	if n != nil && n.ref != nil {
		// $ref beside other keywords: check both on the same text.
		start := s.i
		if !s.value(n.ref, depth+1) {
			return false
		}
		s.i = start
		m := *n
		m.ref = nil
		return s.value(&m, depth+1)
	}
	switch c := s.data[s.i]; {
	case c == '{':
		return s.object(n, depth)
	case c == '[':
		return s.array(n, depth)
	case c == '"':
		return s.str(n)
	case c == 't' || c == 'f':
		lit := "true"
		if c == 'f' {
			lit = "false"
		}
		if !bytes.HasPrefix(s.data[s.i:], []byte(lit)) {
			return false
		}
		s.i += len(lit)
		return n == nil || (n.allows(tBool) && n.enumHas(fastConst{kind: tBool, b: c == 't'}))
	case c == 'n':
		if !bytes.HasPrefix(s.data[s.i:], []byte("null")) {
			return false
		}
		s.i += 4
		return n == nil || (n.allows(tNull) && n.enumHas(fastConst{kind: tNull}))
	case c == '-' || (c >= '0' && c <= '9'):
		return s.number(n)
	}
	return false
}

func (n *fastNode) allows(t uint8) bool { return n.types == 0 || n.types&t != 0 }

// enumHas reports whether c is one of n's enum values (true without enum).
// Numbers are compared elsewhere.
func (n *fastNode) enumHas(c fastConst) bool {
	if !n.hasEnum {
		return true
	}
	for _, e := range n.enum {
		if e.kind == c.kind && e.str == c.str && e.b == c.b {
			return true
		}
	}
	return false
}

func (s *fastScanner) object(n *fastNode, depth int) bool {
	if n != nil && !n.allows(tObject) {
		return false
	}
	var seen uint64
	count, ok := s.members('}', func() bool {
		key, ok := s.key()
		if !ok {
			return false
		}
		s.ws()
		if s.i >= len(s.data) || s.data[s.i] != ':' {
			return false
		}
		s.i++
		s.ws()
		var child *fastNode
		if n != nil {
			// string(key) in these expressions does not allocate.
			if p, ok := n.props[string(key)]; ok {
				child = p
			} else if n.noExtra {
				return false
			} else {
				child = n.extra
			}
			for j, r := range n.req {
				if r == string(key) {
					seen |= 1 << j
				}
			}
		}
		return s.value(child, depth+1)
	})
	if !ok || n == nil {
		return ok
	}
	return seen == (uint64(1)<<len(n.req))-1 && n.counts(count)
}

// counts checks the number of items or properties, and that no keyword for
// scalars constrains the container.
func (n *fastNode) counts(count int) bool {
	return (n.minN < 0 || count >= n.minN) && (n.maxN < 0 || count <= n.maxN) && !n.hasEnum && n.bounds == nil
}

// members scans the members of an object or array whose opening bracket is
// at s.i, calling each at the start of every member, and counts them.
func (s *fastScanner) members(closing byte, each func() bool) (int, bool) {
	s.i++ // the opening bracket
	s.ws()
	if s.i < len(s.data) && s.data[s.i] == closing {
		s.i++
		return 0, true
	}
	for count := 1; ; count++ {
		s.ws()
		if !each() {
			return 0, false
		}
		s.ws()
		if s.i >= len(s.data) {
			return 0, false
		}
		switch s.data[s.i] {
		case closing:
			s.i++
			return count, true
		case ',':
			s.i++
		default:
			return 0, false
		}
	}
}

// key reads an object key; keys with escapes are decoded.
func (s *fastScanner) key() ([]byte, bool) {
	start := s.i
	raw, escaped, ok := s.strRaw()
	if !ok || !utf8.Valid(raw) {
		return nil, false
	}
	if !escaped {
		return raw, true
	}
	var k string
	if json.Unmarshal(s.data[start:s.i], &k) != nil {
		return nil, false
	}
	return []byte(k), true
}

func (s *fastScanner) array(n *fastNode, depth int) bool {
	if n != nil && !n.allows(tArray) {
		return false
	}
	var items *fastNode
	if n != nil {
		items = n.items
	}
	count, ok := s.members(']', func() bool { return s.value(items, depth+1) })
	if !ok || n == nil {
		return ok
	}
	return n.counts(count)
}

// strRaw scans a string, checking it is valid JSON, and returns its content
// between the quotes and whether it has escapes.
func (s *fastScanner) strRaw() ([]byte, bool, bool) {
	if s.i >= len(s.data) || s.data[s.i] != '"' {
		return nil, false, false
	}
	s.i++
	start := s.i
	escaped := false
	for s.i < len(s.data) {
		c := s.data[s.i]
		switch {
		case c == '"':
			raw := s.data[start:s.i]
			s.i++
			return raw, escaped, true
		case c == '\\':
			escaped = true
			if s.i+1 >= len(s.data) {
				return nil, false, false
			}
			switch s.data[s.i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.i += 2
			case 'u':
				if s.i+6 > len(s.data) {
					return nil, false, false
				}
				for _, h := range s.data[s.i+2 : s.i+6] {
					if !isHex(h) {
						return nil, false, false
					}
				}
				s.i += 6
			default:
				return nil, false, false
			}
		case c < 0x20:
			return nil, false, false
		default:
			s.i++
		}
	}
	return nil, false, false
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func (s *fastScanner) str(n *fastNode) bool {
	raw, escaped, ok := s.strRaw()
	if !ok {
		return false
	}
	if n == nil {
		return true
	}
	if !n.allows(tString) || n.bounds != nil || n.minN >= 0 || n.maxN >= 0 {
		return false
	}
	if n.minLen < 0 && n.maxLen < 0 && !n.hasEnum {
		return true
	}
	if escaped || !utf8.Valid(raw) {
		return false // measuring or comparing it needs decoding
	}
	if n.minLen >= 0 || n.maxLen >= 0 {
		l := utf8.RuneCount(raw)
		if (n.minLen >= 0 && l < n.minLen) || (n.maxLen >= 0 && l > n.maxLen) {
			return false
		}
	}
	if n.hasEnum {
		for _, e := range n.enum {
			if e.kind == tString && e.str == string(raw) {
				return true
			}
		}
		return false
	}
	return true
}

func (s *fastScanner) number(n *fastNode) bool {
	start := s.i
	if s.data[s.i] == '-' {
		s.i++
	}
	if s.i >= len(s.data) {
		return false
	}
	if s.data[s.i] == '0' {
		s.i++
	} else if s.data[s.i] >= '1' && s.data[s.i] <= '9' {
		for s.i < len(s.data) && s.data[s.i] >= '0' && s.data[s.i] <= '9' {
			s.i++
		}
	} else {
		return false
	}
	plain := true // no fraction, no exponent
	if s.i < len(s.data) && s.data[s.i] == '.' {
		plain = false
		s.i++
		if !s.digits() {
			return false
		}
	}
	if s.i < len(s.data) && (s.data[s.i] == 'e' || s.data[s.i] == 'E') {
		plain = false
		s.i++
		if s.i < len(s.data) && (s.data[s.i] == '+' || s.data[s.i] == '-') {
			s.i++
		}
		if !s.digits() {
			return false
		}
	}
	if n == nil {
		return true
	}
	switch {
	case n.types == 0 || n.types&tNumber != 0:
	case n.types&tInteger != 0 && plain:
	default:
		return false // not a number here, or an integer written as 2.0 or 1e3
	}
	if n.minLen >= 0 || n.maxLen >= 0 || n.minN >= 0 || n.maxN >= 0 {
		return false
	}
	lit := s.data[start:s.i]
	if len(n.bounds) == 0 && !n.hasEnum {
		return true
	}
	f, err := strconv.ParseFloat(string(lit), 64)
	if err != nil {
		return false
	}
	var exact *big.Rat
	rat := func() *big.Rat {
		if exact == nil {
			exact, _ = new(big.Rat).SetString(string(lit))
		}
		return exact
	}
	for _, b := range n.bounds {
		var cmp int
		switch {
		case f < b.f:
			cmp = -1
		case f > b.f:
			cmp = 1
		default: // equal as floats: compare exactly
			r := rat()
			if r == nil {
				return false
			}
			cmp = r.Cmp(b.v)
		}
		switch {
		case b.upper && b.exclusive && cmp >= 0, b.upper && !b.exclusive && cmp > 0,
			!b.upper && b.exclusive && cmp <= 0, !b.upper && !b.exclusive && cmp < 0:
			return false
		}
	}
	if n.hasEnum {
		r := rat()
		if r == nil {
			return false
		}
		for _, e := range n.enum {
			if e.kind == tNumber && e.num.Cmp(r) == 0 {
				return true
			}
		}
		return false
	}
	return true
}

func (s *fastScanner) digits() bool {
	start := s.i
	for s.i < len(s.data) && s.data[s.i] >= '0' && s.data[s.i] <= '9' {
		s.i++
	}
	return s.i > start
}
