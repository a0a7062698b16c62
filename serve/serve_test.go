package serve_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/funcmcptest"
	"github.com/funcmcp/funcmcp/host"
	"github.com/funcmcp/funcmcp/serve"
	"github.com/funcmcp/funcmcp/worker"
)

// EchoInput names the setting the echo tool reads.
type EchoInput struct {
	Name string `json:"name"`
}

// EchoOutput is the setting's value.
type EchoOutput struct {
	Value string `json:"value"`
}

// settingsApp has one tool that reads a setting from its environment.
func settingsApp() *worker.App {
	app := worker.New(nil)
	worker.AddTool(app, "setting", func(_ context.Context, _ *worker.ToolContext, in EchoInput) (*worker.Result, EchoOutput, error) {
		return nil, EchoOutput{Value: os.Getenv(in.Name)}, nil
	})
	return app
}

// TestValuesBecomeTheAppsEnvironment: the local.settings.json Values are
// what the app's code reads, as funchost gives them to its worker, except
// that a variable the environment already sets wins (settings given as
// environment, as in a container).
func TestValuesBecomeTheAppsEnvironment(t *testing.T) {
	t.Setenv("SERVE_TEST_FROM_ENV", "environment")
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "host.json"),
		[]byte(`{"version":"2.0","extensions":{"mcp":{"system":{"webhookAuthorizationLevel":"Anonymous"}}}}`), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "local.settings.json"),
		[]byte(`{"IsEncrypted":false,"Values":{"SERVE_TEST_FROM_FILE":"file","SERVE_TEST_FROM_ENV":"file"}}`), 0o600))
	os.Unsetenv("SERVE_TEST_FROM_FILE")
	t.Cleanup(func() { os.Unsetenv("SERVE_TEST_FROM_FILE") })
	srv := funcmcptest.Start(t, settingsApp(), &funcmcptest.Options{Dir: dir})

	for name, want := range map[string]string{"SERVE_TEST_FROM_FILE": "file", "SERVE_TEST_FROM_ENV": "environment"} {
		res, err := srv.CallTool(t.Context(), "setting", map[string]any{"name": name})
		require.NoError(t, err)
		require.False(t, res.IsError, res.Text())
		assert.JSONEq(t, `{"value":"`+want+`"}`, string(res.StructuredContent), name)
	}
}

// TestRunArgsLeavesTheOtherCommandsToTheApp: emit-metadata is the app's
// own, as with worker.App.Main.
func TestRunArgsLeavesTheOtherCommandsToTheApp(t *testing.T) {
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	code := serve.RunArgs(t.Context(), settingsApp(), []string{"handler", "emit-metadata", dir}, &stdout, &stderr)
	require.Equal(t, 0, code, stderr.String())
	assert.FileExists(t, filepath.Join(dir, "setting", "function.json"))
}

// TestRunArgsRefusesBadFlags: serve's flags are checked before anything
// is loaded; help names every mode.
func TestRunArgsRefusesBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"serve", "--port", "-1"},
		{"serve", "--drain-timeout", "-1s"},
		{"serve", "--log-format", "xml"},
		{"serve", "extra"},
		{"serve", "--no-such-flag"},
	} {
		var stdout, stderr bytes.Buffer
		code := serve.RunArgs(t.Context(), settingsApp(), append([]string{"handler"}, args...), &stdout, &stderr)
		assert.Equal(t, 2, code, "%v: %s", args, stderr.String())
		assert.NotEmpty(t, stderr.String(), "%v says why", args)
	}
	var stdout, stderr bytes.Buffer
	require.Equal(t, 0, serve.RunArgs(t.Context(), settingsApp(), []string{"handler", "help"}, &stdout, &stderr))
	assert.Contains(t, stdout.String(), "handler serve [flags]")
	assert.Contains(t, stdout.String(), "handler emit-metadata DIR")
	assert.Contains(t, stdout.String(), "-port")
}

// TestRunArgsFailsWithoutHostJSON: serve reads host.json from the working
// folder, as funchost does; without it, it says so and exits 1.
func TestRunArgsFailsWithoutHostJSON(t *testing.T) {
	t.Chdir(t.TempDir())
	var stdout, stderr bytes.Buffer
	code := serve.RunArgs(t.Context(), settingsApp(), []string{"handler", "serve", "--port", "0"}, &stdout, &stderr)
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr.String(), "host.json")
}

// TestKeysAreHiddenFromTheApp: the host reads its function keys from the
// environment, then the app's code no longer sees them there, as
// funchost's worker never does.
func TestKeysAreHiddenFromTheApp(t *testing.T) {
	t.Setenv(host.EnvMasterKey, "master-key-from-env")
	t.Setenv(host.EnvSystemKey, "system-key-from-env")
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "host.json"), []byte(`{"version":"2.0"}`), 0o600))
	t.Chdir(dir)
	h, err := serve.New(settingsApp(), &host.Options{Logger: slog.New(slog.DiscardHandler), Output: io.Discard})
	require.NoError(t, err)
	defer h.Close()
	srv := httptest.NewServer(h.Handler())
	defer srv.Close()

	for _, k := range []string{host.EnvMasterKey, host.EnvSystemKey} {
		_, set := os.LookupEnv(k)
		assert.False(t, set, "%s is out of the app's environment", k)
	}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+host.StatusPath, nil)
	require.NoError(t, err)
	req.Header.Set("x-functions-key", "master-key-from-env")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode, "the host took the key from the environment")
}

// TestBrokenHandlerFailsTheStart: a configuration the app's handler
// refuses (a view file that is not there) fails the start with the
// problem, as the custom handler's own start does, instead of every call.
func TestBrokenHandlerFailsTheStart(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "host.json"), []byte(`{"version":"2.0"}`), 0o600))
	t.Chdir(dir)
	app := worker.New(nil)
	app.ConfigureMcpTool("chart").
		AsMcpApp(func(a *worker.AppBuilder) { a.WithView(worker.ViewFromFile("no-such-view.html")) }).
		Handle(func(context.Context, *worker.ToolContext) (*worker.Result, error) {
			return worker.TextResult("ok"), nil
		})
	require.NoError(t, app.Build(), "the configuration builds: only the server finds the file missing")
	// Already done: a server that started would stop at once, with 0.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	var stdout, stderr bytes.Buffer
	code := serve.RunArgs(ctx, app, []string{"handler", "serve", "--port", "0"}, &stdout, &stderr)
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr.String(), "no-such-view.html")
}
