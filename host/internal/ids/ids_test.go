package ids

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestRandom(t *testing.T) {
	tests := []struct {
		alphabet string
		n        int
		pattern  string
	}{
		{LowerAlnum, 16, `^[a-z0-9]{16}$`},
		{Base32Lower, 16, `^[a-z2-7]{16}$`},
		{Base32, 26, `^[A-Z2-7]{26}$`},
		{"01", 100, `^[01]{100}$`},
		{LowerAlnum, 0, `^$`},
	}
	for _, tt := range tests {
		t.Run(tt.pattern, func(t *testing.T) {
			seen := map[string]bool{}
			for range 200 {
				id := Random(tt.alphabet, tt.n)
				assert.Regexp(t, tt.pattern, id)
				if tt.n >= 16 {
					assert.False(t, seen[id], "duplicate id %s", id)
				}
				seen[id] = true
			}
		})
	}
	assert.Panics(t, func() { Random("a", 3) })
	assert.Panics(t, func() { Random(strings.Repeat("a", 257), 3) })
}

// TestRandomIsUniform draws many characters of an alphabet whose size does
// not divide 256: without rejection the first 256%36 characters would come
// up about 1/7 more often than the others.
func TestRandomIsUniform(t *testing.T) {
	const n = 360000
	counts := map[rune]int{}
	for _, c := range Random(LowerAlnum, n) {
		counts[c]++
	}
	assert.Len(t, counts, len(LowerAlnum))
	want := n / len(LowerAlnum) // 10,000 each; a standard deviation is about 100
	for c, got := range counts {
		assert.InDelta(t, want, got, 600, "character %q", c)
	}
}

func TestGUID(t *testing.T) {
	re := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	seen := map[string]bool{}
	for range 200 {
		g := GUID()
		assert.Regexp(t, re, g)
		assert.False(t, seen[g])
		seen[g] = true
	}
}

func TestIs(t *testing.T) {
	assert.True(t, Is(Random(LowerAlnum, 26), LowerAlnum, 26))
	for _, s := range []string{"", "a/b", strings.Repeat("a", 25), strings.Repeat("a", 27), strings.Repeat("A", 26), strings.Repeat("a", 25) + "\x00", strings.Repeat("a", 24) + "é"} {
		assert.False(t, Is(s, LowerAlnum, 26), "%q", s)
	}
}
