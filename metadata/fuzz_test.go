package metadata

import (
	"encoding/json"
	"testing"
)

// FuzzToolContextFromRequest decodes arbitrary invocation requests the way
// a worker does, the context at any depth of string encoding. Nothing may
// panic, and decoded arguments are valid JSON.
func FuzzToolContextFromRequest(f *testing.F) {
	for _, seed := range []string{
		`{"Data":{"context":{"name":"t","arguments":{"a":1},"sessionid":"s","transport":{"name":"http-streamable"}}},"Metadata":{}}`,
		`{"Data":{"context":"{\"name\":\"t\",\"arguments\":{\"a\":\"x\"}}"},"Metadata":{}}`,
		`{"Data":{"Context":"\"{\\\"name\\\":\\\"t\\\"}\""}}`,
		`{"Data":{"context":null}}`, `{"Data":{}}`, `{"Data":{"context":"\""}}`, `{}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var req InvocationRequest
		if json.Unmarshal(data, &req) != nil {
			return
		}
		tc, err := ToolContextFromRequest(&req, TriggerBindingName)
		if err != nil {
			return
		}
		for k, v := range tc.Arguments {
			if !json.Valid(v) {
				t.Fatalf("argument %q is not valid JSON: %q", k, v)
			}
		}
	})
}
