package binding

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/metadata"
)

func TestContentKind(t *testing.T) {
	for block, want := range map[string]string{
		`{"type":"text","text":"x"}`:                                                           "text/plain",
		`{"type":"image","data":"AA==","mimeType":"image/PNG"}`:                                "image/png",
		`{"type":"audio","data":"AA==","mimeType":"audio/wav; rate=8000"}`:                     "audio/wav",
		`{"type":"resource_link","uri":"file:///a.csv","name":"a","mimeType":"text/csv"}`:      "text/csv",
		`{"type":"resource_link","uri":"file:///a","name":"a"}`:                                "application/octet-stream",
		`{"type":"resource","resource":{"uri":"x:/a","mimeType":"application/pdf","blob":""}}`: "application/pdf",
		`{"type":"resource","resource":{"uri":"x:/a","text":"hi"}}`:                            "text/plain",
		`{"type":"resource","resource":{"uri":"x:/a","blob":"AA=="}}`:                          "application/octet-stream",
	} {
		assert.Equal(t, want, ContentKind(json.RawMessage(block)), block)
	}
}

func TestParseContentKinds(t *testing.T) {
	got, err := ParseContentKinds([]string{"image/PNG", "text/plain", "image/png", "audio/*"})
	require.NoError(t, err)
	assert.Equal(t, []string{"image/png", "text/plain", "audio/*"}, got)
	for _, bad := range []string{"png", "image/", "*/*", "image/png; q=1", " image/png", ""} {
		_, err := ParseContentKinds([]string{bad})
		assert.Error(t, err, "%q", bad)
	}
}

func TestCheckContentKinds(t *testing.T) {
	image := json.RawMessage(`{"type":"image","data":"AA==","mimeType":"image/png"}`)
	jpeg := json.RawMessage(`{"type":"image","data":"AA==","mimeType":"image/jpeg"}`)
	text := metadata.TextContent("caption")
	sc := json.RawMessage(`{"n":1}`)
	for _, tc := range []struct {
		name       string
		declared   []string
		res        metadata.CallToolResult
		missing    []string
		undeclared []string
	}{
		{"all there", []string{"image/png", "text/plain"}, metadata.CallToolResult{Content: []json.RawMessage{image, text}}, nil, nil},
		{"a family", []string{"image/*"}, metadata.CallToolResult{Content: []json.RawMessage{image, jpeg}}, nil, nil},
		{"missing", []string{"image/png", "text/plain"}, metadata.CallToolResult{Content: []json.RawMessage{image}}, []string{"text/plain"}, nil},
		{"undeclared", []string{"image/png"}, metadata.CallToolResult{Content: []json.RawMessage{image, text, jpeg}}, nil, []string{"text/plain", "image/jpeg"}},
		{"structured and its copy are json", []string{"application/json"},
			metadata.CallToolResult{Content: []json.RawMessage{metadata.TextContent(string(sc))}, StructuredContent: sc}, nil, nil},
		{"structured undeclared", []string{"text/plain"},
			metadata.CallToolResult{Content: []json.RawMessage{text}, StructuredContent: sc}, nil, []string{"application/json"}},
		{"nothing declared: anything goes", nil, metadata.CallToolResult{Content: []json.RawMessage{jpeg}}, nil, nil},
		{"isError is not checked", []string{"image/png"}, metadata.CallToolResult{Content: []json.RawMessage{text}, IsError: true}, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckContentKinds(tc.declared, &tc.res)
			if tc.missing == nil && tc.undeclared == nil {
				assert.NoError(t, err)
				return
			}
			var ke *ContentKindError
			require.ErrorAs(t, err, &ke)
			assert.Equal(t, tc.missing, ke.Missing)
			assert.Equal(t, tc.undeclared, ke.Undeclared)
		})
	}
}
