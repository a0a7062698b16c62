package tests

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tsStep is one step of ts-functions.mjs's report.
type tsStep struct {
	OK     bool            `json:"ok"`
	Result json.RawMessage `json:"result"`
	Error  *tsError        `json:"error"`
}

type tsFunctionsReport struct {
	ProtocolVersion string                     `json:"protocolVersion"`
	Capabilities    map[string]json.RawMessage `json:"capabilities"`
	Resources       tsStep                     `json:"resources"`
	Templates       tsStep                     `json:"templates"`
	Prompts         tsStep                     `json:"prompts"`
	Reads           []tsStep                   `json:"reads"`
	Gets            []tsStep                   `json:"gets"`
	Completions     []tsStep                   `json:"completions"`
}

// TestTypeScriptClientsResourcesAndPrompts lists and reads the sample's
// resources and template, lists and gets its prompt and completes an
// argument with both official TypeScript clients: the 1.x SDK (2025-11-25)
// and the 2.x client negotiating 2026-07-28.
func TestTypeScriptClientsResourcesAndPrompts(t *testing.T) {
	t.Parallel()
	testTypeScriptClientsResourcesAndPrompts(t, false)
}

// TestTypeScriptClientsResourcesAndPromptsServe is TestTypeScriptClientsResourcesAndPrompts against the sample serving itself in one
// process (`handler serve`).
func TestTypeScriptClientsResourcesAndPromptsServe(t *testing.T) {
	t.Parallel()
	testTypeScriptClientsResourcesAndPrompts(t, true)
}

// testTypeScriptClientsResourcesAndPrompts runs the test against the sample served by funchost, or by itself
// in one process (serve).
func testTypeScriptClientsResourcesAndPrompts(t *testing.T, serve bool) {
	for _, client := range []string{tsClientV1, tsClientV2Auto} {
		nodeBin(t, tsClientPackages[client]) // fail fast when the clients are not installed
	}
	h := startSampleHost(t, sample(t), serve)
	plan := map[string]any{
		"read":    []string{"holidays://countries", "holidays://US/2026", "holidays://XX/2026"},
		"prompts": []map[string]any{{"name": "plan_days_off", "arguments": map[string]string{"country": "NO"}}, {"name": "plan_days_off", "arguments": map[string]string{}}},
		"complete": []map[string]any{
			{"ref": map[string]string{"type": "ref/prompt", "name": "plan_days_off"}, "argument": map[string]string{"name": "country", "value": "u"}},
			{"ref": map[string]string{"type": "ref/resource", "uri": "holidays://{country}/{year}"}, "argument": map[string]string{"name": "year", "value": "2029"}},
		},
	}
	planJSON, err := json.Marshal(plan)
	require.NoError(t, err)
	for client, version := range map[string]string{tsClientV1: "2025-11-25", tsClientV2Auto: "2026-07-28"} {
		t.Run(client, func(t *testing.T) {
			node, dir := nodeBin(t, tsClientPackages[client])
			code, stdout, stderr := runNode(t, node, dir, "ts-functions.mjs", h.endpoint, string(planJSON), client)
			var r tsFunctionsReport
			require.NoError(t, json.Unmarshal([]byte(stdout), &r), "exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			require.Equal(t, 0, code, stderr)
			assert.Equal(t, version, r.ProtocolVersion)
			for _, c := range []string{"resources", "prompts", "completions"} {
				assert.Contains(t, r.Capabilities, c)
			}

			var resources struct{ Resources []struct{ URI string } }
			require.True(t, r.Resources.OK, "%+v", r.Resources.Error)
			require.NoError(t, json.Unmarshal(r.Resources.Result, &resources))
			assert.Len(t, resources.Resources, 4)
			var templates struct {
				ResourceTemplates []struct{ URITemplate string }
			}
			require.True(t, r.Templates.OK, "%+v", r.Templates.Error)
			require.NoError(t, json.Unmarshal(r.Templates.Result, &templates))
			require.Len(t, templates.ResourceTemplates, 1)
			assert.Equal(t, "holidays://{country}/{year}", templates.ResourceTemplates[0].URITemplate)
			var prompts struct{ Prompts []struct{ Name string } }
			require.True(t, r.Prompts.OK, "%+v", r.Prompts.Error)
			require.NoError(t, json.Unmarshal(r.Prompts.Result, &prompts))
			require.Len(t, prompts.Prompts, 1)

			require.Len(t, r.Reads, 3)
			for i, uri := range []string{"holidays://countries", "holidays://US/2026"} {
				require.True(t, r.Reads[i].OK, "%s: %+v", uri, r.Reads[i].Error)
				var read struct {
					Contents []struct{ URI, MimeType, Text string }
				}
				require.NoError(t, json.Unmarshal(r.Reads[i].Result, &read))
				require.Len(t, read.Contents, 1)
				assert.Equal(t, uri, read.Contents[0].URI)
				assert.Equal(t, "application/json", read.Contents[0].MimeType)
			}
			require.False(t, r.Reads[2].OK, "an unknown country is not found")
			wantCode := -32002
			if version == "2026-07-28" {
				wantCode = -32602 // SEP-2164
			}
			require.NotNil(t, r.Reads[2].Error.Code)
			assert.Equal(t, wantCode, *r.Reads[2].Error.Code)

			require.Len(t, r.Gets, 2)
			require.True(t, r.Gets[0].OK, "%+v", r.Gets[0].Error)
			var got struct{ Messages []struct{ Role string } }
			require.NoError(t, json.Unmarshal(r.Gets[0].Result, &got))
			assert.Len(t, got.Messages, 2)
			require.False(t, r.Gets[1].OK, "the required country is missing")
			assert.Equal(t, -32602, *r.Gets[1].Error.Code)
			assert.Contains(t, r.Gets[1].Error.Message, "country")

			require.Len(t, r.Completions, 2)
			for i, want := range []string{"US", "2029"} {
				require.True(t, r.Completions[i].OK, "%+v", r.Completions[i].Error)
				var comp struct{ Completion struct{ Values []string } }
				require.NoError(t, json.Unmarshal(r.Completions[i].Result, &comp))
				assert.Contains(t, comp.Completion.Values, want)
			}
		})
	}
}
