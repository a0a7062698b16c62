// Package nonil makes a value encode with [] for its nil slices and {} for
// its nil maps, at any depth, so that it matches schemas that type slices
// as "array" and maps as "object" (without "null").
package nonil

import (
	"encoding"
	"encoding/json"
	"reflect"
	"sync"
)

// maxDepth bounds the walk; encoding/json fails on deeper (cyclic) values
// anyway.
const maxDepth = 1000

var (
	jsonMarshaler = reflect.TypeFor[json.Marshaler]()
	textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()
	mayHold       sync.Map // reflect.Type → bool
)

// Value returns v, or a copy of it where every nil slice is empty and every
// nil map is empty, when it has any. v itself is never modified: only the
// parts on the way to a nil slice or map are copied. Types that encode
// themselves (MarshalJSON, MarshalText) are left alone, and so are []byte
// (base64, "" when nil) and unexported fields (not encoded).
func Value(v any) any {
	if v == nil {
		return nil
	}
	rv := reflect.ValueOf(v)
	if !mayHoldNil(rv.Type()) {
		return v
	}
	out, changed := fix(rv, 0)
	if !changed {
		return v
	}
	return out.Interface()
}

// mayHoldNil reports whether a value of t can hold a nil slice or map that
// encoding/json would write as null.
func mayHoldNil(t reflect.Type) bool {
	if r, ok := mayHold.Load(t); ok {
		return r.(bool)
	}
	mayHold.Store(t, true) // a recursive type may: assume so while looking
	r := computeMayHold(t)
	mayHold.Store(t, r)
	return r
}

func computeMayHold(t reflect.Type) bool {
	if ownEncoding(t) {
		return false
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Map, reflect.Interface:
		return true
	case reflect.Pointer, reflect.Array:
		return mayHoldNil(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			if (f.IsExported() || f.Anonymous) && mayHoldNil(f.Type) {
				return true
			}
		}
	}
	return false
}

func ownEncoding(t reflect.Type) bool {
	return t.Implements(jsonMarshaler) || t.Implements(textMarshaler) ||
		(t.Kind() != reflect.Pointer && (reflect.PointerTo(t).Implements(jsonMarshaler) || reflect.PointerTo(t).Implements(textMarshaler))) ||
		(t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8)
}

// fix returns v with its nil slices and maps made empty, and whether
// anything changed (v is then a copy where needed).
func fix(v reflect.Value, depth int) (reflect.Value, bool) {
	if depth > maxDepth || !mayHoldNil(v.Type()) {
		return v, false
	}
	switch v.Kind() {
	case reflect.Slice:
		if v.IsNil() {
			return reflect.MakeSlice(v.Type(), 0, 0), true
		}
		return fixElems(v, depth, func() reflect.Value {
			c := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
			reflect.Copy(c, v)
			return c
		})
	case reflect.Array:
		return fixElems(v, depth, func() reflect.Value {
			c := reflect.New(v.Type()).Elem()
			c.Set(v)
			return c
		})
	case reflect.Map:
		if v.IsNil() {
			return reflect.MakeMap(v.Type()), true
		}
		var c reflect.Value
		for it := v.MapRange(); it.Next(); {
			if nv, changed := fix(it.Value(), depth+1); changed {
				if !c.IsValid() {
					c = reflect.MakeMapWithSize(v.Type(), v.Len())
					for it2 := v.MapRange(); it2.Next(); {
						c.SetMapIndex(it2.Key(), it2.Value())
					}
				}
				c.SetMapIndex(it.Key(), nv)
			}
		}
		if c.IsValid() {
			return c, true
		}
	case reflect.Pointer:
		if v.IsNil() {
			return v, false
		}
		if nv, changed := fix(v.Elem(), depth+1); changed {
			p := reflect.New(v.Type().Elem())
			p.Elem().Set(nv)
			return p, true
		}
	case reflect.Interface:
		if v.IsNil() {
			return v, false
		}
		if nv, changed := fix(v.Elem(), depth+1); changed {
			c := reflect.New(v.Type()).Elem()
			c.Set(nv)
			return c, true
		}
	case reflect.Struct:
		var c reflect.Value
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if !f.IsExported() && !f.Anonymous {
				continue
			}
			if nv, changed := fix(v.Field(i), depth+1); changed {
				if !c.IsValid() {
					c = reflect.New(v.Type()).Elem()
					c.Set(v)
				}
				if !c.Field(i).CanSet() {
					continue // an unexported embedded struct's field: left as is
				}
				c.Field(i).Set(nv)
			}
		}
		if c.IsValid() {
			return c, true
		}
	}
	return v, false
}

// fixElems fixes the elements of a slice or array, copying it (with dup)
// before the first change.
func fixElems(v reflect.Value, depth int, dup func() reflect.Value) (reflect.Value, bool) {
	var c reflect.Value
	for i := range v.Len() {
		if nv, changed := fix(v.Index(i), depth+1); changed {
			if !c.IsValid() {
				c = dup()
			}
			c.Index(i).Set(nv)
		}
	}
	if c.IsValid() {
		return c, true
	}
	return v, false
}
