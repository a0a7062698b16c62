package jsonx

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
)

var stringValueCases = []string{
	`""`, `"plain"`, `"{\"type\":\"object\"}"`, `"tab\there\\ and \/ \b\f\n\r"`, `"\u00e9\ud83d\ude00"`,
	`"lone \ud800"`, "\"bad \xff utf-8\"", "\"ctl \x01\"", `"unterminated`, `"a"b"`, `"trailing\"`,
	`"\x"`, `null`, `1`, `"`, ``, `"é"`,
}

func TestStringValueAgreesWithEncodingJSON(t *testing.T) {
	for _, c := range stringValueCases {
		checkStringValue(t, []byte(c))
	}
}

func FuzzStringValue(f *testing.F) {
	for _, c := range stringValueCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, raw []byte) { checkStringValue(t, raw) })
}

func checkStringValue(t *testing.T, raw []byte) {
	t.Helper()
	got, ok := StringValue(raw)
	var want string
	err := json.Unmarshal(raw, &want)
	wantOK := err == nil && len(raw) > 1 && raw[0] == '"' && raw[len(raw)-1] == '"' // a token, nothing around it
	if assert.Equal(t, wantOK, ok, "%q", raw) && ok {
		assert.Equal(t, want, got, "%q", raw)
	}
}

// TestText: the text of a JSON string decodes as encoding/json decodes the
// string, whether it has escapes or not.
func TestText(t *testing.T) {
	for _, raw := range []string{`"plain"`, `"a\"b\\c"`, `"\u00e9\ud83d\ude00"`, "\"\xff\"", `"\ud800"`, `""`} {
		content := []byte(raw[1 : len(raw)-1])
		got, ok := Text(content, bytes.IndexByte(content, '\\') >= 0)
		want, wantOK := StringValue([]byte(raw))
		assert.Equal(t, wantOK, ok, raw)
		assert.Equal(t, want, got, raw)
	}
	_, ok := Text([]byte(`\x`), true)
	assert.False(t, ok, "not the text of a JSON string")
}
