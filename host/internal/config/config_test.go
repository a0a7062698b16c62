package config

import (
	"errors"
	"os"
	"path/filepath"
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
		want     *Config
		wantErrs []string // each must appear in the error text
	}{
		{
			name:     "defaults",
			hostJSON: `{"version":"2.0",` + handler + `}`,
			want: &Config{Worker: &Worker{ExecutablePath: "handler"}, ServerName: metadata.DefaultServerName,
				ServerVersion: metadata.DefaultServerVersion, AuthLevel: AuthSystem},
		},
		{
			name:     "telemetryMode",
			hostJSON: `{"version":"2.0","TelemetryMode":"OpenTelemetry",` + handler + `}`,
			want: &Config{Worker: &Worker{ExecutablePath: "handler"}, ServerName: metadata.DefaultServerName,
				ServerVersion: metadata.DefaultServerVersion, AuthLevel: AuthSystem, TelemetryMode: "OpenTelemetry"},
		},
		{
			name: "every key, case-insensitive",
			hostJSON: `{"CustomHandler":{"Description":{"DefaultExecutablePath":"%APP%/h","Arguments":["-v","%PORT%"],"WorkingDirectory":"wd","workerdirectory":"bin"}},
				"Extensions":{"MCP":{"ServerName":"S","serverversion":"2.1.0","INSTRUCTIONS":"Be nice.","OutputValidation":"Warn","System":{"WebhookAuthorizationLevel":"anonymous"}}}}`,
			settings: `{"IsEncrypted":false,"values":{"B":"two","A":1,"N":null,"T":true}}`,
			want: &Config{
				Worker:     &Worker{ExecutablePath: "%APP%/h", Arguments: []string{"-v", "%PORT%"}, WorkingDirectory: "wd", WorkerDirectory: "bin"},
				ServerName: "S", ServerVersion: "2.1.0", Instructions: "Be nice.", Output: metadata.OutputSettings{Validation: metadata.ValidationWarn}, AuthLevel: AuthAnonymous,
				Values: []Setting{{"A", "1"}, {"B", "two"}, {"N", ""}, {"T", "true"}},
			},
		},
		{
			name:     "legacy httpWorker section",
			hostJSON: `{"httpWorker":{"description":{"defaultExecutablePath":"legacy"}}}`,
			want: &Config{Worker: &Worker{ExecutablePath: "legacy"}, ServerName: metadata.DefaultServerName,
				ServerVersion: metadata.DefaultServerVersion, AuthLevel: AuthSystem},
		},
		{
			name:     "customHandler wins over httpWorker",
			hostJSON: `{"httpWorker":{"description":{"defaultExecutablePath":"legacy"}},` + handler + `}`,
			want: &Config{Worker: &Worker{ExecutablePath: "handler"}, ServerName: metadata.DefaultServerName,
				ServerVersion: metadata.DefaultServerVersion, AuthLevel: AuthSystem},
		},
		{
			name:     "no customHandler is not a config error",
			hostJSON: `{"extensions":{"mcp":{"outputValidation":"off"}}}`,
			want:     &Config{ServerName: metadata.DefaultServerName, ServerVersion: metadata.DefaultServerVersion, Output: metadata.OutputSettings{Validation: metadata.ValidationOff}, AuthLevel: AuthSystem},
		},
		{
			name:     "no host.json",
			wantErrs: []string{"host.json: not found: the script root must hold a host.json"},
		},
		{
			name:     "host.json not JSON",
			hostJSON: `{"version":`,
			wantErrs: []string{"host.json: parsing: line 1, column 12: unexpected end of JSON input"},
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
			wantErrs: []string{"local.settings.json: parsing: line 1, column 11: unexpected end of JSON input"},
		},
		{
			name:     "local.settings.json with a trailing comma",
			hostJSON: `{` + handler + `}`,
			settings: "{\n  \"Values\": {\n    \"FUNCTIONS_WORKER_RUNTIME\": \"custom\",\n  }\n}\n",
			wantErrs: []string{"local.settings.json: parsing: line 4, column 3: invalid character '}' looking for beginning of object key string"},
		},
		{
			name:     "host.json with a missing comma",
			hostJSON: "{\n\t\"version\": \"2.0\",\n\t\"customHandler\": {\"description\": {\"defaultExecutablePath\": \"h\"}},\n\t\"extensions\": {\"mcp\": {\"serverName\": \"é\" \"x\"}}\n}",
			wantErrs: []string{`host.json: parsing: line 4, column 43: invalid character '"' after object key:value pair`},
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
			got, err := Load(root)
			if len(tc.wantErrs) > 0 {
				require.Error(t, err)
				var ce *Error
				assert.True(t, errors.As(err, &ce), "want a *Error, got %T", err)
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
			assert.Equal(t, tc.want, ExpandVars(tc.in, lookup))
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
			assert.Equal(t, tc.want, ResolveExecutable(root, tc.path))
		})
	}
	assert.Equal(t, root, ResolveDir(root, ""))
	assert.Equal(t, filepath.Join(root, "wd"), ResolveDir(root, "wd"))
	assert.Equal(t, abs, ResolveDir(root, abs))
}

func TestParseTimeSpan(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"00:05:00", "5m0s"}, {"1.02:03:04.5", "26h3m4.5s"}, {"-1", "-1ns"},
	} {
		d, err := ParseTimeSpan(tc.text)
		require.NoError(t, err, tc.text)
		assert.Equal(t, tc.want, d.String())
	}
	for _, bad := range []string{"", "5m", "00:00:00.5", "24:00:00", "00:60:00", "a.00:00:01", "1:2"} {
		_, err := ParseTimeSpan(bad)
		assert.Error(t, err, bad)
	}
}

func TestLookup(t *testing.T) {
	t.Setenv("FUNCMCP_CONFIG_TEST_ENV", "from-env")
	t.Setenv("FUNCMCP_CONFIG_TEST_EMPTY", "")
	c := &Config{Values: []Setting{{"FUNCMCP_CONFIG_TEST_ENV", "from-file"}, {"FUNCMCP_CONFIG_TEST_EMPTY", "file"}, {"ONLY_FILE", "f"}, {"BLANK", ""}}}
	tests := []struct{ name, value, from string }{
		{"FUNCMCP_CONFIG_TEST_ENV", "from-env", "environment FUNCMCP_CONFIG_TEST_ENV"},
		{"FUNCMCP_CONFIG_TEST_EMPTY", "file", "local.settings.json Values.FUNCMCP_CONFIG_TEST_EMPTY"},
		{"ONLY_FILE", "f", "local.settings.json Values.ONLY_FILE"},
		{"BLANK", "", ""},
		{"FUNCMCP_CONFIG_TEST_NOWHERE", "", ""},
	}
	for _, tt := range tests {
		v, from := c.Lookup(tt.name)
		assert.Equal(t, tt.value, v, tt.name)
		assert.Equal(t, tt.from, from, tt.name)
	}
}

// writeFile writes root/name, creating folders.
func writeFile(t testing.TB, root, name, text string) {
	t.Helper()
	p := filepath.Join(root, name)
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
}
