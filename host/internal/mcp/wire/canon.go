package wire

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"slices"
	"unicode/utf8"

	"github.com/funcmcp/funcmcp/internal/jsonx"
)

// ArgumentsDigest names an arguments object whatever its spacing and
// member order: the SHA-256 of its canonical form, which is what
// encoding/json gives for the object decoded into any (with UseNumber) and
// encoded again — members sorted by name, the last of a repeated name
// kept, strings escaped as encoding/json escapes them, numbers as written —
// so that request states sealed by earlier versions still match. The
// canonical text is streamed into the hash as the arguments are read:
// nothing is decoded but member names and strings, one at a time. Absent
// or null arguments are "{}"; text that is not valid JSON is hashed as it
// is.
func ArgumentsDigest(args []byte) string {
	h := sha256.New()
	raw := bytes.TrimSpace(args)
	switch {
	case len(raw) == 0 || string(raw) == "null":
		h.Write([]byte("{}"))
	case !jsonx.Valid(raw):
		h.Write(raw)
	default:
		w := bufio.NewWriterSize(h, 4<<10)
		s := jsonx.NewScanner(raw)
		s.Space()
		canonValue(w, &s)
		_ = w.Flush() // a hash never fails a write
	}
	sum := h.Sum(nil)
	return base64.RawURLEncoding.EncodeToString(sum[:18])
}

// canonMember is one member of an object being made canonical: its
// decoded name and its value's text.
type canonMember struct {
	name  []byte
	value []byte
}

// canonValue writes the canonical form of the (valid) value at s's
// position and reads past it.
func canonValue(w *bufio.Writer, s *jsonx.Scanner) {
	switch s.Peek() {
	case '{':
		var ms []canonMember
		s.Object(func(key []byte, escaped bool) bool {
			name := key
			if escaped || !utf8.Valid(key) {
				dec, _ := jsonx.Unescape(key)
				name = []byte(dec)
			}
			value, ok := s.Value()
			ms = append(ms, canonMember{name, value})
			return ok
		})
		// Sorted by name; of a repeated name the last one stays, as when
		// decoded into a map.
		slices.SortStableFunc(ms, func(a, b canonMember) int { return bytes.Compare(a.name, b.name) })
		w.WriteByte('{')
		first := true
		for i, m := range ms {
			if i+1 < len(ms) && bytes.Equal(m.name, ms[i+1].name) {
				continue
			}
			if !first {
				w.WriteByte(',')
			}
			first = false
			canonString(w, m.name)
			w.WriteByte(':')
			vs := jsonx.NewScanner(m.value)
			canonValue(w, &vs)
		}
		w.WriteByte('}')
	case '[':
		w.WriteByte('[')
		first := true
		s.Array(func() bool {
			if !first {
				w.WriteByte(',')
			}
			first = false
			canonValue(w, s)
			return true
		})
		w.WriteByte(']')
	case '"':
		content, escaped, _ := s.String()
		if escaped || !utf8.Valid(content) {
			dec, _ := jsonx.Unescape(content)
			content = []byte(dec)
		}
		canonString(w, content)
	default: // a number or a literal, as written
		v, _ := s.Value()
		w.Write(v)
	}
}

const hexDigits = "0123456789abcdef"

// canonString writes s quoted as encoding/json quotes a string (HTML
// characters escaped, invalid UTF-8 as U+FFFD, U+2028 and U+2029 escaped).
func canonString(w *bufio.Writer, s []byte) {
	w.WriteByte('"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' && b != '<' && b != '>' && b != '&' {
				i++
				continue
			}
			w.Write(s[start:i])
			switch b {
			case '\\', '"':
				w.WriteByte('\\')
				w.WriteByte(b)
			case '\b':
				w.WriteString(`\b`)
			case '\f':
				w.WriteString(`\f`)
			case '\n':
				w.WriteString(`\n`)
			case '\r':
				w.WriteString(`\r`)
			case '\t':
				w.WriteString(`\t`)
			default:
				w.WriteString(`\u00`)
				w.WriteByte(hexDigits[b>>4])
				w.WriteByte(hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRune(s[i:])
		if c == utf8.RuneError && size == 1 {
			w.Write(s[start:i])
			w.WriteString(`\ufffd`)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			w.Write(s[start:i])
			w.WriteString(`\u202`)
			w.WriteByte(hexDigits[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	w.Write(s[start:])
	w.WriteByte('"')
}
