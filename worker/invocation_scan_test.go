package worker

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestScanInvocationAgreesWithEncodingJSON: the one-pass reader of an
// invocation body takes the bodies funchost and the Functions host send,
// and whatever it takes it reads as encoding/json does; everything else is
// left to encoding/json.
func TestScanInvocationAgreesWithEncodingJSON(t *testing.T) {
	for _, c := range []struct {
		body  string
		taken bool
	}{
		{`{"Data":{"context":{"name":"t","arguments":{"a":1}}},"Metadata":{"sys":{"MethodName":"t"}}}`, true},
		{` {"Metadata":{},"Data":{"context":"{\"uri\":\"x\"}","Other":[1,2]}} `, true},
		{`{"Data":{"context":1,"context":2}}`, true},
		{`{"Data":null}`, true},
		{`{"Data":{}}`, true},
		{`{}`, true},
		{`{"data":{"context":1}}`, false},          // encoding/json matches keys in any case
		{`{"Data":{"c":1},"Data":{"d":2}}`, false}, // merged by encoding/json
		{`{"Data":{"c":1},"Extra":true}`, false},   // ignored by encoding/json
		{`{"Data":{"c":1}} {"trailing":1}`, false}, // the decoder reads one value
		{`{"D\u0061ta":{"c":1}}`, false},           // an escaped key
		{`{"Data":{"c":1}`, false},                 // not JSON
		{`{"Data":[1]}`, false},                    // not an object
		{`{"Data":{"c":tru}}`, false},              // not JSON
	} {
		got, ok := scanInvocation([]byte(c.body))
		assert.Equal(t, c.taken, ok, c.body)
		if !ok {
			continue
		}
		var want struct {
			Data     map[string]json.RawMessage `json:"Data"`
			Metadata json.RawMessage            `json:"Metadata"`
		}
		if !assert.NoError(t, json.NewDecoder(bytes.NewReader([]byte(c.body))).Decode(&want), c.body) {
			continue
		}
		assert.Equal(t, len(want.Data), len(got), c.body)
		assert.Equal(t, want.Data == nil, got == nil, c.body)
		for k, v := range want.Data {
			assert.Equal(t, string(v), string(got[k]), c.body)
		}
	}
}
