// Package schema derives JSON Schema 2020-12 documents from Go types, following
// the encoding/json rules so that the schema describes exactly the JSON the
// value encodes to (and decodes from).
//
// Rules: json tags (name, "-", omitempty → not required, ",string" → string);
// fields without omitempty are required, except pointers; a `description:"…"`
// tag becomes "description" and an `enum:"a,b"` tag (string fields, or slices
// of strings) becomes "enum"; embedded structs without a json name are inlined;
// slices and arrays are arrays with items; []byte is a base64 string; maps with
// string, integer or text keys are objects with additionalProperties;
// pointers, slices and maps may encode as null, so their type also allows
// "null"; time.Time is a date-time string; json.RawMessage and interfaces are
// {} (any value); integers are "integer" (unsigned ones with minimum 0) and
// floats "number". A recursive named struct is emitted once under $defs and
// referenced with $ref ("#" for the root type).
package schema

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/funcmcp/funcmcp/metadata"
)

// Schema is a JSON Schema node. Field order is the emission order, so the
// encoded text is deterministic.
type Schema struct {
	Ref                  string    `json:"$ref,omitempty"`
	Type                 any       `json:"type,omitempty"` // string or []string
	Description          string    `json:"description,omitempty"`
	Format               string    `json:"format,omitempty"`
	ContentEncoding      string    `json:"contentEncoding,omitempty"`
	Enum                 []string  `json:"enum,omitempty"`
	Minimum              *int      `json:"minimum,omitempty"`
	Items                *Schema   `json:"items,omitempty"`
	MinItems             *int      `json:"minItems,omitempty"`
	MaxItems             *int      `json:"maxItems,omitempty"`
	Properties           *Props    `json:"properties,omitempty"`
	Required             []string  `json:"required,omitempty"`
	AdditionalProperties *Schema   `json:"additionalProperties,omitempty"`
	Defs                 *Props    `json:"$defs,omitempty"`
	AnyOf                []*Schema `json:"anyOf,omitempty"`
}

// Prop is one named schema of a [Props] list.
type Prop struct {
	Name   string
	Schema *Schema
}

// Props is an ordered JSON object of schemas.
type Props struct{ List []Prop }

// MarshalJSON writes the properties in order.
func (p *Props) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, e := range p.List {
		if i > 0 {
			buf.WriteByte(',')
		}
		k, err := metadata.Marshal(e.Name)
		if err != nil {
			return nil, err
		}
		buf.Write(k)
		buf.WriteByte(':')
		v, err := metadata.Marshal(e.Schema)
		if err != nil {
			return nil, err
		}
		buf.Write(v)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// Get returns the schema of the property called name.
func (p *Props) Get(name string) (*Schema, bool) {
	if p == nil {
		return nil, false
	}
	for _, e := range p.List {
		if e.Name == name {
			return e.Schema, true
		}
	}
	return nil, false
}

// Types returns the schema's "type" as a list ("" entries never appear).
func (s *Schema) Types() []string {
	switch t := s.Type.(type) {
	case string:
		return []string{t}
	case []string:
		return t
	}
	return nil
}

// IsObject reports whether the schema's type is exactly "object".
func (s *Schema) IsObject() bool {
	t, ok := s.Type.(string)
	return ok && t == "object"
}

// JSON returns the compact schema text, without HTML escaping.
func (s *Schema) JSON() ([]byte, error) { return metadata.Marshal(s) }

// UnsupportedTypeError is a Go type that has no JSON encoding.
type UnsupportedTypeError struct {
	Type reflect.Type
	Path string // where in the root type, e.g. "Forecast.Days[]"
}

func (e *UnsupportedTypeError) Error() string {
	if e.Path == "" {
		return fmt.Sprintf("type %s cannot be encoded as JSON", e.Type)
	}
	return fmt.Sprintf("type %s of %s cannot be encoded as JSON", e.Type, e.Path)
}

// TagError is a struct tag the reflector cannot honour.
type TagError struct {
	Path   string
	Reason string
}

func (e *TagError) Error() string { return fmt.Sprintf("field %s: %s", e.Path, e.Reason) }

var (
	timeType        = reflect.TypeFor[time.Time]()
	rawMessageType  = reflect.TypeFor[json.RawMessage]()
	numberType      = reflect.TypeFor[json.Number]()
	durationType    = reflect.TypeFor[time.Duration]()
	jsonMarshaler   = reflect.TypeFor[json.Marshaler]()
	textMarshaler   = reflect.TypeFor[encoding.TextMarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// For returns the schema of t. A pointer root is its element's schema and a
// map root is a plain object (the caller sends a nil map as {}).
func For(t reflect.Type) (*Schema, error) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	r := &reflector{root: t, defs: map[reflect.Type]*def{}, busy: map[reflect.Type]bool{}}
	s, err := r.schema(t, "", false)
	if err != nil {
		return nil, err
	}
	if t.Kind() == reflect.Map {
		// A root map is an object: the caller encodes a nil map as {}.
		s.Type = "object"
	}
	if len(r.order) > 0 {
		defs := &Props{}
		for _, d := range r.order {
			defs.List = append(defs.List, Prop{Name: d.name, Schema: d.schema})
		}
		if s.Ref != "" {
			// cannot happen: the root is inlined
			return nil, errors.New("internal error: root schema is a reference")
		}
		s.Defs = defs
	}
	return s, nil
}

type def struct {
	name      string
	schema    *Schema
	recursive bool
}

type reflector struct {
	root  reflect.Type
	defs  map[reflect.Type]*def
	order []*def
	busy  map[reflect.Type]bool
	names map[string]bool
}

var unsafeDefName = regexp.MustCompile(`[^A-Za-z0-9_]+`)

func (r *reflector) defName(t reflect.Type) string {
	base := unsafeDefName.ReplaceAllString(t.Name(), "_")
	if base == "" {
		base = "T"
	}
	if r.names == nil {
		r.names = map[string]bool{}
	}
	name := base
	for i := 2; r.names[name]; i++ {
		name = fmt.Sprintf("%s%d", base, i)
	}
	r.names[name] = true
	return name
}

func nullable(s *Schema) *Schema {
	if t, ok := s.Type.(string); ok {
		s.Type = []string{t, "null"}
		return s
	}
	if s.Ref != "" {
		return &Schema{AnyOf: []*Schema{s, {Type: "null"}}}
	}
	return s // {} already allows null
}

func (r *reflector) schema(t reflect.Type, path string, asString bool) (*Schema, error) {
	if asString {
		switch t.Kind() {
		case reflect.String, reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
			reflect.Float32, reflect.Float64:
			return &Schema{Type: "string"}, nil
		}
	}
	switch t {
	case timeType:
		return &Schema{Type: "string", Format: "date-time"}, nil
	case rawMessageType:
		return &Schema{}, nil
	case numberType:
		return &Schema{Type: "number"}, nil
	case durationType:
		return &Schema{Type: "integer"}, nil
	}
	if t.Kind() != reflect.Pointer && t.Kind() != reflect.Interface {
		if t.Implements(jsonMarshaler) || reflect.PointerTo(t).Implements(jsonMarshaler) {
			return &Schema{}, nil // its own encoding: unknown shape
		}
		if t.Implements(textMarshaler) || reflect.PointerTo(t).Implements(textMarshaler) {
			return &Schema{Type: "string"}, nil
		}
	}
	switch t.Kind() {
	case reflect.Bool:
		return &Schema{Type: "boolean"}, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return &Schema{Type: "integer"}, nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		zero := 0
		return &Schema{Type: "integer", Minimum: &zero}, nil
	case reflect.Float32, reflect.Float64:
		return &Schema{Type: "number"}, nil
	case reflect.String:
		return &Schema{Type: "string"}, nil
	case reflect.Interface:
		return &Schema{}, nil
	case reflect.Pointer:
		elem, err := r.schema(t.Elem(), path, asString)
		if err != nil {
			return nil, err
		}
		return nullable(elem), nil
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 && !t.Elem().Implements(jsonMarshaler) && !reflect.PointerTo(t.Elem()).Implements(textMarshaler) {
			return nullable(&Schema{Type: "string", ContentEncoding: "base64"}), nil
		}
		items, err := r.schema(t.Elem(), path+"[]", false)
		if err != nil {
			return nil, err
		}
		return nullable(&Schema{Type: "array", Items: items}), nil
	case reflect.Array:
		items, err := r.schema(t.Elem(), path+"[]", false)
		if err != nil {
			return nil, err
		}
		n := t.Len()
		return &Schema{Type: "array", Items: items, MinItems: &n, MaxItems: &n}, nil
	case reflect.Map:
		switch t.Key().Kind() {
		case reflect.String, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		default:
			if !t.Key().Implements(textMarshaler) && !reflect.PointerTo(t.Key()).Implements(textUnmarshaler) {
				return nil, &UnsupportedTypeError{Type: t, Path: path}
			}
		}
		vals, err := r.schema(t.Elem(), path+"{}", false)
		if err != nil {
			return nil, err
		}
		return nullable(&Schema{Type: "object", AdditionalProperties: vals}), nil
	case reflect.Struct:
		return r.structRef(t, path)
	}
	return nil, &UnsupportedTypeError{Type: t, Path: path}
}

// structRef returns a named struct's schema, or a $ref when the struct is
// being reflected further up the stack (recursion).
func (r *reflector) structRef(t reflect.Type, path string) (*Schema, error) {
	if t.Name() == "" {
		return r.structSchema(t, path)
	}
	if d, ok := r.defs[t]; ok {
		return &Schema{Ref: "#/$defs/" + d.name}, nil
	}
	if r.busy[t] {
		if t == r.root {
			return &Schema{Ref: "#"}, nil
		}
		d := &def{name: r.defName(t), recursive: true}
		r.defs[t] = d
		return &Schema{Ref: "#/$defs/" + d.name}, nil
	}
	r.busy[t] = true
	s, err := r.structSchema(t, path)
	delete(r.busy, t)
	if err != nil {
		return nil, err
	}
	if d, ok := r.defs[t]; ok && t != r.root {
		d.schema = s
		r.order = append(r.order, d)
		return &Schema{Ref: "#/$defs/" + d.name}, nil
	}
	return s, nil
}

// field is one JSON member of a struct, found through embedding.
type field struct {
	name     string
	tagged   bool
	depth    int
	index    []int
	typ      reflect.Type
	optional bool
	asString bool
	desc     string
	enum     []string
	path     string
}

func (r *reflector) structSchema(t reflect.Type, path string) (*Schema, error) {
	fields, err := structFields(t, path)
	if err != nil {
		return nil, err
	}
	s := &Schema{Type: "object", Properties: &Props{List: []Prop{}}}
	required := []string{}
	for _, f := range fields {
		fs, err := r.schema(f.typ, f.path, f.asString)
		if err != nil {
			return nil, err
		}
		if len(f.enum) > 0 {
			if err := applyEnum(fs, f); err != nil {
				return nil, err
			}
		}
		if f.desc != "" {
			fs = copySchema(fs)
			fs.Description = f.desc
		}
		s.Properties.List = append(s.Properties.List, Prop{Name: f.name, Schema: fs})
		if !f.optional {
			required = append(required, f.name)
		}
	}
	if len(required) > 0 {
		s.Required = required
	}
	return s, nil
}

func copySchema(s *Schema) *Schema {
	c := *s
	return &c
}

func applyEnum(s *Schema, f field) error {
	target := s
	if hasType(s, "array") && s.Items != nil && hasType(s.Items, "string") && s.Items.Ref == "" {
		s.Items = copySchema(s.Items)
		target = s.Items
	}
	if !hasType(target, "string") {
		return &TagError{Path: f.path, Reason: "an enum tag applies only to string fields or slices of strings"}
	}
	target.Enum = f.enum
	return nil
}

func hasType(s *Schema, typ string) bool {
	for _, t := range s.Types() {
		if t == typ {
			return true
		}
	}
	return false
}

// structFields lists t's JSON members as encoding/json does: exported
// fields, embedded structs inlined, the shallowest name wins, and at equal
// depth a tagged name wins (two of a kind cancel each other).
func structFields(t reflect.Type, path string) ([]field, error) {
	var all []field
	var walk func(t reflect.Type, index []int, depth int, optional bool, seen map[reflect.Type]bool) error
	walk = func(t reflect.Type, index []int, depth int, optional bool, seen map[reflect.Type]bool) error {
		if seen[t] {
			return nil
		}
		seen[t] = true
		defer delete(seen, t)
		for i := 0; i < t.NumField(); i++ {
			sf := t.Field(i)
			tag := sf.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, opts, _ := strings.Cut(tag, ",")
			ft := sf.Type
			if sf.Anonymous {
				et := ft
				if et.Kind() == reflect.Pointer {
					et = et.Elem()
				}
				if !sf.IsExported() && et.Kind() != reflect.Struct {
					continue
				}
				if name == "" && et.Kind() == reflect.Struct {
					idx := append(append([]int(nil), index...), i)
					if err := walk(et, idx, depth+1, optional || ft.Kind() == reflect.Pointer, seen); err != nil {
						return err
					}
					continue
				}
			} else if !sf.IsExported() {
				continue
			}
			tagged := name != ""
			if !tagged {
				name = sf.Name
			}
			f := field{
				name:     name,
				tagged:   tagged,
				depth:    depth,
				index:    append(append([]int(nil), index...), i),
				typ:      ft,
				optional: optional || hasOpt(opts, "omitempty") || hasOpt(opts, "omitzero") || ft.Kind() == reflect.Pointer,
				asString: hasOpt(opts, "string"),
				desc:     sf.Tag.Get("description"),
				path:     joinPath(path, name),
			}
			if e, ok := sf.Tag.Lookup("enum"); ok {
				for _, v := range strings.Split(e, ",") {
					if v = strings.TrimSpace(v); v != "" {
						f.enum = append(f.enum, v)
					}
				}
				if len(f.enum) == 0 {
					return &TagError{Path: f.path, Reason: "the enum tag is empty"}
				}
			}
			all = append(all, f)
		}
		return nil
	}
	if err := walk(t, nil, 0, false, map[reflect.Type]bool{}); err != nil {
		return nil, err
	}
	// Resolve name conflicts.
	byName := map[string][]int{}
	for i, f := range all {
		byName[f.name] = append(byName[f.name], i)
	}
	keep := make([]bool, len(all))
	for _, idxs := range byName {
		if len(idxs) == 1 {
			keep[idxs[0]] = true
			continue
		}
		sort.SliceStable(idxs, func(a, b int) bool {
			fa, fb := all[idxs[a]], all[idxs[b]]
			if fa.depth != fb.depth {
				return fa.depth < fb.depth
			}
			return fa.tagged && !fb.tagged
		})
		first, second := all[idxs[0]], all[idxs[1]]
		if first.depth == second.depth && first.tagged == second.tagged {
			continue // ambiguous: encoding/json drops the name
		}
		keep[idxs[0]] = true
	}
	var out []field
	for i, f := range all {
		if keep[i] {
			out = append(out, f)
		}
	}
	// Order by field index sequence, as encoding/json does.
	sort.SliceStable(out, func(a, b int) bool { return lessIndex(out[a].index, out[b].index) })
	return out, nil
}

func lessIndex(a, b []int) bool {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return len(a) < len(b)
}

func hasOpt(opts, want string) bool {
	for opts != "" {
		var o string
		o, opts, _ = strings.Cut(opts, ",")
		if o == want {
			return true
		}
	}
	return false
}

func joinPath(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}
