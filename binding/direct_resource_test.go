package binding

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestEmbeddedResourceBlocksAreCheckedInOnePass: a resource block (a
// prompt's embedded resource, a tool's) is vouched for by the one-pass
// check when it is plainly valid, and left to the full check otherwise.
func TestEmbeddedResourceBlocksAreCheckedInOnePass(t *testing.T) {
	for _, b := range []string{
		`{"type":"resource","resource":{"uri":"holidays://NO/2026","mimeType":"application/json","text":"[{\"date\":\"2026-01-01\"}]"}}`,
		`{"resource":{"blob":"AAE=","uri":"file:///a"},"type":"resource"}`,
		`{"type":"resource","resource":{"uri":"file:///a","text":"x","_meta":{"k":[1]}},"annotations":{}}`,
	} {
		assert.True(t, blockCertainlyValid([]byte(b)), b)
		assert.NoError(t, checkContentBlockFully([]byte(b)), b)
	}
	for _, b := range []string{
		`{"type":"resource","resource":{"uri":"file:///a"}}`,
		`{"type":"resource","resource":{"text":"x"}}`,
		`{"type":"resource","resource":{"uri":1,"text":"x"}}`,
		`{"type":"resource","resource":{"uri":"a","uri":"b","text":"x"}}`,
		`{"type":"resource","resource":[]}`,
		`{"type":"resource","resource":{"uri":"a","text":"x"},"resource":{"uri":"a","text":"x"}}`,
		`{"type":"resource"}`,
	} {
		assert.False(t, blockCertainlyValid([]byte(b)), b)
	}
}
