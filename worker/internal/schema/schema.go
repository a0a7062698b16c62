// Package schema derives JSON Schema 2020-12 documents from Go types with
// github.com/google/jsonschema-go, the library the official MCP Go SDK uses
// (jsonschema.ForType), so that the same Go type gives the same schema in
// both and the `jsonschema:"…"` description tags work.
//
// Through ForType's options and one pass over its result, it departs from
// ForType where funcmcp keeps what its users rely on, or where ForType's
// schema does not describe what encoding/json writes:
//
//   - a slice is {"type":"array"}, not ["null","array"]: schemas with type
//     arrays break some clients, and funcmcp encodes a nil slice as [] (and
//     a nil map as {}, maps already being "object"); a pointer still allows
//     null, as in ForType;
//   - a `description:"…"` tag is an alias of the jsonschema tag, and an
//     `enum:"a,b"` tag (string fields and slices of strings) becomes "enum";
//   - time.Time is {"type":"string","format":"date-time"} (ForType: a
//     string);
//   - a recursive named struct is defined once under $defs and referenced
//     with $ref ("#" for the root type); ForType rejects cycles;
//   - types with their own MarshalJSON are {} (any value), types with
//     MarshalText strings, and []byte a base64 string, as encoding/json
//     writes them (ForType reflects their Go structure).
package schema

import (
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
)

// TagError is a struct tag the reflector cannot honour.
type TagError struct {
	Path   string
	Reason string
}

func (e *TagError) Error() string { return fmt.Sprintf("field %s: %s", e.Path, e.Reason) }

var (
	timeType      = reflect.TypeFor[time.Time]()
	jsonMarshaler = reflect.TypeFor[json.Marshaler]()
	textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()
)

// For returns the schema of t; a pointer root is its element's schema, as
// in the official Go SDK.
func For(t reflect.Type) (*jsonschema.Schema, error) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	g := &graph{overrides: map[reflect.Type]*jsonschema.Schema{}, names: map[string]bool{}}
	g.scan(t, nil)
	for _, r := range g.recursive {
		if r.Kind() != reflect.Struct {
			return nil, fmt.Errorf("type %s refers to itself and is not a struct", r)
		}
		ref := "#/$defs/" + g.defName(r)
		if r == t {
			ref = "#"
		}
		g.overrides[r] = &jsonschema.Schema{Ref: ref}
	}
	opts := &jsonschema.ForOptions{TypeSchemas: g.overrides}

	root, err := g.forType(t, opts)
	if err != nil {
		return nil, err
	}
	for _, r := range g.recursive {
		if r == t {
			continue
		}
		body, err := g.forType(r, opts)
		if err != nil {
			return nil, err
		}
		if root.Defs == nil {
			root.Defs = map[string]*jsonschema.Schema{}
		}
		root.Defs[g.defName(r)] = body
	}
	return root, nil
}

// graph is what For learns about the types reachable from the root.
type graph struct {
	overrides map[reflect.Type]*jsonschema.Schema // ForOptions.TypeSchemas
	recursive []reflect.Type                      // named types that reach themselves, in order found
	defNames  map[reflect.Type]string
	names     map[string]bool
}

// scan walks the types reachable from t, in field order, recording the
// types encoding/json writes by their own rules and the recursive types.
func (g *graph) scan(t reflect.Type, stack []reflect.Type) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if _, done := g.overrides[t]; done || slices.Contains(g.recursive, t) {
		return
	}
	if s := ownEncoding(t); s != nil {
		g.overrides[t] = s
		return
	}
	if t.Name() != "" && slices.Contains(stack, t) {
		g.recursive = append(g.recursive, t)
		return
	}
	stack = append(stack, t)
	switch t.Kind() {
	case reflect.Slice, reflect.Array, reflect.Map:
		g.scan(t.Elem(), stack)
	case reflect.Struct:
		for _, f := range reflect.VisibleFields(t) {
			if !f.Anonymous && f.IsExported() {
				g.scan(f.Type, stack)
			}
		}
	}
}

// ownEncoding is the schema of a type encoding/json writes by its own rules,
// nil for the others.
func ownEncoding(t reflect.Type) *jsonschema.Schema {
	switch {
	case t == timeType:
		return &jsonschema.Schema{Type: "string", Format: "date-time"}
	case t.Implements(jsonMarshaler) || reflect.PointerTo(t).Implements(jsonMarshaler):
		return &jsonschema.Schema{}
	case t.Implements(textMarshaler) || reflect.PointerTo(t).Implements(textMarshaler):
		return &jsonschema.Schema{Type: "string"}
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8:
		return &jsonschema.Schema{Type: "string", ContentEncoding: "base64"}
	}
	return nil
}

var unsafeDefName = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// defName is the $defs key of a recursive type: its name, made unique.
func (g *graph) defName(t reflect.Type) string {
	if n, ok := g.defNames[t]; ok {
		return n
	}
	base := strings.Trim(unsafeDefName.ReplaceAllString(t.Name(), "_"), "_")
	name := base
	for i := 2; g.names[name]; i++ {
		name = fmt.Sprintf("%s%d", base, i)
	}
	g.names[name] = true
	if g.defNames == nil {
		g.defNames = map[reflect.Type]string{}
	}
	g.defNames[t] = name
	return name
}

// forType is jsonschema.ForType, and for a recursive struct its body (the
// struct's fields, not the $ref that stands for it), then the adjustments
// of the package documentation.
func (g *graph) forType(t reflect.Type, opts *jsonschema.ForOptions) (*jsonschema.Schema, error) {
	shape := t
	if _, ok := g.overrides[t]; ok && slices.Contains(g.recursive, t) {
		shape = fieldsOnly(t)
	}
	s, err := jsonschema.ForType(shape, opts)
	if err != nil {
		return nil, errors.New(strings.TrimPrefix(err.Error(), fmt.Sprintf("ForType(%s): ", shape)))
	}
	if err := g.adjust(t, s, t.Name()); err != nil {
		return nil, err
	}
	return s, nil
}

// fieldsOnly returns an unnamed struct type with t's encoded fields, so
// that ForType expands it instead of using the $ref that stands for t.
func fieldsOnly(t reflect.Type) reflect.Type {
	var fields []reflect.StructField
	for _, f := range reflect.VisibleFields(t) {
		if f.Anonymous || !f.IsExported() {
			continue
		}
		fields = append(fields, reflect.StructField{Name: f.Name, Type: f.Type, Tag: f.Tag})
	}
	return reflect.StructOf(fields)
}

// adjust walks s beside t, applying the description and enum tags and
// turning the ["null","array"] type of slices into "array".
func (g *graph) adjust(t reflect.Type, s *jsonschema.Schema, path string) error {
	if s == nil {
		return nil
	}
	if s.Ref != "" {
		// ForType makes a pointer's schema nullable by adding "null" to its
		// types; beside a $ref that would allow null alone.
		if slices.Equal(s.Types, []string{"null"}) {
			*s = jsonschema.Schema{AnyOf: []*jsonschema.Schema{{Ref: s.Ref}, {Type: "null"}}}
		}
		return nil
	}
	if t.Kind() == reflect.Slice && len(s.Types) == 2 && s.Types[0] == "null" && s.Types[1] == "array" {
		s.Type, s.Types = "array", nil
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if _, ok := g.overrides[t]; ok && s.Ref == "" && !slices.Contains(g.recursive, t) {
		return nil // written by its own rules
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		return g.adjust(t.Elem(), s.Items, path+"[]")
	case reflect.Map:
		return g.adjust(t.Elem(), s.AdditionalProperties, path+"{}")
	case reflect.Struct:
		for _, f := range reflect.VisibleFields(t) {
			name, ok := jsonName(f)
			if !ok {
				continue
			}
			ps := s.Properties[name]
			if ps == nil {
				continue
			}
			fpath := path + "." + f.Name
			if d, ok := f.Tag.Lookup("description"); ok {
				if _, has := f.Tag.Lookup("jsonschema"); !has {
					ps.Description = d
				}
			}
			if err := applyEnum(f, ps, fpath); err != nil {
				return err
			}
			if err := g.adjust(f.Type, ps, fpath); err != nil {
				return err
			}
		}
	}
	return nil
}

// jsonName is the name encoding/json gives a field of a struct; ok is false
// for fields it does not encode.
func jsonName(f reflect.StructField) (string, bool) {
	if f.Anonymous || !f.IsExported() {
		return "", false
	}
	name := f.Name
	if tag, ok := f.Tag.Lookup("json"); ok {
		n, _, found := strings.Cut(tag, ",")
		if n == "-" && !found {
			return "", false
		}
		if n != "" {
			name = n
		}
	}
	return name, true
}

// applyEnum turns an `enum:"a,b"` tag into the "enum" of a string or of the
// items of a slice of strings.
func applyEnum(f reflect.StructField, s *jsonschema.Schema, path string) error {
	tag, ok := f.Tag.Lookup("enum")
	if !ok {
		return nil
	}
	target, t := s, f.Type
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) && s.Items != nil {
		target, t = s.Items, t.Elem()
	}
	if t.Kind() != reflect.String {
		return &TagError{Path: path, Reason: fmt.Sprintf("the enum tag needs a string field or a slice of strings, not %s", f.Type)}
	}
	for _, v := range strings.Split(tag, ",") {
		target.Enum = append(target.Enum, strings.TrimSpace(v))
	}
	return nil
}
