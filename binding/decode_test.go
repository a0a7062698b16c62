package binding

import (
	"bytes"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var decodeCases = []string{
	`{}`, `[]`, `null`, `true`, ` false `, `"a"`, `-0`, `1.5e-3`, `12345678901234567890123`,
	`{"type":"object","properties":{"a":{"type":"integer","minimum":-1E+2}},"required":["a"]}`,
	`{"a":1,"a":[2,{"b":null}],"\u0061\n":"\ud83d\ude00\u00e9","c":"\ud800"}`,
	"{\"\xff\":\"\xfe\"}", " [ 1 , [ ] , { } ] ",
	`{"a":1} x`, `{"a":}`, `[1,]`, `"\x"`, ``, `01`, `{"a" 1}`, "\"\x01\"", `nul`,
}

// TestDecodeJSON: DecodeJSON makes the value jsonschema.UnmarshalJSON
// makes, and fails where it fails, with its error.
func TestDecodeJSON(t *testing.T) {
	for _, text := range decodeCases {
		checkDecode(t, []byte(text))
	}
}

func FuzzDecodeJSON(f *testing.F) {
	for _, text := range decodeCases {
		f.Add([]byte(text))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkDecode(t, data)
	})
}

func checkDecode(t *testing.T, data []byte) {
	t.Helper()
	want, wantErr := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	got, err := DecodeJSON(data)
	if wantErr != nil {
		require.Error(t, err, "%q", data)
		assert.Equal(t, wantErr.Error(), err.Error(), "%q", data)
		return
	}
	require.NoError(t, err, "%q", data)
	assert.Equal(t, want, got, "%q", data)
}
