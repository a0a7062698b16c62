package jsonx

import (
	"encoding/json"
	"unicode/utf8"
)

// StringValue decodes a JSON string token (quotes included) as
// encoding/json decodes it into a string; ok is false for anything else,
// null included. The common text (valid UTF-8, escapes other than \u) is
// decoded in one pass; the rest goes through encoding/json, which
// replaces invalid UTF-8 and lone surrogates as it does.
func StringValue(raw []byte) (string, bool) {
	n := len(raw)
	if n < 2 || raw[0] != '"' || raw[n-1] != '"' {
		return "", false
	}
	body := raw[1 : n-1]
	var buf []byte // nil while nothing was unescaped
	for i := 0; i < len(body); i++ {
		c := body[i]
		switch {
		case c < 0x20 || c == '"':
			return stringValueSlowly(raw)
		case c == '\\':
			if i+1 == len(body) {
				return stringValueSlowly(raw)
			}
			var r byte
			switch e := body[i+1]; e {
			case '"', '\\', '/':
				r = e
			case 'b':
				r = '\b'
			case 'f':
				r = '\f'
			case 'n':
				r = '\n'
			case 'r':
				r = '\r'
			case 't':
				r = '\t'
			default: // \u, or not an escape
				return stringValueSlowly(raw)
			}
			if buf == nil {
				buf = make([]byte, i, len(body))
				copy(buf, body[:i])
			}
			buf = append(buf, r)
			i++
		case buf != nil:
			buf = append(buf, c)
		}
	}
	if buf == nil {
		buf = body
	}
	if !utf8.Valid(buf) {
		return stringValueSlowly(raw)
	}
	return string(buf), true
}

func stringValueSlowly(raw []byte) (string, bool) {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}
