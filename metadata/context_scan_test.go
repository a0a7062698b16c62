package metadata

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sameContext reports whether a and b read the same to every reader.
func sameContext(a, b *ToolInvocationContext) bool {
	norm := func(c *ToolInvocationContext) any {
		type transport struct {
			Name, SessionID string
			Props, Zero     bool
			Headers         map[string]string
		}
		var t *transport
		if c.Transport != nil {
			t = &transport{Name: c.Transport.Name, SessionID: c.Transport.SessionID, Props: c.Transport.Properties != nil}
			if p := c.Transport.Properties; p != nil {
				t.Zero, t.Headers = p.Headers.IsZero(), p.Headers.Map()
				if len(t.Headers) == 0 {
					t.Headers = nil
				}
			}
		}
		return []any{c.Name, c.Arguments, string(c.RawArguments), c.SessionID, c.ClientInfo, t}
	}
	return reflect.DeepEqual(norm(a), norm(b))
}

func checkScanAsDecode(t *testing.T, data []byte) {
	t.Helper()
	got, ok := scanToolContext(bytes.Clone(data))
	if !ok {
		return
	}
	want, err := decodeToolContextJSON(data)
	if err != nil {
		t.Fatalf("%s: scanned, but encoding/json says %v", data, err)
	}
	if !sameContext(got, want) {
		t.Fatalf("%s:\nscanned %+v\ndecoded %+v", data, got, want)
	}
}

func TestScanToolContextAsEncodingJSON(t *testing.T) {
	for _, c := range []string{
		string(toolContextJSON(true)), string(toolContextJSON(false)),
		`{"name":"t"}`, `{}`, `{"arguments":{}}`, `{"arguments":{"a":null,"a":1,"b\u00e9":" x ","\ud800":[1, {"z":2}]}}`,
		`{"transport":{"name":"http","properties":{}}}`, `{"transport":{"name":"http","properties":{"headers":{}}}}`,
		`{"transport":{"properties":{"headers":{"A":null,"a":"x","A":"y"}}}}`,
		`{"clientinfo":{"name":"c","version":"1"},"sessionid":"s"}`,
		"{\"name\":\"bad \xff\"}", `{ "name" : "sp" , "arguments" : { "x" : 1 } }`,
	} {
		_, ok := scanToolContext([]byte(c))
		assert.True(t, ok, "read in one pass: %s", c)
		checkScanAsDecode(t, []byte(c))
	}
	for _, c := range []string{
		`{"Name":"t"}`, `{"name":"t","name":"u"}`, `{"name":null}`, `{"arguments":null}`, `{"other":1}`,
		`{"transport":{"properties":{"headers":{"a":1}}}}`, `{"transport":{"properties":{"Headers":{}}}}`,
		`{"clientinfo":{"name":"c","extra":"x"}}`, `{"n\u0061me":"t"}`, `{"name":"t"} x`,
	} {
		_, ok := scanToolContext([]byte(c))
		assert.False(t, ok, "left to encoding/json: %s", c)
	}
	// The caller's buffer is not held.
	data := toolContextJSON(true)
	c, err := DecodeToolInvocationContext(data)
	require.NoError(t, err)
	for i := range data {
		data[i] = ' '
	}
	v, _ := c.Transport.Header("User-Agent")
	assert.Equal(t, "node", v)
	assert.Equal(t, "get_weather", c.Name)
	assert.JSONEq(t, `{"city":"Oslo"}`, string(c.RawArguments))
}

func FuzzScanToolContext(f *testing.F) {
	f.Add(toolContextJSON(true))
	f.Add([]byte(`{"name":"t","arguments":{"a":[1,{"b":null}],"a":"x"},"clientinfo":{"name":"c","title":"T","version":"1"}}`))
	f.Add([]byte(`{"transport":{"name":"http-sse","sessionId":"s","properties":{"headers":{"A":"\u00e9","a":null}}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			if _, ok := scanToolContext(bytes.Clone(data)); ok {
				t.Fatalf("%q is not JSON but was read", data)
			}
			return
		}
		checkScanAsDecode(t, data)
	})
}
