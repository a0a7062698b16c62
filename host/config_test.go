package host

import (
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNewErrors(t *testing.T) {
	tests := []struct {
		name      string
		hostJSON  string
		workerURL string
		wantErr   string
	}{
		{"no host.json", "", "", "loading the host configuration: "},
		{"no custom handler", `{"version":"2.0"}`, "", "customHandler: missing: host.json must describe the custom handler (customHandler.description.defaultExecutablePath)"},
		{"no custom handler is fine with a worker URL", `{"version":"2.0"}`, "http://127.0.0.1:1", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			if tc.hostJSON != "" {
				writeFile(t, root, HostFile, tc.hostJSON)
			}
			h, err := New(&Options{ScriptRoot: root, WorkerURL: tc.workerURL, Output: io.Discard})
			if tc.wantErr == "" {
				require.NoError(t, err)
				assert.NotNil(t, h.Handler())
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.wantErr)
			assert.Nil(t, h)
		})
	}
	t.Run("script root is a file", func(t *testing.T) {
		root := t.TempDir()
		writeFile(t, root, HostFile, `{"version":"2.0"}`)
		_, err := New(&Options{ScriptRoot: filepath.Join(root, HostFile), WorkerURL: "http://127.0.0.1:1"})
		require.Error(t, err)
	})
}

// TestUnknownSettingWarning: a misspelled key of extensions.mcp is served
// all the same (the real host ignores it too), with one warning at start
// naming the key meant; a known key in another casing is none.
func TestUnknownSettingWarning(t *testing.T) {
	root := weatherApp(t, `{"version":"2.0","extensions":{"mcp":{"servername_typo":"Typo","ServerVersion":"2.0.0"}}}`)
	h, logs := newTestHost(t, root, "http://127.0.0.1:1", nil)
	assert.Equal(t, "2.0.0", h.cfg.ServerVersion)
	assert.Contains(t, logs.String(),
		`level=WARN msg="host.json: extensions.mcp.servername_typo is not a known setting; did you mean serverName?"`)
	assert.Equal(t, 1, strings.Count(logs.String(), "is not a known setting"), "%s", logs.String())
}
