package binding

import (
	"encoding/json"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/funcmcp/funcmcp/internal/jsonx"
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
// over the JSON text (a [jsonx.Scanner], which also checks the grammar), no
// values built. false means "not certain".
func fastValid(n *fastNode, data []byte) bool {
	s := fastScanner{jsonx.NewScanner(data)}
	s.Space()
	return s.value(n, 0) && s.End()
}

// fastScanner checks values against fast nodes on top of the module's JSON
// scanner: the grammar is jsonx's, the schema rules are binding's.
type fastScanner struct{ jsonx.Scanner }

const maxFastDepth = 200

// value checks one JSON value against n (nil: anything).
func (s *fastScanner) value(n *fastNode, depth int) bool {
	if depth > maxFastDepth {
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
	if n == nil || n.any {
		return s.Skip()
	}
	if n.ref != nil {
		// $ref beside other keywords: check both on the same text.
		start := s.Pos()
		if !s.value(n.ref, depth+1) {
			return false
		}
		s.Seek(start)
		m := *n
		m.ref = nil
		return s.value(&m, depth+1)
	}
	switch c := s.Peek(); {
	case c == '{':
		return s.object(n, depth)
	case c == '[':
		return s.array(n, depth)
	case c == '"':
		return s.str(n)
	case c == 't' || c == 'f':
		if !s.Literal("true") && !s.Literal("false") {
			return false
		}
		return n.allows(tBool) && n.enumHas(fastConst{kind: tBool, b: c == 't'})
	case c == 'n':
		if !s.Literal("null") {
			return false
		}
		return n.allows(tNull) && n.enumHas(fastConst{kind: tNull})
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
	if !n.allows(tObject) {
		return false
	}
	var seen uint64
	count, ok := s.Object(func(key []byte, escaped bool) bool {
		key, ok := decodedKey(key, escaped)
		if !ok {
			return false
		}
		var child *fastNode
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
		return s.value(child, depth+1)
	})
	return ok && seen == (uint64(1)<<len(n.req))-1 && n.counts(count)
}

// decodedKey is a key as the validator sees it: escapes decoded. A key that
// is not valid UTF-8 is not compared here (ok false: not certain).
func decodedKey(key []byte, escaped bool) ([]byte, bool) {
	if !utf8.Valid(key) {
		return nil, false
	}
	if !escaped {
		return key, true
	}
	k, ok := jsonx.Unescape(key)
	return []byte(k), ok
}

// counts checks the number of items or properties, and that no keyword for
// scalars constrains the container.
func (n *fastNode) counts(count int) bool {
	return (n.minN < 0 || count >= n.minN) && (n.maxN < 0 || count <= n.maxN) && !n.hasEnum && n.bounds == nil
}

func (s *fastScanner) array(n *fastNode, depth int) bool {
	if !n.allows(tArray) {
		return false
	}
	count, ok := s.Array(func() bool { return s.value(n.items, depth+1) })
	return ok && n.counts(count)
}

func (s *fastScanner) str(n *fastNode) bool {
	raw, escaped, ok := s.String()
	if !ok {
		return false
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
	lit, plain, ok := s.Number()
	if !ok {
		return false
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
