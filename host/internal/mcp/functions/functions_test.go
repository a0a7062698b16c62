package functions

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEncodedResult: a worker's result object is checked in one pass and
// kept as it is, its _meta taken out (wherever it stands) and line breaks
// compacted away; anything but one object in UTF-8 with the member the
// method needs is refused.
func TestEncodedResult(t *testing.T) {
	for _, c := range []struct {
		in, members, meta string
	}{
		{`{"contents":[{"uri":"a","text":"x"}]}`, `"contents":[{"uri":"a","text":"x"}]`, ``},
		{` { "contents" : [ ] } `, `"contents" : [ ]`, ``},
		{`{"_meta":{"k":1},"contents":[]}`, `"contents":[]`, `{"k":1}`},
		{`{"a":1,"_meta":{"k":1},"contents":[]}`, `"a":1,"contents":[]`, `{"k":1}`},
		{`{"contents":[],"_meta":{"k":1}}`, `"contents":[]`, `{"k":1}`},
		{`{"contents":[],"_meta":null}`, `"contents":[]`, ``},
		{`{"contents":[],` + "\n" + `"x":"a\nb"}`, `"contents":[],"x":"a\nb"`, ``},
		{`{"\u0063ontents":[]}`, `"\u0063ontents":[]`, ``},
	} {
		enc, err := EncodedResult([]byte(c.in), "contents")
		require.NoError(t, err, c.in)
		assert.Equal(t, c.members, string(enc.Members), c.in)
		assert.Equal(t, c.meta, string(enc.Meta), c.in)
	}
	for _, bad := range []string{
		``, `[]`, `"x"`, `{"contents":[]`, `{"contents":[]}{}`, `{"contents":"x"}`, `{"other":[]}`,
		`{"contents":[],"_meta":1}`, `{"contents":[],"_meta":{},"_meta":{}}`, "{\"contents\":[\"\xff\"]}",
	} {
		_, err := EncodedResult([]byte(bad), "contents")
		assert.Error(t, err, bad)
	}
}
