package metadata

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCallToolResultJSON: the three ways to write a result give the same
// bytes, and content is always an array.
func TestCallToolResultJSON(t *testing.T) {
	for _, tc := range []struct {
		name string
		res  CallToolResult
		want string
	}{
		{"nil content", CallToolResult{}, `{"content":[]}`},
		{"null members left out", CallToolResult{Content: []json.RawMessage{}, StructuredContent: json.RawMessage("null"), Meta: json.RawMessage(" null ")}, `{"content":[]}`},
		{"everything", CallToolResult{Content: []json.RawMessage{TextContent("a<b")}, StructuredContent: json.RawMessage(`{"x":1}`),
			IsError: true, Meta: json.RawMessage(`{"k":"v"}`)},
			`{"content":[{"type":"text","text":"a<b"}],"structuredContent":{"x":1},"isError":true,"_meta":{"k":"v"}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, string(tc.res.AppendJSON(nil)))
			checked, err := tc.res.AppendCheckedJSON(nil, "")
			require.NoError(t, err)
			assert.Equal(t, tc.want, string(checked))
			data, err := Marshal(tc.res)
			require.NoError(t, err)
			assert.Equal(t, tc.want, string(data))
			data, err = Marshal(&tc.res)
			require.NoError(t, err)
			assert.Equal(t, tc.want, string(data))
		})
	}

	spaced := CallToolResult{Content: []json.RawMessage{json.RawMessage("{\n \"type\": \"text\",\n \"text\": \"x\"}")}}
	got, err := spaced.AppendCheckedJSON([]byte("x"), `"resultType":"complete",`)
	require.NoError(t, err)
	assert.Equal(t, `x{"resultType":"complete","content":[{"type":"text","text":"x"}]}`, string(got), "compacted, head first")

	bad := CallToolResult{StructuredContent: json.RawMessage(`{"x":`)}
	_, err = bad.AppendCheckedJSON(nil, "")
	assert.ErrorContains(t, err, "encoding structuredContent")
	_, err = Marshal(bad)
	assert.Error(t, err)
}
