package binding

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/funcmcp/funcmcp/internal/jsonx"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// objectMembersSlowly is objectMembers through encoding/json's tokens:
// what it read before it used a jsonx.Scanner.
func objectMembersSlowly(obj json.RawMessage) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	if _, err := dec.Token(); err != nil { // {
		return nil, err
	}
	var out []member
	for dec.More() {
		start := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		rawKey := bytes.TrimLeft(obj[start:dec.InputOffset()], ",")
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return nil, err
		}
		out = append(out, member{rawKey: rawKey, key: key, value: value})
	}
	return out, nil
}

var memberCases = []string{
	`{}`, `{"a":1}`, `{"type":"object","properties":{"x":{"type":"string"}},"required":["x"]}`,
	`{"\u0074ype":"array","items":{"$ref":"#/$defs/a"},"$defs":{"a":true}}`,
	`{"a":"b\"c","a":[1,{"d":null}],"e\\f":-1.5e3}`, `{"é":"\ud83d\ude00"}`,
}

// TestObjectMembers: the members of a compact object are those
// encoding/json's tokens give, keys as written and decoded, values as
// written.
func TestObjectMembers(t *testing.T) {
	for _, text := range memberCases {
		checkMembers(t, []byte(text))
	}
}

func FuzzObjectMembers(f *testing.F) {
	for _, text := range memberCases {
		f.Add([]byte(text))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		compact, err := jsonx.AppendCompact(nil, data)
		if err != nil || len(compact) == 0 || compact[0] != '{' {
			return
		}
		checkMembers(t, compact)
	})
}

func checkMembers(t *testing.T, obj []byte) {
	t.Helper()
	want, err := objectMembersSlowly(obj)
	require.NoError(t, err)
	got, err := objectMembers(obj)
	require.NoError(t, err, "%s", obj)
	require.Len(t, got, len(want), "%s", obj)
	for i := range want {
		assert.Equal(t, string(want[i].rawKey), string(got[i].rawKey), "%s", obj)
		assert.Equal(t, want[i].key, got[i].key, "%s", obj)
		assert.Equal(t, string(want[i].value), string(got[i].value), "%s", obj)
	}
}
