package jsonx

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
)

// IsNull reports whether raw is the JSON literal null, white space around it
// allowed.
func IsNull(raw []byte) bool {
	return string(bytes.TrimSpace(raw)) == "null"
}

// IsAbsent reports whether raw holds no value: empty, only white space, or
// null.
func IsAbsent(raw []byte) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || string(t) == "null"
}

// Measure returns the nesting depth of a JSON text and the number of object
// members in it, in one pass of a [Scanner] and without decoding. On
// invalid text the figures are those read up to the fault, never a panic.
func Measure(data []byte) (depth, keys int) {
	s := NewScanner(data)
	s.Space()
	s.Skip()
	return s.deepest, s.members
}

// EscapePointerToken escapes one reference token of a JSON pointer (RFC 6901):
// "~" as "~0" and "/" as "~1".
func EscapePointerToken(s string) string {
	if !strings.ContainsAny(s, "~/") {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// UnescapePointerToken reverses [EscapePointerToken].
func UnescapePointerToken(s string) string {
	if !strings.Contains(s, "~") {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
}

// ResolvePointer follows the JSON pointer ptr ("" is the root) in doc, a
// value decoded by encoding/json into any.
func ResolvePointer(doc any, ptr string) (any, bool) {
	if ptr == "" {
		return doc, true
	}
	if !strings.HasPrefix(ptr, "/") {
		return nil, false
	}
	cur := doc
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = UnescapePointerToken(tok)
		switch x := cur.(type) {
		case map[string]any:
			v, ok := x[tok]
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(x) {
				return nil, false
			}
			cur = x[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// maxEcho is how many bytes of a name [SafeText] keeps.
const maxEcho = 140

// SafeText is s fit to echo in a message: invalid UTF-8 replaced, and cut
// after 140 bytes. Names a client or an app folder sent (methods, tools,
// URIs, $ref values) go through it before they are written anywhere.
func SafeText(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) > maxEcho {
		s = strings.ToValidUTF8(s[:maxEcho], "") + "…"
	}
	return s
}

// QuoteSafe is [SafeText] quoted as a Go string literal, for messages.
func QuoteSafe(s string) string { return strconv.Quote(SafeText(s)) }

// OneLine flattens a message made of several lines (an errors.Join of
// problems, say) into one, the lines joined with "; ", for a log line or a
// JSON string.
func OneLine(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	lines := strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' })
	for i, l := range lines {
		lines[i] = strings.TrimSpace(l)
	}
	lines = slices.DeleteFunc(lines, func(l string) bool { return l == "" })
	return strings.Join(lines, "; ")
}
