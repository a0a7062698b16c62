package tests

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGoSDKClientResourcesAndPrompts drives the sample's resources,
// resource template, prompt and completions through funchost with the
// official Go SDK client, at its default revision (2026-07-28) and pinned to
// the legacy ones that have them.
func TestGoSDKClientResourcesAndPrompts(t *testing.T) {
	t.Parallel()
	testGoSDKClientResourcesAndPrompts(t, false)
}

// TestGoSDKClientResourcesAndPromptsServe is TestGoSDKClientResourcesAndPrompts against the sample serving itself in one
// process (`handler serve`).
func TestGoSDKClientResourcesAndPromptsServe(t *testing.T) {
	t.Parallel()
	testGoSDKClientResourcesAndPrompts(t, true)
}

// testGoSDKClientResourcesAndPrompts runs the test against the sample served by funchost, or by itself
// in one process (serve).
func testGoSDKClientResourcesAndPrompts(t *testing.T, serve bool) {
	h := startSampleHost(t, sample(t), serve)
	for _, version := range []string{"", "2025-06-18", "2025-11-25"} {
		t.Run("protocol "+cmpOr(version, "default"), func(t *testing.T) {
			cs := connectGoSDK(t, h.endpoint, version)
			ctx, cancel := context.WithTimeout(t.Context(), clientTimeout)
			defer cancel()
			caps := cs.InitializeResult().Capabilities
			require.NotNil(t, caps.Resources, "resources capability")
			require.NotNil(t, caps.Prompts, "prompts capability")
			require.NotNil(t, caps.Completions, "completions capability")

			var uris []string
			for r, err := range cs.Resources(ctx, nil) {
				require.NoError(t, err)
				uris = append(uris, r.URI)
			}
			assert.ElementsMatch(t, []string{"holidays://countries", "ui://bar_chart/view", "note://pinned", "clock://utc/minute"}, uris)
			var templates []string
			for rt, err := range cs.ResourceTemplates(ctx, nil) {
				require.NoError(t, err)
				templates = append(templates, rt.URITemplate)
			}
			assert.Equal(t, []string{"holidays://{country}/{year}"}, templates)

			read, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "holidays://countries"})
			require.NoError(t, err)
			require.Len(t, read.Contents, 1)
			assert.Equal(t, "application/json", read.Contents[0].MIMEType)
			assert.Contains(t, read.Contents[0].Text, `"code":"NO"`)

			read, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "holidays://no/2026"})
			require.NoError(t, err)
			require.Len(t, read.Contents, 1)
			assert.Equal(t, "holidays://no/2026", read.Contents[0].URI)
			var days []struct{ Date, Name string }
			require.NoError(t, json.Unmarshal([]byte(read.Contents[0].Text), &days))
			assert.Contains(t, days, struct{ Date, Name string }{"2026-05-17", "Constitution Day"})

			_, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "holidays://fr/2026"})
			require.Error(t, err, "a country the template's handler does not know")
			assert.Contains(t, err.Error(), "no holidays for country")

			view, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "ui://bar_chart/view"})
			require.NoError(t, err)
			require.Len(t, view.Contents, 1)
			assert.Equal(t, "text/html;profile=mcp-app", view.Contents[0].MIMEType)
			assert.Contains(t, strings.ToLower(view.Contents[0].Text), "<html")

			var prompts []*mcp.Prompt
			for p, err := range cs.Prompts(ctx, nil) {
				require.NoError(t, err)
				prompts = append(prompts, p)
			}
			require.Len(t, prompts, 1)
			assert.Equal(t, "plan_days_off", prompts[0].Name)
			require.Len(t, prompts[0].Arguments, 2)
			assert.True(t, prompts[0].Arguments[0].Required)

			got, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "plan_days_off", Arguments: map[string]string{"country": "GB", "year": "2026"}})
			require.NoError(t, err)
			require.Len(t, got.Messages, 2)
			res, ok := got.Messages[0].Content.(*mcp.EmbeddedResource)
			require.True(t, ok, "the first message embeds the holidays: %T", got.Messages[0].Content)
			assert.Equal(t, "holidays://GB/2026", res.Resource.URI)

			_, err = cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "plan_days_off", Arguments: map[string]string{"year": "2026"}})
			require.Error(t, err)
			assert.Contains(t, err.Error(), "country", "the missing argument is named")

			comp, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "plan_days_off"},
				Argument: mcp.CompleteParamsArgument{Name: "country", Value: "n"}})
			require.NoError(t, err)
			assert.Equal(t, []string{"NO"}, comp.Completion.Values, "a fixed list, answered by funchost")
			comp, err = cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/resource", URI: "holidays://{country}/{year}"},
				Argument: mcp.CompleteParamsArgument{Name: "year", Value: "203"}})
			require.NoError(t, err)
			assert.Contains(t, comp.Completion.Values, "2030", "a completion function, answered by the worker")
		})
	}
}

// TestGoSDKClientResourcesOverLegacySSE: the same functions over the legacy
// HTTP+SSE transport.
func TestGoSDKClientResourcesOverLegacySSE(t *testing.T) {
	t.Parallel()
	testGoSDKClientResourcesOverLegacySSE(t, false)
}

// TestGoSDKClientResourcesOverLegacySSEServe is TestGoSDKClientResourcesOverLegacySSE against the sample serving itself in one
// process (`handler serve`).
func TestGoSDKClientResourcesOverLegacySSEServe(t *testing.T) {
	t.Parallel()
	testGoSDKClientResourcesOverLegacySSE(t, true)
}

// testGoSDKClientResourcesOverLegacySSE runs the test against the sample served by funchost, or by itself
// in one process (serve).
func testGoSDKClientResourcesOverLegacySSE(t *testing.T, serve bool) {
	h := startSampleHost(t, sample(t), serve)
	ctx, cancel := context.WithTimeout(t.Context(), clientTimeout)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "funcmcp-e2e-sse", Version: "1.0.0"}, nil)
	cs, err := client.Connect(ctx, &mcp.SSEClientTransport{Endpoint: h.endpoint + "/sse"}, nil)
	require.NoError(t, err)
	defer cs.Close()
	list, err := cs.ListResources(ctx, nil)
	require.NoError(t, err)
	assert.Len(t, list.Resources, 4)
	read, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "holidays://GB/2026"})
	require.NoError(t, err)
	require.Len(t, read.Contents, 1)
	assert.Contains(t, read.Contents[0].Text, "Good Friday")
	got, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "plan_days_off", Arguments: map[string]string{"country": "US"}})
	require.NoError(t, err)
	assert.Len(t, got.Messages, 2)
}
