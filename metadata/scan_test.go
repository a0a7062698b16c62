package metadata

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// scanCases are function.json texts read both in one pass (scan,
// decodeObject) and by encoding/json (the slow paths), which must agree.
var scanCases = []string{
	`{"bindings":[{"type":"mcpToolTrigger","direction":"in","name":"context","toolName":"t","outputSchema":"{\"type\":\"object\"}"}]}`,
	"{\n  \"scriptFile\": \"x\",\n  \"bindings\": [\n    {\n      \"type\": \"httpTrigger\",\n      \"methods\": [ \"get\", \"post\" ],\n      \"x\": { \"a\" : 1 }\n    }\n  ],\n  \"disabled\": false\n}\n",
	`{"bindings":null,"a":1}`,
	`{"bindings":[],"bindings":[{"type":"a"}]}`,
	`{"b\u0069ndings":[{"t\u00e9":"\u00e9","n":-1.5e3,"o":{"k":[true,null]}}]}`,
	`{"bindings":[{"type":"a","type":"b"}]}`,
	`{"bindings":"nope"}`,
	`{"bindings":[1]}`,
	`[]`,
	`{"a":}`,
	`{"bindings":[{}]} x`,
	"{\"k\xff\":\"v\xfe\",\"bindings\":[]}",
}

func TestScanAgreesWithEncodingJSON(t *testing.T) {
	for _, text := range scanCases {
		checkScanAgreement(t, []byte(text))
	}
}

func FuzzScanFunction(f *testing.F) {
	for _, text := range scanCases {
		f.Add([]byte(text))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkScanAgreement(t, data)
	})
}

// checkScanAgreement reads data both ways and compares what they make.
func checkScanAgreement(t *testing.T, data []byte) {
	t.Helper()
	var fast, slow Function
	scanned := fast.scan(data)
	if !json.Valid(data) {
		assert.False(t, scanned, "scanned invalid JSON %q", data)
		return
	}
	err := slow.unmarshalSlowly(bytes.TrimSpace(data))
	require.Equal(t, err == nil, scanned, "%q: scanned %v, encoding/json: %v", data, scanned, err)
	if !scanned {
		return
	}
	a, errA := fast.MarshalJSON()
	b, errB := slow.MarshalJSON()
	require.Equal(t, errB == nil, errA == nil)
	assert.Equal(t, string(b), string(a), "%q", data)
	require.Len(t, fast.Bindings, len(slow.Bindings))
	for i := range fast.Bindings {
		assert.Equal(t, slow.Bindings[i].Fields(), fast.Bindings[i].Fields(), "%q binding %d", data, i)
	}

	fields, err := decodeObject(bytes.TrimSpace(data))
	slowFields, slowErr := decodeObjectSlowly(bytes.TrimSpace(data))
	require.Equal(t, slowErr == nil, err == nil)
	assert.Equal(t, slowFields, fields)
}
