package host

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/metadata"
)

func TestLoadConfig(t *testing.T) {
	const handler = `"customHandler":{"description":{"defaultExecutablePath":"handler"}}`
	tests := []struct {
		name     string
		hostJSON string // "" → no host.json
		settings string // "" → no local.settings.json
		want     *config
		wantErrs []string // each must appear in the error text
	}{
		{
			name:     "defaults",
			hostJSON: `{"version":"2.0",` + handler + `}`,
			want: &config{Worker: &workerDescription{ExecutablePath: "handler"}, ServerName: metadata.DefaultServerName,
				ServerVersion: metadata.DefaultServerVersion, AuthLevel: AuthSystem},
		},
		{
			name: "every key, case-insensitive",
			hostJSON: `{"CustomHandler":{"Description":{"DefaultExecutablePath":"%APP%/h","Arguments":["-v","%PORT%"],"WorkingDirectory":"wd","workerdirectory":"bin"}},
				"Extensions":{"MCP":{"ServerName":"S","serverversion":"2.1.0","INSTRUCTIONS":"Be nice.","OutputValidation":"Warn","System":{"WebhookAuthorizationLevel":"anonymous"}}}}`,
			settings: `{"IsEncrypted":false,"values":{"B":"two","A":1,"N":null,"T":true}}`,
			want: &config{
				Worker:     &workerDescription{ExecutablePath: "%APP%/h", Arguments: []string{"-v", "%PORT%"}, WorkingDirectory: "wd", WorkerDirectory: "bin"},
				ServerName: "S", ServerVersion: "2.1.0", Instructions: "Be nice.", Output: metadata.OutputSettings{Validation: ValidationWarn}, AuthLevel: AuthAnonymous,
				Values: []envVar{{"A", "1"}, {"B", "two"}, {"N", ""}, {"T", "true"}},
			},
		},
		{
			name:     "legacy httpWorker section",
			hostJSON: `{"httpWorker":{"description":{"defaultExecutablePath":"legacy"}}}`,
			want: &config{Worker: &workerDescription{ExecutablePath: "legacy"}, ServerName: metadata.DefaultServerName,
				ServerVersion: metadata.DefaultServerVersion, AuthLevel: AuthSystem},
		},
		{
			name:     "customHandler wins over httpWorker",
			hostJSON: `{"httpWorker":{"description":{"defaultExecutablePath":"legacy"}},` + handler + `}`,
			want: &config{Worker: &workerDescription{ExecutablePath: "handler"}, ServerName: metadata.DefaultServerName,
				ServerVersion: metadata.DefaultServerVersion, AuthLevel: AuthSystem},
		},
		{
			name:     "no customHandler is not a config error",
			hostJSON: `{"extensions":{"mcp":{"outputValidation":"off"}}}`,
			want:     &config{ServerName: metadata.DefaultServerName, ServerVersion: metadata.DefaultServerVersion, Output: metadata.OutputSettings{Validation: ValidationOff}, AuthLevel: AuthSystem},
		},
		{
			name:     "no host.json",
			wantErrs: []string{"host.json: not found: the script root must hold a host.json"},
		},
		{
			name:     "host.json not JSON",
			hostJSON: `{"version":`,
			wantErrs: []string{"host.json: parsing: unexpected end of JSON input"},
		},
		{
			name:     "missing description",
			hostJSON: `{"customHandler":{}}`,
			wantErrs: []string{"host.json: customHandler.description: missing: the worker description is required"},
		},
		{
			name:     "empty executable",
			hostJSON: `{"customHandler":{"description":{"defaultExecutablePath":"  "}}}`,
			wantErrs: []string{"host.json: customHandler.description.defaultExecutablePath: cannot be empty"},
		},
		{
			name:     "wrong types, all reported",
			hostJSON: `{"customHandler":{"description":{"defaultExecutablePath":1,"arguments":"-v","workingDirectory":[]}},"extensions":{"mcp":{"serverName":2}}}`,
			wantErrs: []string{
				"customHandler.description.defaultExecutablePath: must be a string",
				"customHandler.description.arguments: must be an array of strings",
				"customHandler.description.workingDirectory: must be a string",
				"extensions.mcp.serverName: must be a string",
			},
		},
		{
			name:     "bad outputValidation",
			hostJSON: `{` + handler + `,"extensions":{"mcp":{"outputValidation":"sometimes"}}}`,
			wantErrs: []string{`host.json: extensions.mcp.outputValidation: "sometimes" is not one of strict, warn, off`},
		},
		{
			name:     "bad webhookAuthorizationLevel",
			hostJSON: `{` + handler + `,"extensions":{"mcp":{"system":{"webhookAuthorizationLevel":"Nobody"}}}}`,
			wantErrs: []string{`host.json: extensions.mcp.system.webhookAuthorizationLevel: "Nobody" is not one of Anonymous, Function, System, Admin`},
		},
		{
			name:     "extensions not an object",
			hostJSON: `{` + handler + `,"extensions":[]}`,
			wantErrs: []string{"host.json: extensions: must be a JSON object"},
		},
		{
			name:     "local.settings.json not JSON",
			hostJSON: `{` + handler + `}`,
			settings: `{"Values":`,
			wantErrs: []string{"local.settings.json: parsing: unexpected end of JSON input"},
		},
		{
			name:     "local.settings.json Values not an object",
			hostJSON: `{` + handler + `}`,
			settings: `{"Values":["A=1"]}`,
			wantErrs: []string{"local.settings.json: Values: must be a JSON object"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			if tc.hostJSON != "" {
				writeFile(t, root, HostFile, tc.hostJSON)
			}
			if tc.settings != "" {
				writeFile(t, root, LocalSettingsFile, tc.settings)
			}
			got, err := loadConfig(root)
			if len(tc.wantErrs) > 0 {
				require.Error(t, err)
				var ce *ConfigError
				assert.True(t, errors.As(err, &ce), "want a *ConfigError, got %T", err)
				for _, want := range tc.wantErrs {
					assert.Contains(t, err.Error(), want)
				}
				assert.Len(t, splitErrors(err), len(tc.wantErrs))
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

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

func TestExpandVars(t *testing.T) {
	vars := map[string]string{"PORT": "7000", "ROOT": "/app", "EMPTY": ""}
	lookup := func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
	tests := []struct{ in, want string }{
		{"plain", "plain"},
		{"%PORT%", "7000"},
		{"--port=%PORT%", "--port=7000"},
		{"%ROOT%/bin/%PORT%", "/app/bin/7000"},
		{"%UNKNOWN%", "%UNKNOWN%"},
		{"100%", "100%"},
		{"%%PORT%", "%7000"},
		{"%EMPTY%x", "x"},
		{"%UNKNOWN%PORT%", "%UNKNOWN7000"},
		{"%%", "%%"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			assert.Equal(t, tc.want, expandVars(tc.in, lookup))
		})
	}
}

func TestResolveExecutable(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "handler", "#!/bin/sh\n")
	require.NoError(t, os.MkdirAll(filepath.Join(root, "adir"), 0o755))
	abs := filepath.Join(t.TempDir(), "x")
	tests := []struct{ name, path, want string }{
		{"relative file that exists is joined", "handler", filepath.Join(root, "handler")},
		{"relative path that does not exist is a PATH command", "node", "node"},
		{"a directory is not an executable", "adir", "adir"},
		{"absolute stays", abs, abs},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, resolveExecutable(root, tc.path))
		})
	}
	assert.Equal(t, root, resolveDir(root, ""))
	assert.Equal(t, filepath.Join(root, "wd"), resolveDir(root, "wd"))
	assert.Equal(t, abs, resolveDir(root, abs))
}

func TestWorkerCommand(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "bin/handler", "")
	spec := &workerSpec{
		Root: root,
		Desc: &workerDescription{ExecutablePath: "handler", WorkerDirectory: "bin",
			Arguments: []string{"--port", "%FUNCTIONS_CUSTOMHANDLER_PORT%", "%GREETING%", "%NOPE%"}, WorkingDirectory: "wd"},
		Values:  []envVar{{"GREETING", "hello"}, {"PATH_OVERRIDE", "1"}},
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
