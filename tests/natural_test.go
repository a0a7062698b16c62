package tests

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestClientsValidateBothForms shows that real clients enforce both forms
// of a natural output schema: the sample's fibonacci tool is given a
// "maximum": 5 on its terms (inside the $defs its items point to) while
// funchost's own output validation is off, so the out-of-range result reaches
// the clients. The TypeScript 1.x client must reject it through the
// projection, whose rewritten $ref it resolves; the v2 client on 2026-07-28
// must reject it through the natural schema. Each names the JSON pointer
// into the form it was shown.
func TestClientsValidateBothForms(t *testing.T) {
	t.Parallel()
	nodeBin(t, tsClientPackages[tsClientV1], tsClientPackages[tsClientV2Auto])
	app := copyApp(t, sample(t))

	fn := filepath.Join(app, "fibonacci", "function.json")
	data, err := os.ReadFile(fn)
	require.NoError(t, err)
	const term, capped = `\"minimum\":0}`, `\"minimum\":0,\"maximum\":5}`
	require.Equal(t, 2, strings.Count(string(data), term), "both schemas define the term")
	require.NoError(t, os.WriteFile(fn, []byte(strings.ReplaceAll(string(data), term, capped)), 0o644))

	hostFile := filepath.Join(app, "host.json")
	var hostJSON map[string]any
	data, err = os.ReadFile(hostFile)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &hostJSON))
	ext, _ := hostJSON["extensions"].(map[string]any)
	if ext == nil {
		ext = map[string]any{}
		hostJSON["extensions"] = ext
	}
	mcpExt, _ := ext["mcp"].(map[string]any)
	if mcpExt == nil {
		mcpExt = map[string]any{}
		ext["mcp"] = mcpExt
	}
	mcpExt["outputValidation"] = "off"
	data, err = json.Marshal(hostJSON)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(hostFile, data, 0o644))

	h := startHost(t, app)
	calls := []tsCall{{Name: "fibonacci", Arguments: map[string]any{"count": 8}}, {Name: "fibonacci", Arguments: map[string]any{"count": 6}}}
	for _, tc := range []struct {
		client, version, pointer string
	}{
		{tsClientV1, "2025-11-25", "data/result/7 must be <= 5"},
		{tsClientV2Auto, "2026-07-28", "data/7 must be <= 5"},
	} {
		t.Run(tc.client, func(t *testing.T) {
			report := runTSClient(t, tc.client, h.endpoint, calls)
			assert.Equal(t, tc.version, report.ProtocolVersion)
			require.Len(t, report.Calls, 2)
			bad := report.Calls[0]
			require.False(t, bad.OK, "the client must reject F(6) = 8 and F(7) = 13: %s", bad.Result)
			require.NotNil(t, bad.Error.Code)
			assert.Equal(t, -32602, *bad.Error.Code)
			assert.Contains(t, bad.Error.Message, tc.pointer)
			assert.True(t, report.Calls[1].OK, "F(0)…F(5) are all <= 5: %+v", report.Calls[1].Error)
		})
	}
}

// copyApp copies a built app folder (function folders, host.json, the
// handler) so a test can change it without touching the shared one.
func copyApp(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, info.Mode().Perm())
	})
	require.NoError(t, err)
	return dst
}
