package binding

import (
	"encoding/json"
	"math/big"
)

// metaValid is a quick check of a decoded schema document against the JSON
// Schema 2020-12 metaschema, for the keywords tool schemas use. It returns
// true only when the document certainly validates against the metaschema
// (with its format assertions, as the compiler applies them); for anything
// it does not know well enough (identifiers and anchors, dynamic and remote
// references, patterns, the keywords 2020-12 keeps for older drafts,
// numbers that are not plain digits where an integer is required, …) it
// returns false, and the compiler's own metaschema validation decides, with
// its error messages.
//
// Keywords the metaschema does not define are not checked by it either:
// any value is valid there.
func metaValid(doc any) bool {
	return metaSchema(doc, 0)
}

// metaMaxDepth bounds the walk; deeper documents take the compiler's path.
const metaMaxDepth = 64

// metaKeyword checks the value of one keyword of a schema object.
type metaKeyword func(v any, depth int) bool

// metaKeywords are the 2020-12 keywords the quick check knows. A keyword of
// the metaschema that is not here makes the check give up (metaRefused).
var metaKeywords map[string]metaKeyword

// metaRefused are the keywords of the 2020-12 metaschema (and its
// vocabularies) that the quick check leaves to the compiler.
var metaRefused = map[string]bool{
	"$id": true, "$anchor": true, "$dynamicAnchor": true, "$dynamicRef": true, "$vocabulary": true,
	"$recursiveRef": true, "$recursiveAnchor": true, "definitions": true, "dependencies": true,
	"pattern": true, "patternProperties": true,
}

func init() {
	schema := func(v any, depth int) bool { return metaSchema(v, depth+1) }
	schemaMap := func(v any, depth int) bool {
		m, ok := v.(map[string]any)
		if !ok {
			return false
		}
		for _, s := range m {
			if !metaSchema(s, depth+1) {
				return false
			}
		}
		return true
	}
	schemaArray := func(v any, depth int) bool {
		a, ok := v.([]any)
		if !ok || len(a) == 0 {
			return false
		}
		for _, s := range a {
			if !metaSchema(s, depth+1) {
				return false
			}
		}
		return true
	}
	str := func(v any, _ int) bool { _, ok := v.(string); return ok }
	boolean := func(v any, _ int) bool { _, ok := v.(bool); return ok }
	number := func(v any, _ int) bool { _, ok := v.(json.Number); return ok }
	anything := func(any, int) bool { return true }
	array := func(v any, _ int) bool { _, ok := v.([]any); return ok }
	count := func(v any, _ int) bool { return plainCount(v) }
	strings := func(v any, _ int) bool { return uniqueStrings(v) }
	metaKeywords = map[string]metaKeyword{
		// core
		"$schema":  func(v any, _ int) bool { return v == "https://json-schema.org/draft/2020-12/schema" },
		"$ref":     func(v any, _ int) bool { s, ok := v.(string); return ok && localRef(s) },
		"$comment": str,
		"$defs":    schemaMap,
		// applicator
		"prefixItems": schemaArray, "items": schema, "contains": schema, "additionalProperties": schema,
		"properties": schemaMap, "dependentSchemas": schemaMap, "propertyNames": schema,
		"if": schema, "then": schema, "else": schema, "allOf": schemaArray, "anyOf": schemaArray,
		"oneOf": schemaArray, "not": schema,
		// unevaluated
		"unevaluatedItems": schema, "unevaluatedProperties": schema,
		// validation
		"type": metaType, "const": anything, "enum": array, "multipleOf": positiveNumber,
		"maximum": number, "exclusiveMaximum": number, "minimum": number, "exclusiveMinimum": number,
		"maxLength": count, "minLength": count, "maxItems": count, "minItems": count, "uniqueItems": boolean,
		"maxContains": count, "minContains": count, "maxProperties": count, "minProperties": count,
		"required": strings, "dependentRequired": func(v any, _ int) bool {
			m, ok := v.(map[string]any)
			if !ok {
				return false
			}
			for _, a := range m {
				if !uniqueStrings(a) {
					return false
				}
			}
			return true
		},
		// meta-data, format-annotation, content
		"title": str, "description": str, "default": anything, "deprecated": boolean, "readOnly": boolean,
		"writeOnly": boolean, "examples": array, "format": str, "contentEncoding": str,
		"contentMediaType": str, "contentSchema": schema,
	}
}

// metaSchema checks one schema: an object or a boolean.
func metaSchema(v any, depth int) bool {
	if depth > metaMaxDepth {
		return false
	}
	switch s := v.(type) {
	case bool:
		return true
	case map[string]any:
		for k, val := range s {
			if metaRefused[k] {
				return false
			}
			if check, ok := metaKeywords[k]; ok && !check(val, depth) {
				return false
			}
		}
		return true
	}
	return false
}

var simpleTypes = map[string]bool{
	"array": true, "boolean": true, "integer": true, "null": true, "number": true, "object": true, "string": true,
}

// metaType is the "type" keyword: a simple type, or a non-empty array of
// distinct simple types.
func metaType(v any, _ int) bool {
	switch t := v.(type) {
	case string:
		return simpleTypes[t]
	case []any:
		if len(t) == 0 {
			return false
		}
		seen := make(map[string]bool, len(t))
		for _, e := range t {
			s, ok := e.(string)
			if !ok || !simpleTypes[s] || seen[s] {
				return false
			}
			seen[s] = true
		}
		return true
	}
	return false
}

// positiveNumber is multipleOf: a number greater than 0.
func positiveNumber(v any, _ int) bool {
	n, ok := v.(json.Number)
	if !ok {
		return false
	}
	r, ok := new(big.Rat).SetString(string(n))
	return ok && r.Sign() > 0
}

// plainCount is a non-negative integer written as plain digits (other
// spellings of an integer, such as 1.0 or 1e2, are left to the compiler).
func plainCount(v any) bool {
	n, ok := v.(json.Number)
	if !ok || len(n) == 0 {
		return false
	}
	for i := 0; i < len(n); i++ {
		if n[i] < '0' || n[i] > '9' {
			return false
		}
	}
	return true
}

// uniqueStrings is an array of distinct strings.
func uniqueStrings(v any) bool {
	a, ok := v.([]any)
	if !ok {
		return false
	}
	seen := make(map[string]bool, len(a))
	for _, e := range a {
		s, ok := e.(string)
		if !ok || seen[s] {
			return false
		}
		seen[s] = true
	}
	return true
}

// localRef is a reference within the document whose characters are all
// valid in a URI fragment without escaping (so it is a valid
// uri-reference): "#", "#/$defs/name", "#/properties/a~1b".
func localRef(s string) bool {
	if len(s) == 0 || s[0] != '#' {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '/' || c == '-' || c == '_' || c == '.' || c == '~' || c == '$':
		default:
			return false
		}
	}
	return true
}
