package binding

import (
	"github.com/funcmcp/funcmcp/internal/jsonx"
	"github.com/funcmcp/funcmcp/metadata"
)

// scanToolProperties reads text, a JSON array of tool properties, when it
// has the form workers write: objects whose keys are among the six names,
// spelled as they are, each at most once and with a value of its own type
// (strings, booleans, an array of strings). ok is false for anything else
// (a key in another case, null, a repeated key, a value of another type,
// text that is not JSON), which the caller then reads with encoding/json,
// for its rules and its error. What it reads, it reads as encoding/json
// does.
func scanToolProperties(text []byte) ([]metadata.ToolProperty, bool) {
	props := []metadata.ToolProperty{}
	sc := jsonx.NewScanner(text)
	sc.Space()
	_, ok := sc.Array(func() bool {
		var p metadata.ToolProperty
		var seen uint8
		_, ok := sc.Object(func(key []byte, escaped bool) bool {
			bit, ok := toolPropertyKey(key, escaped)
			if !ok || seen&bit != 0 {
				return false
			}
			seen |= bit
			switch bit {
			case keyPropertyName:
				p.PropertyName, ok = stringValue(&sc)
			case keyPropertyType:
				p.PropertyType, ok = stringValue(&sc)
			case keyDescription:
				p.Description, ok = stringValue(&sc)
			case keyIsRequired:
				p.IsRequired, ok = scanBool(&sc)
			case keyIsArray:
				p.IsArray, ok = scanBool(&sc)
			case keyEnumValues:
				p.EnumValues = []string{}
				_, ok = sc.Array(func() bool {
					v, ok := stringValue(&sc)
					p.EnumValues = append(p.EnumValues, v)
					return ok
				})
			}
			return ok
		})
		props = append(props, p)
		return ok
	})
	return props, ok && sc.End()
}

// The keys of a tool property, one bit each.
const (
	keyPropertyName uint8 = 1 << iota
	keyPropertyType
	keyDescription
	keyIsRequired
	keyIsArray
	keyEnumValues
)

// toolPropertyKey returns the bit of a key spelled as a tool property's
// key is; false for any other key or an escaped one.
func toolPropertyKey(key []byte, escaped bool) (uint8, bool) {
	if escaped {
		return 0, false
	}
	switch string(key) {
	case "propertyName":
		return keyPropertyName, true
	case "propertyType":
		return keyPropertyType, true
	case "description":
		return keyDescription, true
	case "isRequired":
		return keyIsRequired, true
	case "isArray":
		return keyIsArray, true
	case "enumValues":
		return keyEnumValues, true
	}
	return 0, false
}

// scanBool reads true or false.
func scanBool(sc *jsonx.Scanner) (bool, bool) {
	switch {
	case sc.Literal("true"):
		return true, true
	case sc.Literal("false"):
		return false, true
	}
	return false, false
}
