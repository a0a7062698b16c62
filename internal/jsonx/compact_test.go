package jsonx

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// compactCases are values with and without white space outside and
// inside strings, escaped quotes and backslashes, and invalid ones.
var compactCases = []string{
	`{"a":1}`,
	`{"a": 1}`,
	` {"a":1}`,
	`{"a":1} `,
	`{"text":"Buenos Aires, 7 days"}`,
	`{"q":"a \"quoted\" word","n":[1, 2]}`,
	`{"b":"ends with a backslash\\","c": true}`,
	`{"b":"ends with a backslash\\","c":true}`,
	`{"b":"\\\"still inside\\\" ","c":null}`,
	`{"a":"x y","b":"\\"}`,
	`{"a":"x y","b":"\\" }`,
	`{"a":"\" ", "b":1}`,
	`{"a":"\" ","b":1}`,
	"[\n  1,\n  2\n]",
	`"a string with spaces"`,
	`12.5e3`,
	`{"a":1`,
	`{"a":1}}`,
	`{"a" 1}`,
	`[1,]`,
	``,
	`nul`,
}

func TestAppendCompactIsJSONCompact(t *testing.T) {
	for _, c := range compactCases {
		var want bytes.Buffer
		wantErr := json.Compact(&want, []byte(c))
		got, err := AppendCompact([]byte("prefix:"), []byte(c))
		if wantErr != nil {
			require.EqualError(t, err, wantErr.Error(), "%q", c)
			continue
		}
		require.NoError(t, err, "%q", c)
		require.Equal(t, "prefix:"+want.String(), string(got), "%q", c)
	}
}

func FuzzAppendCompact(f *testing.F) {
	for _, c := range compactCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var want bytes.Buffer
		wantErr := json.Compact(&want, data)
		got, err := AppendCompact(nil, data)
		if wantErr != nil {
			if err == nil {
				t.Fatalf("%q: json.Compact fails (%v), AppendCompact does not", data, wantErr)
			}
			return
		}
		if err != nil || !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("%q: got %q, %v; want %q", data, got, err, want.Bytes())
		}
	})
}

func BenchmarkAppendCompact(b *testing.B) {
	data := []byte(`{"type":"text","text":"{\"city\":\"Buenos Aires\",\"units\":\"metric\",\"daily\":[{\"date\":\"2026-03-01\",\"high\":-1.3,\"low\":-8.3,\"condition\":\"partly_cloudy\",\"precipitationChance\":26}]}"}`)
	dst := make([]byte, 0, 4096)
	b.Run("AppendCompact", func(b *testing.B) {
		for b.Loop() {
			dst, _ = AppendCompact(dst[:0], data)
		}
	})
	b.Run("json.Compact", func(b *testing.B) {
		for b.Loop() {
			buf := bytes.NewBuffer(dst[:0])
			_ = json.Compact(buf, data)
			dst = buf.Bytes()
		}
	})
}
