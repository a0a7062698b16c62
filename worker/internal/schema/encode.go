package schema

import (
	"math"
	"reflect"
	"slices"
	"strconv"

	"github.com/funcmcp/funcmcp/metadata"
	"github.com/google/jsonschema-go/jsonschema"
)

// Encode returns the JSON of s as jsonschema.Schema's MarshalJSON writes it
// without HTML escapes (what [metadata.UnescapeHTML] makes of
// json.Marshal(s)), byte for byte, written in one pass: MarshalJSON
// marshals every node of the tree through encoding/json and reflection
// and compacts its output again at every level, which was most of the
// time an app took to declare its typed tools at start-up.
//
// It writes the fields [For] sets (and a few more of the same kinds); false
// when s, or a schema in it, sets any other field or breaks a rule
// MarshalJSON checks, and the caller then marshals s with encoding/json.
func Encode(s *jsonschema.Schema) ([]byte, bool) {
	e := encoder{buf: make([]byte, 0, 512)}
	if !e.schema(s) {
		return nil, false
	}
	return e.buf, true
}

type encoder struct {
	buf   []byte
	first bool // no member written yet in the object being written
}

// encoded is the set of fields Encode writes; a schema that sets any other
// is left to encoding/json.
func encoded(s *jsonschema.Schema) bool {
	rest := *s
	rest.Type, rest.Types, rest.Properties, rest.PropertyOrder, rest.Items = "", nil, nil, nil, nil
	rest.Ref, rest.Defs, rest.Title, rest.Description, rest.Enum = "", nil, "", "", nil
	rest.Minimum, rest.Maximum, rest.ExclusiveMinimum, rest.ExclusiveMaximum = nil, nil, nil, nil
	rest.MinLength, rest.MaxLength, rest.Pattern, rest.MinItems, rest.MaxItems = nil, nil, "", nil, nil
	rest.Required, rest.AdditionalProperties, rest.AllOf, rest.AnyOf, rest.OneOf, rest.Not = nil, nil, nil, nil, nil, nil
	rest.ContentEncoding, rest.Format = "", ""
	return reflect.ValueOf(rest).IsZero()
}

func (e *encoder) schema(s *jsonschema.Schema) bool {
	if s == nil {
		e.buf = append(e.buf, "null"...)
		return true
	}
	if !encoded(s) || (s.Type != "" && s.Types != nil) || hasDuplicate(s.PropertyOrder) {
		return false
	}
	start := len(e.buf)
	e.buf = append(e.buf, '{')
	e.first = true
	// The order of MarshalJSON: "type", "properties" and "items" first,
	// then the struct's fields in their order.
	switch {
	case s.Type != "":
		e.key("type")
		e.buf = metadata.AppendJSONString(e.buf, s.Type)
	case s.Types != nil:
		e.key("type")
		e.strings(s.Types)
	}
	if s.Properties != nil {
		e.key("properties")
		if !e.properties(s.Properties, s.PropertyOrder) {
			return false
		}
	}
	if s.Items != nil && !e.member("items", s.Items) {
		return false
	}
	e.str("$ref", s.Ref)
	if s.Defs != nil && !e.schemaMap("$defs", s.Defs) {
		return false
	}
	e.str("title", s.Title)
	e.str("description", s.Description)
	if len(s.Enum) > 0 {
		e.key("enum")
		e.buf = append(e.buf, '[')
		for i, v := range s.Enum {
			str, ok := v.(string)
			if !ok {
				return false
			}
			if i > 0 {
				e.buf = append(e.buf, ',')
			}
			e.buf = metadata.AppendJSONString(e.buf, str)
		}
		e.buf = append(e.buf, ']')
	}
	if !e.float("minimum", s.Minimum) || !e.float("maximum", s.Maximum) ||
		!e.float("exclusiveMinimum", s.ExclusiveMinimum) || !e.float("exclusiveMaximum", s.ExclusiveMaximum) {
		return false
	}
	e.int("minLength", s.MinLength)
	e.int("maxLength", s.MaxLength)
	e.str("pattern", s.Pattern)
	e.int("minItems", s.MinItems)
	e.int("maxItems", s.MaxItems)
	if len(s.Required) > 0 {
		e.key("required")
		e.strings(s.Required)
	}
	if s.AdditionalProperties != nil && !e.member("additionalProperties", s.AdditionalProperties) {
		return false
	}
	if !e.list("allOf", s.AllOf) || !e.list("anyOf", s.AnyOf) || !e.list("oneOf", s.OneOf) {
		return false
	}
	if s.Not != nil && !e.member("not", s.Not) {
		return false
	}
	e.str("contentEncoding", s.ContentEncoding)
	e.str("format", s.Format)
	e.buf = append(e.buf, '}')
	// MarshalJSON writes {} as true and {"not":true} as false.
	switch string(e.buf[start:]) {
	case `{}`:
		e.buf = append(e.buf[:start], "true"...)
	case `{"not":true}`:
		e.buf = append(e.buf[:start], "false"...)
	}
	e.first = false
	return true
}

// key writes the name of the next member of the object being written.
func (e *encoder) key(name string) {
	if !e.first {
		e.buf = append(e.buf, ',')
	}
	e.first = false
	e.buf = metadata.AppendJSONString(e.buf, name)
	e.buf = append(e.buf, ':')
}

func (e *encoder) member(name string, s *jsonschema.Schema) bool {
	e.key(name)
	return e.schema(s)
}

func (e *encoder) str(name, v string) {
	if v != "" {
		e.key(name)
		e.buf = metadata.AppendJSONString(e.buf, v)
	}
}

func (e *encoder) int(name string, v *int) {
	if v != nil {
		e.key(name)
		e.buf = strconv.AppendInt(e.buf, int64(*v), 10)
	}
}

// float writes v as encoding/json writes a float64; false for a value it
// refuses (NaN, ±Inf).
func (e *encoder) float(name string, v *float64) bool {
	if v == nil {
		return true
	}
	f := *v
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return false
	}
	e.key(name)
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	e.buf = strconv.AppendFloat(e.buf, f, format, -1, 64)
	if format == 'e' { // e-09 → e-9, as encoding/json does
		if n := len(e.buf); n >= 4 && e.buf[n-4] == 'e' && e.buf[n-3] == '-' && e.buf[n-2] == '0' {
			e.buf[n-2] = e.buf[n-1]
			e.buf = e.buf[:n-1]
		}
	}
	return true
}

func (e *encoder) strings(v []string) {
	e.buf = append(e.buf, '[')
	for i, s := range v {
		if i > 0 {
			e.buf = append(e.buf, ',')
		}
		e.buf = metadata.AppendJSONString(e.buf, s)
	}
	e.buf = append(e.buf, ']')
}

func (e *encoder) list(name string, v []*jsonschema.Schema) bool {
	if len(v) == 0 {
		return true
	}
	e.key(name)
	e.buf = append(e.buf, '[')
	for i, s := range v {
		if i > 0 {
			e.buf = append(e.buf, ',')
		}
		if !e.schema(s) {
			return false
		}
	}
	e.buf = append(e.buf, ']')
	return true
}

// properties writes the names of order first (those in props), then the
// rest sorted, as MarshalJSON does.
func (e *encoder) properties(props map[string]*jsonschema.Schema, order []string) bool {
	e.buf = append(e.buf, '{')
	first := true
	write := func(name string) bool {
		if !first {
			e.buf = append(e.buf, ',')
		}
		first = false
		e.buf = metadata.AppendJSONString(e.buf, name)
		e.buf = append(e.buf, ':')
		return e.schema(props[name])
	}
	listed := 0
	for _, name := range order {
		if _, ok := props[name]; ok {
			listed++
			if !write(name) {
				return false
			}
		}
	}
	if listed < len(props) {
		rest := make([]string, 0, len(props)-listed)
		for name := range props {
			if !slices.Contains(order, name) {
				rest = append(rest, name)
			}
		}
		slices.Sort(rest)
		for _, name := range rest {
			if !write(name) {
				return false
			}
		}
	}
	e.buf = append(e.buf, '}')
	return true
}

// schemaMap writes a map of schemas with its keys sorted, as encoding/json
// writes a map.
func (e *encoder) schemaMap(name string, m map[string]*jsonschema.Schema) bool {
	if len(m) == 0 {
		return true
	}
	e.key(name)
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	e.buf = append(e.buf, '{')
	for i, k := range keys {
		if i > 0 {
			e.buf = append(e.buf, ',')
		}
		e.buf = metadata.AppendJSONString(e.buf, k)
		e.buf = append(e.buf, ':')
		if !e.schema(m[k]) {
			return false
		}
	}
	e.buf = append(e.buf, '}')
	return true
}

func hasDuplicate(v []string) bool {
	for i, s := range v {
		if slices.Contains(v[i+1:], s) {
			return true
		}
	}
	return false
}
