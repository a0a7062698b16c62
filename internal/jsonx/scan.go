package jsonx

import (
	"encoding/binary"
	"encoding/json"
	"unicode/utf8"
)

// MaxDepth is the deepest nesting a [Scanner] reads, the limit of
// encoding/json: a text nesting deeper is not valid for either.
const MaxDepth = 10000

// Scanner reads a JSON text (RFC 8259) in one pass, checking the grammar as
// it goes and building nothing: it accepts exactly what [json.Valid]
// accepts. Its readers ([Scanner.Object], [Scanner.Array],
// [Scanner.String], [Scanner.Number], [Scanner.Literal], [Scanner.Skip],
// [Scanner.Value]) each read one value at the current position and report
// false when the text there is not valid JSON; the position is then
// undefined. Strings are not checked for valid UTF-8 (neither does
// encoding/json): a caller that echoes one checks it.
//
// It is the one JSON grammar of the module: the JSON-RPC decoder of the
// host, binding's check of values against schemas and its reader of
// worker replies, and [Measure] all read with it. The zero value reads an
// empty text; use [NewScanner].
type Scanner struct {
	data    []byte
	pos     int
	depth   int  // containers open at pos
	deepest int  // the most containers open at once so far
	members int  // object members read so far
	spaced  bool // white space skipped so far
}

// NewScanner returns a Scanner at the start of data.
func NewScanner(data []byte) Scanner { return Scanner{data: data} }

// Data is the text being read.
func (s *Scanner) Data() []byte { return s.data }

// Pos is the offset of the next byte to read.
func (s *Scanner) Pos() int { return s.pos }

// Seek moves back (or on) to offset pos, at the same nesting depth: a
// caller that reads one value twice saves Pos first.
func (s *Scanner) Seek(pos int) { s.pos = pos }

// Depth is the number of containers open at the position.
func (s *Scanner) Depth() int { return s.depth }

// Space skips white space.
func (s *Scanner) Space() {
	for s.pos < len(s.data) && spaceByte[s.data[s.pos]] {
		s.pos++
		s.spaced = true
	}
}

// spaceByte marks JSON's white space.
var spaceByte = [256]bool{' ': true, '\t': true, '\n': true, '\r': true}

// Peek returns the next byte, 0 at the end of the text.
func (s *Scanner) Peek() byte {
	if s.pos < len(s.data) {
		return s.data[s.pos]
	}
	return 0
}

// End skips white space and reports whether the text ends there.
func (s *Scanner) End() bool {
	s.Space()
	return s.pos == len(s.data)
}

// Object reads the object at the position. For each member it reads the key
// and the colon, then calls each with the key's text between the quotes
// (escaped reports a backslash in it: decode it with [Unescape]) and the
// position at the value, which each must read. It returns the number of
// members.
func (s *Scanner) Object(each func(key []byte, escaped bool) bool) (int, bool) {
	if s.Peek() != '{' || !s.open() {
		return 0, false
	}
	s.Space()
	if s.Peek() == '}' {
		s.pos++
		s.depth--
		return 0, true
	}
	for n := 1; ; n++ {
		s.Space()
		key, escaped, ok := s.String()
		if !ok || !s.colon() {
			return 0, false
		}
		s.members++
		if !each(key, escaped) {
			return 0, false
		}
		s.Space()
		switch s.Peek() {
		case '}':
			s.pos++
			s.depth--
			return n, true
		case ',':
			s.pos++
		default:
			return 0, false
		}
	}
}

// Array reads the array at the position, calling each with the position at
// every element, which each must read. It returns the number of elements.
func (s *Scanner) Array(each func() bool) (int, bool) {
	if s.Peek() != '[' || !s.open() {
		return 0, false
	}
	s.Space()
	if s.Peek() == ']' {
		s.pos++
		s.depth--
		return 0, true
	}
	for n := 1; ; n++ {
		s.Space()
		if !each() {
			return 0, false
		}
		s.Space()
		switch s.Peek() {
		case ']':
			s.pos++
			s.depth--
			return n, true
		case ',':
			s.pos++
		default:
			return 0, false
		}
	}
}

// open enters the container whose bracket is at the position.
func (s *Scanner) open() bool {
	s.pos++
	s.depth++
	s.deepest = max(s.deepest, s.depth)
	return s.depth <= MaxDepth
}

// colon reads the colon after a key, with the white space around it.
func (s *Scanner) colon() bool {
	s.Space()
	if s.Peek() != ':' {
		return false
	}
	s.pos++
	s.Space()
	return true
}

// String reads a string and returns its text between the quotes; escaped
// reports a backslash in it (decode it with [Unescape]).
func (s *Scanner) String() (content []byte, escaped, ok bool) {
	if s.Peek() != '"' {
		return nil, false, false
	}
	s.pos++
	start := s.pos
	data := s.data
	for {
		i := plainRun(data, s.pos)
		s.pos = i
		if i >= len(data) {
			return nil, false, false
		}
		switch data[i] {
		case '"':
			s.pos++
			return data[start:i], escaped, true
		case '\\':
			escaped = true
			if i+1 >= len(data) {
				return nil, false, false
			}
			switch data[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.pos += 2
			case 'u':
				if i+6 > len(data) {
					return nil, false, false
				}
				for _, h := range data[i+2 : i+6] {
					if !isHex(h) {
						return nil, false, false
					}
				}
				s.pos += 6
			default:
				return nil, false, false
			}
		default: // a control character
			return nil, false, false
		}
	}
}

// plainRun returns the offset of the first byte at or after i that a
// string does not hold as it is (len(data) when there is none). It reads
// eight bytes at a time while none of them is a quote, a backslash or a
// control character: base64 data and long text go by words, and the
// escapes of a text copy end the run every few bytes anyway.
func plainRun(data []byte, i int) int {
	const (
		ones  = 0x0101010101010101
		highs = 0x8080808080808080
	)
	for i+8 <= len(data) {
		w := binary.LittleEndian.Uint64(data[i:])
		q := w ^ ('"' * ones)
		b := w ^ ('\\' * ones)
		// (w-0x20·ones)&^w sets a high bit if a byte is below 0x20,
		// (q-ones)&^q if one is a quote and (b-ones)&^b if one is a
		// backslash; q and b have w's high bits.
		if ((w-0x20*ones)|(q-ones)|(b-ones))&^w&highs != 0 {
			break
		}
		i += 8
	}
	for i < len(data) && plainByte[data[i]] {
		i++
	}
	return i
}

// plainByte marks the bytes a string holds as they are: not a quote, a
// backslash or a control character.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// Number reads a number and returns its text; plain reports that it has
// neither a fraction nor an exponent.
func (s *Scanner) Number() (lit []byte, plain, ok bool) {
	start := s.pos
	if s.Peek() == '-' {
		s.pos++
	}
	switch c := s.Peek(); {
	case c == '0':
		s.pos++
	case c >= '1' && c <= '9':
		s.digits()
	default:
		return nil, false, false
	}
	plain = true
	if s.Peek() == '.' {
		plain = false
		s.pos++
		if !s.digits() {
			return nil, false, false
		}
	}
	if c := s.Peek(); c == 'e' || c == 'E' {
		plain = false
		s.pos++
		if c := s.Peek(); c == '+' || c == '-' {
			s.pos++
		}
		if !s.digits() {
			return nil, false, false
		}
	}
	return s.data[start:s.pos], plain, true
}

func (s *Scanner) digits() bool {
	start := s.pos
	for s.pos < len(s.data) && s.data[s.pos] >= '0' && s.data[s.pos] <= '9' {
		s.pos++
	}
	return s.pos > start
}

// Literal reads lit (true, false or null) if that is what comes next.
func (s *Scanner) Literal(lit string) bool {
	if len(s.data)-s.pos >= len(lit) && string(s.data[s.pos:s.pos+len(lit)]) == lit {
		s.pos += len(lit)
		return true
	}
	return false
}

// Value reads any value and returns its text.
func (s *Scanner) Value() ([]byte, bool) {
	start := s.pos
	if !s.Skip() {
		return nil, false
	}
	return s.data[start:s.pos], true
}

// Skip reads any value. Nesting is followed without recursion, so that a
// deep text costs no stack.
func (s *Scanner) Skip() bool {
	base := s.depth
	// kinds holds one bit per container opened here: 1 for an object.
	var small [4]uint64
	kinds := small[:]
	push := func(object bool) bool {
		if !s.open() {
			return false
		}
		i := s.depth - base - 1
		if i/64 >= len(kinds) {
			kinds = append(kinds, make([]uint64, len(kinds))...)
		}
		if object {
			kinds[i/64] |= 1 << (i % 64)
		} else {
			kinds[i/64] &^= 1 << (i % 64)
		}
		return true
	}
	inObject := func() bool {
		i := s.depth - base - 1
		return kinds[i/64]&(1<<(i%64)) != 0
	}
	key := func() bool {
		s.Space()
		if _, _, ok := s.String(); !ok || !s.colon() {
			return false
		}
		s.members++
		return true
	}
	for {
		// A value starts here.
		s.Space()
		switch c := s.Peek(); c {
		case '{':
			if !push(true) {
				return false
			}
			s.Space()
			if s.Peek() != '}' {
				if !key() {
					return false
				}
				continue
			}
			s.pos++
			s.depth--
		case '[':
			if !push(false) {
				return false
			}
			s.Space()
			if s.Peek() != ']' {
				continue
			}
			s.pos++
			s.depth--
		case '"':
			if _, _, ok := s.String(); !ok {
				return false
			}
		case 't':
			if !s.Literal("true") {
				return false
			}
		case 'f':
			if !s.Literal("false") {
				return false
			}
		case 'n':
			if !s.Literal("null") {
				return false
			}
		default:
			if _, _, ok := s.Number(); !ok {
				return false
			}
		}
		// A value ended: close what ends with it, up to the next value.
		for {
			if s.depth == base {
				return true
			}
			s.Space()
			closing := byte(']')
			if inObject() {
				closing = '}'
			}
			c := s.Peek()
			if c == closing {
				s.pos++
				s.depth--
				continue
			}
			if c != ',' {
				return false
			}
			s.pos++
			if closing == '}' && !key() {
				return false
			}
			break
		}
	}
}

// Valid reports whether data is one JSON value with white space around it:
// what json.Valid reports, read by a [Scanner].
func Valid(data []byte) bool {
	s := NewScanner(data)
	s.Space()
	return s.Skip() && s.End()
}

// Text is the string that the text of a JSON string between its quotes
// decodes to, as [Scanner.String] and [Scanner.Object] give it (escaped
// reports a backslash in it): the text itself when it has no escape and is
// valid UTF-8, else [Unescape]'s.
func Text(content []byte, escaped bool) (string, bool) {
	if escaped || !utf8.Valid(content) {
		return Unescape(content)
	}
	return string(content), true
}

// Unescape decodes the text of a string between its quotes as
// encoding/json decodes it (invalid UTF-8 and lone surrogates become
// U+FFFD); ok is false when it is not the text of a JSON string.
func Unescape(content []byte) (string, bool) {
	quoted := make([]byte, 0, len(content)+2)
	quoted = append(append(append(quoted, '"'), content...), '"')
	var v string
	if json.Unmarshal(quoted, &v) != nil {
		return "", false
	}
	return v, true
}
