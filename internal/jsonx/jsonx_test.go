package jsonx

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestIsNullAndIsAbsent(t *testing.T) {
	for _, tc := range []struct {
		in           string
		null, absent bool
	}{
		{"null", true, true},
		{" \n null\t", true, true},
		{"", false, true},
		{"  ", false, true},
		{`"null"`, false, false},
		{"nul", false, false},
		{"nulll", false, false},
		{"0", false, false},
		{"{}", false, false},
	} {
		assert.Equal(t, tc.null, IsNull([]byte(tc.in)), "IsNull(%q)", tc.in)
		assert.Equal(t, tc.absent, IsAbsent([]byte(tc.in)), "IsAbsent(%q)", tc.in)
	}
}

func TestMeasure(t *testing.T) {
	for _, tc := range []struct {
		in          string
		depth, keys int
	}{
		{`1`, 0, 0},
		{`{}`, 1, 0},
		{`{"a":{"b":[1,{"c":2}]}}`, 4, 3},
		{`["{:}"]`, 1, 0},
		{`{"a\":{":1}`, 1, 1},
		{`[[[[]]]]`, 4, 0},
	} {
		d, k := Measure([]byte(tc.in))
		assert.Equal(t, tc.depth, d, "depth of %s", tc.in)
		assert.Equal(t, tc.keys, k, "keys of %s", tc.in)
	}
}

func TestPointers(t *testing.T) {
	assert.Equal(t, "a~1b~0c", EscapePointerToken("a/b~c"))
	assert.Equal(t, "plain", EscapePointerToken("plain"))
	assert.Equal(t, "a/b~c", UnescapePointerToken("a~1b~0c"))
	// ~01 is "~1" escaped, not "/".
	assert.Equal(t, "~1", UnescapePointerToken("~01"))

	var doc any
	require.NoError(t, json.Unmarshal([]byte(`{"a/b":{"c~d":[10,20]},"":1}`), &doc))
	for ptr, want := range map[string]any{
		"":             doc,
		"/a~1b/c~0d/1": float64(20),
		"/":            float64(1),
	} {
		got, ok := ResolvePointer(doc, ptr)
		assert.True(t, ok, ptr)
		assert.Equal(t, want, got, ptr)
	}
	for _, ptr := range []string{"a", "/x", "/a~1b/c~0d/2", "/a~1b/c~0d/-1", "/a~1b/c~0d/x", "/a~1b/c~0d/0/y"} {
		_, ok := ResolvePointer(doc, ptr)
		assert.False(t, ok, ptr)
	}
}

func TestSafeText(t *testing.T) {
	assert.Equal(t, "a\uFFFDb", SafeText("a\xffb"))
	long := strings.Repeat("é", 100) // 200 bytes
	got := SafeText(long)
	assert.True(t, strings.HasSuffix(got, "…"))
	assert.LessOrEqual(t, len(got), maxEcho+len("…"))
	assert.Equal(t, `"x\"y"`, QuoteSafe(`x"y`))
}

func TestOneLine(t *testing.T) {
	assert.Equal(t, "plain", OneLine("plain"))
	assert.Equal(t, "a; b; c", OneLine("a\nb\r\n\n  c  "))
}
