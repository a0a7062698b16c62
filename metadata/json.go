package metadata

import (
	"bytes"
	"encoding/json"
)

// Marshal encodes v as compact JSON without HTML escaping (so "<", ">" and
// "&" in schema text and descriptions stay readable) and without a trailing
// newline. Both sides of the contract encode with it or with [WriteJSON].
func Marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	if err := WriteJSON(&buf, v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// WriteJSON appends v to buf as [Marshal] encodes it. On error buf is left
// as it was.
func WriteJSON(buf *bytes.Buffer, v any) error {
	n := buf.Len()
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		buf.Truncate(n)
		return err
	}
	buf.Truncate(buf.Len() - 1) // the newline Encode adds
	return nil
}

// mustMarshalString encodes s as a JSON string, as [Marshal] does.
func mustMarshalString(s string) json.RawMessage {
	return AppendJSONString(nil, s)
}

// UnescapeHTML rewrites the \u003c, \u003e and \u0026 escapes that
// encoding/json writes by default as "<", ">" and "&", so that JSON made by
// another encoder reads as [Marshal] writes it. Other escapes, and text
// that only looks like an escape (an escaped backslash before "u003c"), are
// kept.
func UnescapeHTML(data []byte) []byte {
	if !bytes.Contains(data, []byte(`\u00`)) {
		return data
	}
	out := make([]byte, 0, len(data))
	for i := 0; i < len(data); i++ {
		c := data[i]
		if c != '\\' || i+1 >= len(data) {
			out = append(out, c)
			continue
		}
		if data[i+1] == 'u' && i+5 < len(data) {
			switch string(data[i+2 : i+6]) {
			case "003c":
				out, i = append(out, '<'), i+5
				continue
			case "003e":
				out, i = append(out, '>'), i+5
				continue
			case "0026":
				out, i = append(out, '&'), i+5
				continue
			}
		}
		out, i = append(out, c, data[i+1]), i+1 // any other escape, whole
	}
	return out
}
