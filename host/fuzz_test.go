package host

import (
	"encoding/json"
	"testing"
)

// FuzzCheckRefs runs the host's $ref checks on arbitrary schema documents:
// they must end (no cycle is followed forever) and never panic.
func FuzzCheckRefs(f *testing.F) {
	for _, seed := range []string{
		`{"type":"object","$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}}}`,
		`{"type":"object","properties":{"c":{"type":"array","items":{"$ref":"#"}}}}`,
		`{"$defs":{"a":{"allOf":[{"$ref":"#/$defs/a"}]}}}`,
		`{"$ref":"#a","$defs":{"x":{"$anchor":"a","not":{"$ref":"#/$defs/x"}}}}`,
		`{"$ref":"#/$defs/~1~0%25"}`, `{"$ref":"#%zz"}`, `[]`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		var doc any
		if json.Unmarshal([]byte(text), &doc) != nil {
			return
		}
		_ = checkRefs(doc)
	})
}
