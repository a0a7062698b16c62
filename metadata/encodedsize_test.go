package metadata

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var indentCases = []string{
	`{}`, `[]`, `{"a":{}}`, `{"a":[]}`, `[[],{},[{}]]`, `"x"`, `1`, `null`, `true`,
	`{"a":1,"b":[1,2,{"c":"d"}],"e":{"f":{"g":[]}}}`,
	`{"s":"{[,:\"]}\\","t":"\u2028 <&>"}`,
	" \t\n{ \"a\" : [ 1 , 2 ] ,\r\n \"b\" : { } }",
	`{"a":1}  `, "[1]\n\t",
}

// TestIndentedLen: the length indentedLen gives is what json.Indent writes.
func TestIndentedLen(t *testing.T) {
	for _, text := range indentCases {
		checkIndentedLen(t, []byte(text))
	}
	for _, text := range scanCases {
		if json.Valid([]byte(text)) {
			checkIndentedLen(t, []byte(text))
		}
	}
}

func FuzzIndentedLen(f *testing.F) {
	for _, text := range indentCases {
		f.Add([]byte(text))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if json.Valid(data) {
			checkIndentedLen(t, data)
		}
	})
}

func checkIndentedLen(t *testing.T, data []byte) {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, json.Indent(&buf, data, "", "  "))
	assert.Equal(t, buf.Len(), indentedLen(data), "%q", data)
}

// TestEncodedSize: a function's EncodedSize is the length of its Encode,
// for functions of every kind of binding the pipeline writes.
func TestEncodedSize(t *testing.T) {
	for _, text := range scanCases {
		var f Function
		if !f.scan([]byte(text)) {
			continue
		}
		data, err := f.Encode()
		require.NoError(t, err)
		size, err := f.EncodedSize()
		require.NoError(t, err)
		assert.Equal(t, len(data), size, "%s", text)
	}
}
