package host

import (
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/host/internal/config"
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

func TestWorkerCommand(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "bin/handler", "")
	spec := &workerSpec{
		Root: root,
		Desc: &config.Worker{ExecutablePath: "handler", WorkerDirectory: "bin",
			Arguments: []string{"--port", "%FUNCTIONS_CUSTOMHANDLER_PORT%", "%GREETING%", "%NOPE%"}, WorkingDirectory: "wd"},
		Values:  []config.Setting{{Key: "GREETING", Value: "hello"}, {Key: "PATH_OVERRIDE", Value: "1"}},
		Environ: []string{"GREETING=from-os", "KEEP=1"},
	}
	cmd, err := spec.command(4242)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(root, "bin", "handler"), cmd.Path)
	assert.Equal(t, []string{filepath.Join(root, "bin", "handler"), "--port", "4242", "hello", "%NOPE%"}, cmd.Args)
	assert.Equal(t, filepath.Join(root, "wd"), cmd.Dir)
	env := map[string]string{}
	for _, kv := range cmd.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	assert.Equal(t, "hello", env["GREETING"], "local.settings.json wins over the OS environment")
	assert.Equal(t, "1", env["KEEP"])
	assert.Equal(t, "4242", env["FUNCTIONS_CUSTOMHANDLER_PORT"])
	assert.Equal(t, "4242", env["FUNCTIONS_HTTPWORKER_PORT"])
	assert.Equal(t, root, env["FUNCTIONS_APP_ROOT_PATH"])
	assert.Len(t, env["FUNCTIONS_CUSTOMHANDLER_WORKER_ID"], 36)
	assert.Equal(t, env["FUNCTIONS_CUSTOMHANDLER_WORKER_ID"], env["FUNCTIONS_HTTPWORKER_ID"])
}
