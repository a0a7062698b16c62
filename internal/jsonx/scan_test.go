package jsonx

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var scanSeeds = []string{
	`{"a":[1,-2.5e+3,true,false,null,"x\"\\\/\b\f\n\r\t\u00e9"],"b":{}}`,
	` [ ] `, `0`, `-0`, `01`, `1.`, `.5`, `1e`, `1e+`, `-`, `"\x"`, `"\u12"`, "\"\x01\"", "\"\xff\"",
	`{"a" 1}`, `{"a":1,}`, `[1,]`, `{,}`, `[1 2]`, `{"a":1}}`, `tru`, `nul`, `{1:2}`, `[`, `{`, ``, ` `,
	`{"a":{"b":{"c":[[[{"d":[]}]]]}}}`,
}

// FuzzScanner checks the scanner against encoding/json: the same texts are
// valid, and a value's text read by Value is the one encoding/json decodes.
func FuzzScanner(f *testing.F) {
	for _, s := range scanSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		valid := json.Valid(data)
		require.Equal(t, valid, Valid(data), "Valid(%q)", data)
		if !valid {
			return
		}
		s := NewScanner(data)
		s.Space()
		raw, ok := s.Value()
		require.True(t, ok)
		assert.True(t, s.End())
		assert.Equal(t, strings.TrimSpace(string(data)), string(raw))
		assert.Zero(t, s.Depth())

		// Object and Array see the members encoding/json sees.
		// UseNumber: a number too large for a float64 is still valid JSON.
		var top any
		d := json.NewDecoder(bytes.NewReader(data))
		d.UseNumber()
		require.NoError(t, d.Decode(&top))
		s = NewScanner(data)
		s.Space()
		switch v := top.(type) {
		case map[string]any:
			keys := map[string]bool{}
			_, ok := s.Object(func(key []byte, escaped bool) bool {
				k := string(key)
				if escaped {
					var ok bool
					k, ok = Unescape(key)
					require.True(t, ok)
				}
				keys[k] = true
				return s.Skip()
			})
			require.True(t, ok)
			assert.Len(t, keys, len(v))
		case []any:
			n, ok := s.Array(s.Skip)
			require.True(t, ok)
			assert.Len(t, v, n)
		}
	})
}

func TestScannerDepth(t *testing.T) {
	at := func(n int) []byte { return []byte(strings.Repeat("[", n) + strings.Repeat("]", n)) }
	assert.True(t, Valid(at(MaxDepth)))
	assert.False(t, Valid(at(MaxDepth+1)))
	assert.Equal(t, json.Valid(at(MaxDepth+1)), Valid(at(MaxDepth+1)), "the limit of encoding/json")
	deep := []byte(strings.Repeat(`{"a":`, 300) + "1" + strings.Repeat("}", 300))
	assert.True(t, Valid(deep), "nesting beyond the scanner's first stack words")
	d, k := Measure(deep)
	assert.Equal(t, 300, d)
	assert.Equal(t, 300, k)
}

func TestScannerReaders(t *testing.T) {
	s := NewScanner([]byte(`{"n":-12.5e3,"i":42,"s":"a\nb","t":true}`))
	got := map[string]string{}
	_, ok := s.Object(func(key []byte, _ bool) bool {
		switch string(key) {
		case "n", "i":
			lit, plain, ok := s.Number()
			got[string(key)] = string(lit)
			got[string(key)+".plain"] = map[bool]string{true: "plain", false: "not"}[plain]
			return ok
		case "s":
			content, escaped, ok := s.String()
			text, _ := Unescape(content)
			got["s"] = text
			assert.True(t, escaped)
			return ok
		}
		return s.Literal("true")
	})
	require.True(t, ok)
	assert.Equal(t, map[string]string{"n": "-12.5e3", "n.plain": "not", "i": "42", "i.plain": "plain", "s": "a\nb"}, got)
	assert.True(t, s.End())
}

func BenchmarkSkip(b *testing.B) {
	data := []byte(`{"city":"Seattle","days":[` + strings.Repeat(`{"date":"2026-03-01","high":11.5,"low":-4,"conditions":"Light \"rain\"","wind":[1,2,3]},`, 20) + `null]}`)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if !Valid(data) {
			b.Fatal("invalid")
		}
	}
}

// TestStringFindsEverySpecialByte puts each byte value at each offset of a
// string long enough to be read eight bytes at a time: the scanner ends the
// string, reads the escape or refuses the control character exactly where
// encoding/json does.
func TestStringFindsEverySpecialByte(t *testing.T) {
	const n = 27
	for c := 0; c < 256; c++ {
		for at := range n {
			text := []byte(strings.Repeat("é", n/2) + "x") // two-byte runes: high bits set
			text[at] = byte(c)
			data := append(append([]byte(`"`), text...), `\n"`...)
			s := NewScanner(data)
			content, escaped, ok := s.String()
			valid := json.Valid(data)
			if ok && !s.End() {
				ok = false // the string ended early, at a quote put into it
			}
			require.Equal(t, valid, ok, "byte %#x at %d: %q", c, at, data)
			if valid {
				require.Equal(t, data[1:len(data)-1], content, "byte %#x at %d", c, at)
				require.True(t, escaped, "the closing \\n is an escape")
			}
		}
	}
}

// BenchmarkStrings reads a tool result's two kinds of long string: the
// text copy of a structuredContent (a quote escaped every few bytes) and
// an image's base64 data (none).
func BenchmarkStrings(b *testing.B) {
	copyText := `{"type":"text","text":"{\"city\":\"Buenos Aires\",\"units\":\"metric\",\"daily\":[` +
		strings.Repeat(`{\"date\":\"2026-03-01\",\"high\":-1.3,\"low\":-8.3,\"condition\":\"partly_cloudy\",\"precipitationChance\":26},`, 7) + `{}]}"}`
	image := `{"type":"image","mimeType":"image/png","data":"` + strings.Repeat("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk", 1000) + `"}`
	for _, c := range []struct{ name, data string }{{"textCopy", copyText}, {"base64", image}} {
		data := []byte(c.data)
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if !Valid(data) {
					b.Fatal("invalid")
				}
			}
		})
	}
}

func BenchmarkStdValid(b *testing.B) {
	data := []byte(`{"city":"Seattle","days":[` + strings.Repeat(`{"date":"2026-03-01","high":11.5,"low":-4,"conditions":"Light \"rain\"","wind":[1,2,3]},`, 20) + `null]}`)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if !json.Valid(data) {
			b.Fatal("invalid")
		}
	}
}
