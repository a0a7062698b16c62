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

// mustMarshalString encodes s as a JSON string; a string always encodes.
func mustMarshalString(s string) json.RawMessage {
	data, _ := Marshal(s)
	return data
}
