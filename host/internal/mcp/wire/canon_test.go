package wire

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// digestByDecoding is how request states named their arguments before:
// decoded into any and encoded again. ArgumentsDigest must agree with it.
func digestByDecoding(args []byte) string {
	canon := bytes.TrimSpace(args)
	var v any
	d := json.NewDecoder(bytes.NewReader(canon))
	d.UseNumber()
	if len(canon) == 0 || string(canon) == "null" {
		canon = []byte("{}")
	} else if d.Decode(&v) == nil {
		if b, err := json.Marshal(v); err == nil {
			canon = b
		}
	}
	sum := sha256.Sum256(canon)
	return base64.RawURLEncoding.EncodeToString(sum[:18])
}

var digestSeeds = []string{
	``, `null`, ` {} `, `{"b":1,"a":[1,2,{"d":null,"c":true}]}`,
	`{"a":1,"a":2}`, `{"x":{"k":1,"k":{"z":0,"y":-0.5e10}}}`,
	`{"s":"<b>&amp;\u2028\u2029\t\n\r\b\f\u0001\"\\/é😀"}`,
	"{\"bad\":\"\xff\xfe\",\"\xffkey\":1}", `{"\ud800":"\udc00x\ud83d\ude00"}`,
	`{"n":1.000,"m":1E+2,"o":-0,"p":12345678901234567890123}`,
	`{"é":1,"e":2,"E":3,"":4}`, `[1,"a"]`, `"x"`, `12`, `{"a":` + strings.Repeat("[", 70) + strings.Repeat("]", 70) + `}`,
}

// TestArgumentsDigestAgreesWithDecoding: the streamed digest is the one
// states sealed before carry, whatever the spacing, order, escapes or
// repeated names.
func TestArgumentsDigestAgreesWithDecoding(t *testing.T) {
	for _, s := range digestSeeds {
		assert.Equal(t, digestByDecoding([]byte(s)), ArgumentsDigest([]byte(s)), "%q", s)
	}
	assert.Equal(t, ArgumentsDigest([]byte(`{"a":1,"b":[2]}`)), ArgumentsDigest([]byte(" {\n\"b\" : [ 2 ] ,\"a\":1}")))
	assert.NotEqual(t, ArgumentsDigest([]byte(`{"a":1}`)), ArgumentsDigest([]byte(`{"a":2}`)))
}

// TestArgumentsDigestDoesNotMaterialise (issue 25, finding 4): naming
// 1 MiB of arguments allocates a small fraction of them, where decoding
// them into any took many times their size.
func TestArgumentsDigestDoesNotMaterialise(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"pad":[1`)
	for b.Len() < 1<<20 {
		b.WriteString(`,1`)
	}
	b.WriteString(`],"s":"` + strings.Repeat("x", 1000) + `"}`)
	args := []byte(b.String())
	allocated := func(f func()) uint64 {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		f()
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	old := allocated(func() { digestByDecoding(args) })
	now := allocated(func() { ArgumentsDigest(args) })
	t.Logf("naming 1 MiB of arguments allocated %d KiB by decoding, %d KiB streamed", old>>10, now>>10)
	assert.Less(t, now, uint64(64<<10))
}

// FuzzArgumentsDigest: the streamed digest never panics and agrees with
// decoding and encoding again for any text.
func FuzzArgumentsDigest(f *testing.F) {
	for _, s := range digestSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := ArgumentsDigest([]byte(s)), digestByDecoding([]byte(s)); got != want && json.Valid([]byte(s)) {
			t.Fatalf("%q: streamed %s, decoded %s", s, got, want)
		}
	})
}

// BenchmarkArgumentsDigest names 1 MiB of arguments, streamed and by
// decoding them as before.
func BenchmarkArgumentsDigest(b *testing.B) {
	var sb strings.Builder
	sb.WriteString(`{"pad":[1`)
	for sb.Len() < 1<<20 {
		sb.WriteString(`,1`)
	}
	sb.WriteString(`],"s":"x"}`)
	args := []byte(sb.String())
	b.Run("streamed", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(args)))
		for b.Loop() {
			ArgumentsDigest(args)
		}
	})
	b.Run("decoded", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(args)))
		for b.Loop() {
			digestByDecoding(args)
		}
	})
}
