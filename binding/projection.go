package binding

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/funcmcp/funcmcp/internal/jsonx"
	"github.com/funcmcp/funcmcp/metadata"
)

// DefaultOutputField is the field a non-object output is projected into for
// legacy clients when the tool names no other: {"result": value}.
const DefaultOutputField = "result"

// ProjectedRevision is the first MCP revision whose clients take an output
// schema of any shape (SEP-2106). Clients of earlier revisions require a root
// "type": "object" and an object structuredContent, so they get the object
// projection made by [ProjectSchema] and [ProjectValue].
const ProjectedRevision = metadata.RevisionStateless

// NeedsProjection reports whether a client speaking the MCP revision
// version sees the object projection of a natural output schema rather than
// the schema itself: true for every revision before [ProjectedRevision].
// Revisions are dates, so they compare as strings.
func NeedsProjection(version string) bool { return !metadata.IsStateless(version) }

// ProjectSchema returns the form of a natural output schema (any JSON Schema
// 2020-12 document, compact) that clients of revisions before 2026-07-28
// accept, and whether values must be wrapped to match it:
//
//   - a root object whose "type" is "object" is returned unchanged (wrapped
//     false);
//   - a root whose "type" is ["object","null"] (either order) gets "type":
//     "object" and keeps everything else (wrapped false): legacy clients
//     cannot take null anyway;
//   - any other schema (array, scalar, typeless, oneOf/anyOf roots, true, {})
//     is wrapped (wrapped true):
//     {"type":"object","properties":{"<field>":<natural>},"required":["<field>"]}.
//
// When wrapping, every same-document JSON pointer reference ("$ref" or
// "$dynamicRef" equal to "#" or starting with "#/") in a subschema position
// is rewritten to point under /properties/<field>, so the projection resolves
// exactly what the natural schema did. Data keywords (const, enum, default,
// examples) and unknown keywords are left alone, and so is any subtree whose
// schema carries "$id" (its references resolve against that base). A root
// "$schema" moves to the wrapper's root. Key order and number text are kept.
func ProjectSchema(natural json.RawMessage, field string) (projected json.RawMessage, wrapped bool, err error) {
	if field == "" {
		return nil, false, errors.New("projecting the output schema: the output field name is empty")
	}
	compact, err := compactJSON(natural)
	if err != nil {
		return nil, false, fmt.Errorf("projecting the output schema: %w", err)
	}
	if compact[0] == '{' {
		members, err := objectMembers(compact)
		if err != nil {
			return nil, false, fmt.Errorf("projecting the output schema: %w", err)
		}
		switch rootType(members) {
		case "object":
			return compact, false, nil
		case "object|null":
			for i := range members {
				if members[i].key == "type" {
					members[i].value = json.RawMessage(`"object"`)
				}
			}
			return encodeMembers(members), false, nil
		}
	} else if !bytes.Equal(compact, []byte("true")) && !bytes.Equal(compact, []byte("false")) {
		return nil, false, errors.New("projecting the output schema: a schema must be a JSON object or boolean")
	}

	name, err := metadata.Marshal(field)
	if err != nil {
		return nil, false, fmt.Errorf("projecting the output schema: %w", err)
	}
	inner, schemaURI := compact, json.RawMessage(nil)
	if compact[0] == '{' {
		members, _ := objectMembers(compact) // checked above
		if !hasMember(members, "$id") {
			schemaURI = takeMember(&members, "$schema")
			members, err = rewriteRefs(members, "/properties/"+jsonx.EscapePointerToken(field))
			if err != nil {
				return nil, false, fmt.Errorf("projecting the output schema: %w", err)
			}
		}
		inner = encodeMembers(members)
	}
	var b bytes.Buffer
	b.WriteByte('{')
	if schemaURI != nil {
		b.WriteString(`"$schema":`)
		b.Write(schemaURI)
		b.WriteByte(',')
	}
	b.WriteString(`"type":"object","properties":{`)
	b.Write(name)
	b.WriteByte(':')
	b.Write(inner)
	b.WriteString(`},"required":[`)
	b.Write(name)
	b.WriteString(`]}`)
	return b.Bytes(), true, nil
}

// ProjectValue wraps a natural output value for a legacy client:
// {"<field>": value}. value must be valid JSON; it is compacted.
func ProjectValue(value json.RawMessage, field string) (json.RawMessage, error) {
	compact, err := compactJSON(value)
	if err != nil {
		return nil, fmt.Errorf("projecting the output value: %w", err)
	}
	name, err := metadata.Marshal(field)
	if err != nil {
		return nil, fmt.Errorf("projecting the output value: %w", err)
	}
	out := make([]byte, 0, len(name)+len(compact)+3)
	out = append(out, '{')
	out = append(out, name...)
	out = append(out, ':')
	out = append(out, compact...)
	return append(out, '}'), nil
}

// UnprojectValue returns the natural value a projected value holds: the
// member field of the object made by [ProjectValue].
func UnprojectValue(projected json.RawMessage, field string) (json.RawMessage, error) {
	if v, ok := unprojectFast(projected, field); ok {
		return v, nil
	}
	compact, err := compactJSON(projected)
	if err != nil {
		return nil, fmt.Errorf("unwrapping the output value: %w", err)
	}
	if compact[0] != '{' {
		return nil, fmt.Errorf("unwrapping the output value: %q is not an object", abbreviate(compact))
	}
	members, err := objectMembers(compact)
	if err != nil {
		return nil, fmt.Errorf("unwrapping the output value: %w", err)
	}
	var found json.RawMessage
	for _, m := range members {
		if m.key == field {
			found = m.value // the last one wins, as in encoding/json
		}
	}
	if found == nil {
		return nil, fmt.Errorf("unwrapping the output value: it has no %q member", field)
	}
	return found, nil
}

// unprojectFast unwraps the compact {"<field>":value} that ProjectValue
// writes without decoding it: the prefix names the field, and what lies
// between it and the closing brace must be one valid JSON value (a second
// member would not be).
func unprojectFast(projected json.RawMessage, field string) (json.RawMessage, bool) {
	if len(projected) < len(field)+5 || projected[0] != '{' || projected[1] != '"' || projected[len(projected)-1] != '}' {
		return nil, false
	}
	rest, ok := bytes.CutPrefix(projected[2:], []byte(field))
	if !ok || len(rest) < 3 || rest[0] != '"' || rest[1] != ':' || !plainJSONString(field) {
		return nil, false
	}
	v := rest[2 : len(rest)-1]
	if !json.Valid(v) {
		return nil, false
	}
	return v, true
}

// plainJSONString reports whether s is written as itself inside a JSON
// string (nothing to escape).
func plainJSONString(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == '"' || r == '\\' || r == '\u2028' || r == '\u2029' || r == utf8.RuneError {
			return false
		}
	}
	return true
}

// UnprojectResult turns the result of a tool whose values are wrapped in
// field back into the natural form, in place, for a client of 2026-07-28 or
// later: structuredContent becomes the natural value, and the text block that
// mirrored the wrapped JSON now mirrors the natural JSON (one is added when
// there was none, as SEP-2106 requires for non-object values). Error results
// and results without structuredContent are left alone.
func UnprojectResult(res *metadata.CallToolResult, field string) error {
	if res == nil || res.IsError || jsonx.IsAbsent(res.StructuredContent) {
		return nil
	}
	wrapped := res.StructuredContent
	natural, ok := unprojectFast(wrapped, field)
	if !ok {
		var err error
		if wrapped, err = compactJSON(res.StructuredContent); err != nil {
			return fmt.Errorf("unwrapping the output value: %w", err)
		}
		if natural, err = UnprojectValue(wrapped, field); err != nil {
			return err
		}
	}
	mirrored := false
	content := make([]json.RawMessage, len(res.Content))
	copy(content, res.Content) // the caller's slice may be shared
	for i, block := range content {
		switch {
		case metadata.IsTextCopy(block, wrapped):
			content[i] = metadata.TextContent(string(natural))
			mirrored = true
		case metadata.IsTextCopy(block, natural):
			mirrored = true
		}
	}
	if !mirrored {
		content = append(content, metadata.TextContent(string(natural)))
	}
	res.Content = content
	res.StructuredContent = natural
	return nil
}

// WireSchema returns a natural output schema as the 2026-07-28 wire carries
// it: a JSON object. The boolean schemas become their object equivalents
// (true → {}, false → {"not":{}}); an object is returned unchanged.
func WireSchema(natural json.RawMessage) json.RawMessage {
	switch string(bytes.TrimSpace(natural)) {
	case "true":
		return json.RawMessage(`{}`)
	case "false":
		return json.RawMessage(`{"not":{}}`)
	}
	return natural
}

// member is one member of a JSON object, raw: key decoded, value compact.
type member struct {
	rawKey json.RawMessage // the key as written, quotes included
	key    string
	value  json.RawMessage
}

func compactJSON(data json.RawMessage) (json.RawMessage, error) {
	compact, err := jsonx.AppendCompact(nil, data)
	if err != nil {
		return nil, err
	}
	if len(compact) == 0 {
		return nil, errors.New("the JSON is empty")
	}
	return compact, nil
}

// objectMembers splits a compact JSON object into its members, in order.
func objectMembers(obj json.RawMessage) ([]member, error) {
	sc := jsonx.NewScanner(obj)
	var out []member
	var bad error
	_, ok := sc.Object(func(key []byte, escaped bool) bool {
		keyEnd := sc.Pos() - 1 // the colon's, in a compact object
		keyStart := keyEnd - len(key) - 2
		if keyStart < 0 || obj[keyStart] != '"' || obj[keyEnd] != ':' {
			return false
		}
		name, ok := jsonx.Text(key, escaped) // decoded as encoding/json decodes it
		if !ok {
			bad = fmt.Errorf("invalid key %s", obj[keyStart:keyEnd])
			return false
		}
		value, ok := sc.Value()
		if ok {
			out = append(out, member{rawKey: obj[keyStart:keyEnd:keyEnd], key: name, value: value[:len(value):len(value)]})
		}
		return ok
	})
	if !ok || !sc.End() {
		return nil, cmp.Or(bad, errors.New("not a compact JSON object"))
	}
	return out, nil
}

func encodeMembers(members []member) json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range members {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(m.rawKey)
		b.WriteByte(':')
		b.Write(m.value)
	}
	b.WriteByte('}')
	return b.Bytes()
}

func hasMember(members []member, key string) bool {
	for _, m := range members {
		if m.key == key {
			return true
		}
	}
	return false
}

// takeMember removes key from members and returns its value (nil if absent).
func takeMember(members *[]member, key string) json.RawMessage {
	var value json.RawMessage
	kept := (*members)[:0]
	for _, m := range *members {
		if m.key == key {
			value = m.value
			continue
		}
		kept = append(kept, m)
	}
	*members = kept
	return value
}

// rootType classifies a schema's "type": "object", "object|null" for the
// two-element array of "object" and "null", else "".
func rootType(members []member) string {
	var raw json.RawMessage
	for _, m := range members {
		if m.key == "type" {
			raw = m.value
		}
	}
	if raw == nil {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if s == "object" {
			return "object"
		}
		return ""
	}
	var list []string
	if json.Unmarshal(raw, &list) == nil && len(list) == 2 &&
		((list[0] == "object" && list[1] == "null") || (list[0] == "null" && list[1] == "object")) {
		return "object|null"
	}
	return ""
}

// Keywords whose value is one subschema, an array of subschemas, or an
// object of subschemas (JSON Schema 2020-12, plus the draft-07 spellings that
// still appear in generated schemas).
var (
	subschemaKeywords = map[string]bool{
		"items": true, "additionalItems": true, "additionalProperties": true,
		"propertyNames": true, "contains": true, "not": true, "if": true,
		"then": true, "else": true, "unevaluatedItems": true,
		"unevaluatedProperties": true, "contentSchema": true,
	}
	subschemaListKeywords = map[string]bool{
		"allOf": true, "anyOf": true, "oneOf": true, "prefixItems": true, "items": true,
	}
	subschemaMapKeywords = map[string]bool{
		"properties": true, "patternProperties": true, "$defs": true,
		"definitions": true, "dependentSchemas": true, "dependencies": true,
	}
)

// rewriteRefs prefixes the same-document pointer references of one schema
// object (and its subschemas) with prefix, a JSON pointer.
func rewriteRefs(members []member, prefix string) ([]member, error) {
	for i := range members {
		m := &members[i]
		switch {
		case m.key == "$ref" || m.key == "$dynamicRef":
			var ref string
			if json.Unmarshal(m.value, &ref) != nil {
				continue
			}
			if ref == "#" || strings.HasPrefix(ref, "#/") {
				data, err := metadata.Marshal("#" + fragmentEscape(prefix) + ref[1:])
				if err != nil {
					return nil, err
				}
				m.value = data
			}
		case subschemaKeywords[m.key] && len(m.value) > 0 && m.value[0] == '{':
			v, err := rewriteSchema(m.value, prefix)
			if err != nil {
				return nil, err
			}
			m.value = v
		case subschemaListKeywords[m.key] && len(m.value) > 0 && m.value[0] == '[':
			var items []json.RawMessage
			if err := json.Unmarshal(m.value, &items); err != nil {
				return nil, err
			}
			var b bytes.Buffer
			b.WriteByte('[')
			for j, item := range items {
				if j > 0 {
					b.WriteByte(',')
				}
				v, err := rewriteSchema(item, prefix)
				if err != nil {
					return nil, err
				}
				b.Write(v)
			}
			b.WriteByte(']')
			m.value = b.Bytes()
		case subschemaMapKeywords[m.key] && len(m.value) > 0 && m.value[0] == '{':
			entries, err := objectMembers(m.value)
			if err != nil {
				return nil, err
			}
			for j := range entries {
				v, err := rewriteSchema(entries[j].value, prefix)
				if err != nil {
					return nil, err
				}
				entries[j].value = v
			}
			m.value = encodeMembers(entries)
		}
	}
	return members, nil
}

// rewriteSchema rewrites one subschema; booleans, non-objects and schemas
// with their own "$id" come back unchanged.
func rewriteSchema(schema json.RawMessage, prefix string) (json.RawMessage, error) {
	if len(schema) == 0 || schema[0] != '{' {
		return schema, nil
	}
	members, err := objectMembers(schema)
	if err != nil {
		return nil, err
	}
	if hasMember(members, "$id") {
		return schema, nil
	}
	members, err = rewriteRefs(members, prefix)
	if err != nil {
		return nil, err
	}
	return encodeMembers(members), nil
}

// fragmentEscape percent-encodes the characters a URI fragment cannot hold
// (RFC 3986), so a field name with spaces or '%' still makes a valid $ref.
func fragmentEscape(pointer string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(pointer); i++ {
		c := pointer[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9',
			strings.IndexByte("-._~!$&'()*+,;=:@/?", c) >= 0:
			b.WriteByte(c)
		default:
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&0xf])
		}
	}
	return b.String()
}
