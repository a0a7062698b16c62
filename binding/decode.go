package binding

import (
	"bytes"
	"encoding/json"

	"github.com/funcmcp/funcmcp/internal/jsonx"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// DecodeJSON decodes JSON for validation (numbers kept exact): the value
// jsonschema.UnmarshalJSON makes (objects as map[string]any, the last of
// duplicate keys winning, arrays as []any, numbers as json.Number, strings
// with invalid UTF-8 as U+FFFD), read by jsonx's scanner: encoding/json's
// decoder into any took most of the time an app spent reading its schemas
// at start. Text that is not one JSON value goes to
// jsonschema.UnmarshalJSON, for its error.
func DecodeJSON(data []byte) (any, error) {
	s := jsonx.NewScanner(data)
	s.Space()
	if v, ok := decodeValue(&s); ok && s.End() {
		return v, nil
	}
	return jsonschema.UnmarshalJSON(bytes.NewReader(data))
}

func decodeValue(s *jsonx.Scanner) (any, bool) {
	s.Space()
	switch s.Peek() {
	case '{':
		m := map[string]any{}
		_, ok := s.Object(func(key []byte, escaped bool) bool {
			name, ok := jsonx.Text(key, escaped)
			if !ok {
				return false
			}
			v, ok := decodeValue(s)
			m[name] = v
			return ok
		})
		return m, ok
	case '[':
		a := []any{}
		_, ok := s.Array(func() bool {
			v, ok := decodeValue(s)
			a = append(a, v)
			return ok
		})
		return a, ok
	case '"':
		return stringValue(s)
	case 't':
		return true, s.Literal("true")
	case 'f':
		return false, s.Literal("false")
	case 'n':
		return nil, s.Literal("null")
	}
	lit, _, ok := s.Number()
	return json.Number(lit), ok
}
