package binding

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRegistryCheckToolView(t *testing.T) {
	var reg Registry
	fn, b := resourceBinding(t, "functions--mcpapp-chart", `{"name":"context","type":"mcpResourceTrigger","direction":"In",
		"uri":"ui://chart/view","resourceName":"chart_view","mimeType":"text/html;profile=mcp-app"}`)
	view, err := LoadResource(fn, b, "")
	require.NoError(t, err)
	require.NoError(t, reg.AddResource(view))

	for _, tc := range []struct {
		name     string
		metadata string // the tool's metadata key, "" for none
		wantErr  string // "" when the tool is served
		notFound bool   // the error wraps ErrViewNotServed
	}{
		{name: "no metadata"},
		{name: "metadata without ui", metadata: `{"author":"me"}`},
		{name: "ui without resourceUri", metadata: `{"ui":{"prefersBorder":true}}`},
		{name: "served view", metadata: `{"ui":{"resourceUri":"ui://chart/view","visibility":["model","app"]}}`},
		{name: "URIs compare case-insensitively", metadata: `{"ui":{"resourceUri":"UI://Chart/View"}}`},
		{name: "missing view", metadata: `{"ui":{"resourceUri":"ui://other/view"}}`,
			wantErr: `function "chart", tool "chart": the MCP App view is not served: _meta.ui.resourceUri is "ui://other/view", and no resource function serves that URI (the view of an MCP App is the resource function "functions--mcpapp-chart")`, notFound: true},
		{name: "ui not an object", metadata: `{"ui":"ui://chart/view"}`, wantErr: "metadata: _meta.ui must be a JSON object"},
		{name: "resourceUri not a string", metadata: `{"ui":{"resourceUri":7}}`, wantErr: "metadata: _meta.ui.resourceUri must be a non-empty string"},
		{name: "resourceUri not a URI", metadata: `{"ui":{"resourceUri":"view"}}`, wantErr: "is not an absolute URI"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := &Trigger{Function: "chart", ToolName: "chart"}
			if tc.metadata != "" {
				tr.Metadata = []byte(tc.metadata)
			}
			err := reg.CheckToolView(tr)
			if tc.wantErr == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.wantErr)
			var te *ToolError
			assert.True(t, errors.As(err, &te), "a *ToolError")
			assert.Equal(t, tc.notFound, errors.Is(err, ErrViewNotServed))
		})
	}
}
