package metadata

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"strings"
	"unicode/utf8"

	"github.com/funcmcp/funcmcp/internal/jsonx"
)

// Field is one key of a [Binding] with its raw JSON value.
type Field struct {
	Key   string
	Value json.RawMessage
}

// Binding is one entry of a function.json "bindings" array: a JSON object that
// remembers the order of its keys, so that keys funcmcp does not know survive a
// read/write round trip in place and emitted files are byte-stable.
//
// The zero value is an empty object.
type Binding struct {
	fields []Field
}

// Fields returns the binding's keys and values in order. The slice is a copy;
// the values are shared.
func (b *Binding) Fields() []Field {
	return append([]Field(nil), b.fields...)
}

// index returns the position of key, matched exactly, or -1.
func (b *Binding) index(key string) int {
	for i, f := range b.fields {
		if f.Key == key {
			return i
		}
	}
	return -1
}

// Get returns the raw value of key, matched exactly.
func (b *Binding) Get(key string) (json.RawMessage, bool) {
	if i := b.index(key); i >= 0 {
		return b.fields[i].Value, true
	}
	return nil, false
}

// Lookup returns the raw value of key matched case-insensitively, as the
// Azure Functions host matches binding keys (see [LookupFold]).
func (b *Binding) Lookup(key string) (json.RawMessage, bool) {
	return LookupFold(FieldSeq(b.fields), key)
}

// LookupString returns the string value of key (matched case-insensitively).
// ok is false when the key is absent, null or not a string.
func (b *Binding) LookupString(key string) (s string, ok bool) {
	raw, found := b.Lookup(key)
	if !found {
		return "", false
	}
	return jsonx.StringValue(raw)
}

// Type returns the binding's "type".
func (b *Binding) Type() string { s, _ := b.LookupString(KeyType); return s }

// Name returns the binding's "name".
func (b *Binding) Name() string { s, _ := b.LookupString(KeyName); return s }

// Direction returns the binding's "direction".
func (b *Binding) Direction() string { s, _ := b.LookupString(KeyDirection); return s }

// IsType reports whether the binding's type is typ, compared case-insensitively.
func (b *Binding) IsType(typ string) bool { return strings.EqualFold(b.Type(), typ) }

// SetRaw sets key to a raw JSON value. An existing key keeps its position; a
// new key is appended. The value must be valid JSON; it is stored compacted.
func (b *Binding) SetRaw(key string, value json.RawMessage) error {
	var buf bytes.Buffer
	if err := json.Compact(&buf, value); err != nil {
		return fmt.Errorf("setting %q: %w", key, err)
	}
	b.set(key, buf.Bytes())
	return nil
}

func (b *Binding) set(key string, value json.RawMessage) {
	b.fields = SetField(b.fields, key, value)
}

// SetField sets key (matched exactly) to value in an ordered list of
// fields: an existing key keeps its position and gets the new value, a new
// key is appended. It is the one rule for inserting or replacing a key of a
// binding, of its metadata object and of a function.json document.
func SetField(fields []Field, key string, value json.RawMessage) []Field {
	for i := range fields {
		if fields[i].Key == key {
			fields[i].Value = value
			return fields
		}
	}
	return append(fields, Field{Key: key, Value: value})
}

// FieldSeq yields the keys and values of fields, in order.
func FieldSeq(fields []Field) iter.Seq2[string, json.RawMessage] {
	return func(yield func(string, json.RawMessage) bool) {
		for _, f := range fields {
			if !yield(f.Key, f.Value) {
				return
			}
		}
	}
}

// SetString sets key to a JSON string.
func (b *Binding) SetString(key, value string) {
	b.set(key, mustMarshalString(value))
}

// SetBool sets key to a JSON boolean.
func (b *Binding) SetBool(key string, value bool) {
	if value {
		b.set(key, json.RawMessage("true"))
	} else {
		b.set(key, json.RawMessage("false"))
	}
}

// MarshalJSON writes the keys in order.
func (b *Binding) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, f := range b.fields {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.Write(mustMarshalString(f.Key))
		buf.WriteByte(':')
		if len(f.Value) == 0 {
			buf.WriteString("null")
		} else {
			buf.Write(f.Value)
		}
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// errNotObject is returned when a binding is not a JSON object.
var errNotObject = errors.New("a binding must be a JSON object")

// UnmarshalJSON reads a JSON object, keeping its key order. A repeated key
// keeps its first position and its last value, as JSON decoders do.
func (b *Binding) UnmarshalJSON(data []byte) error {
	fields, err := decodeObject(data)
	if err != nil {
		return err
	}
	b.fields = b.fields[:0]
	for _, f := range fields {
		b.set(f.Key, f.Value)
	}
	return nil
}

// decodeObject splits a JSON object into its fields, in order, with compact values.
func decodeObject(data []byte) ([]Field, error) {
	s := jsonx.NewScanner(data)
	s.Space()
	if fields, ok := scanFields(&s); ok && s.End() {
		return fields, nil
	}
	return decodeObjectSlowly(data) // not a valid object: encoding/json says why
}

// scanFields reads the object at s's position in one pass into its fields,
// in order, with compact values (copies: nothing refers to s's text); ok
// is false when there is no valid object there.
func scanFields(s *jsonx.Scanner) (fields []Field, ok bool) {
	if s.Peek() != '{' {
		return nil, false
	}
	data := s.Data()
	_, ok = s.Object(func(k []byte, escaped bool) bool {
		key, ok := keyText(k, escaped)
		if !ok {
			return false
		}
		s.Space()
		start := s.Pos()
		if !s.Skip() {
			return false
		}
		value, ok := compactValue(data[start:s.Pos()])
		fields = append(fields, Field{Key: key, Value: value})
		return ok
	})
	return fields, ok
}

// keyText is a member name as encoding/json decodes it.
func keyText(k []byte, escaped bool) (string, bool) {
	if !escaped && utf8.Valid(k) {
		return string(k), true
	}
	return jsonx.Unescape(k)
}

// compactValue returns a copy of one valid JSON value without
// insignificant white space. A string, number or literal is one token,
// compact already (schemas are strings: the largest values of a
// function.json); so is a container without any white space byte.
func compactValue(raw []byte) (json.RawMessage, bool) {
	if c := raw[0]; (c != '{' && c != '[') || !bytes.ContainsAny(raw, " \t\n\r") {
		return bytes.Clone(raw), true
	}
	var buf bytes.Buffer
	buf.Grow(len(raw))
	if err := json.Compact(&buf, raw); err != nil {
		return nil, false
	}
	return buf.Bytes(), true
}

// decodeObjectSlowly is decodeObject by encoding/json, whose errors say
// what is wrong with a text that is not a valid object.
func decodeObjectSlowly(data []byte) ([]Field, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errNotObject
	}
	var fields []Field
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		if c := raw[0]; c != '{' && c != '[' {
			// A string, number or literal is one token, compact already
			// (schemas are strings: the largest values of a function.json).
			fields = append(fields, Field{Key: key, Value: raw})
			continue
		}
		var buf bytes.Buffer
		if err := json.Compact(&buf, raw); err != nil {
			return nil, err
		}
		fields = append(fields, Field{Key: key, Value: buf.Bytes()})
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	return fields, nil
}
