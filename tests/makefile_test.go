package tests

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMakeBuildForWindows: GOOS=windows make build (on this machine, a
// cross build) writes an app folder whose host.json names the handler
// executable it holds, handler.exe, as Windows needs, beside the function
// folders; funchost is funchost.exe.
func TestMakeBuildForWindows(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Fatalf("make is needed to run the Makefile: %v", err)
	}
	t.Parallel()
	dist := t.TempDir()
	ctx, cancel := context.WithTimeout(t.Context(), buildTimeout)
	defer cancel()
	cmd := exec.Command("make", "-C", repoRoot(t), "DIST="+dist, "build")
	cmd.Env = append(os.Environ(), "GOOS=windows", "GOARCH=amd64", "GOWORK=off")
	out, err := runBounded(ctx, cmd)
	require.NoError(t, err, "GOOS=windows make build:\n%s", out)

	app := filepath.Join(dist, "app")
	data, err := os.ReadFile(filepath.Join(app, "host.json"))
	require.NoError(t, err)
	var host struct {
		CustomHandler struct {
			Description struct {
				DefaultExecutablePath string `json:"defaultExecutablePath"`
			} `json:"description"`
		} `json:"customHandler"`
	}
	require.NoError(t, json.Unmarshal(data, &host))
	exe := host.CustomHandler.Description.DefaultExecutablePath
	assert.Equal(t, "handler.exe", exe)
	assert.FileExists(t, filepath.Join(app, exe), "host.json names the handler the build wrote")
	assert.NoFileExists(t, filepath.Join(app, "handler"))
	assert.FileExists(t, filepath.Join(app, "to_roman", "function.json"))
	assert.FileExists(t, filepath.Join(dist, "funchost.exe"))
}

// TestMakeInspector: after `make run` alone, `make inspector` (in another
// terminal) reaches the server on $(PORT) with the MCP Inspector CLI: it
// installs tests/node first when its stamp is stale (the dry run shows
// npm ci before the CLI), lists the tools by default, and ARGS picks
// another method. The real runs take the installed clients as they are
// (-o: the stamp counts as old), so that the test never reinstalls them.
func TestMakeInspector(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Fatalf("make is needed to run the Makefile: %v", err)
	}
	t.Parallel()
	nodeBin(t, "@modelcontextprotocol/inspector-cli") // fail fast when the clients are not installed
	h := startHost(t, sample(t))
	port := endpointLine.FindStringSubmatch(endpointPrefix + h.endpoint)[2]
	root := repoRoot(t)
	stamp := "tests/node/node_modules/.package-lock.json"
	make := func(args ...string) (string, error) {
		ctx, cancel := context.WithTimeout(t.Context(), clientTimeout)
		defer cancel()
		cmd := exec.Command("make", append([]string{"-s", "-C", root}, args...)...)
		cmd.Env = append(os.Environ(), "GOWORK=off")
		return runBounded(ctx, cmd)
	}

	dry, err := make("-n", "-W", "tests/node/package.json", "inspector", "PORT="+port)
	require.NoError(t, err, dry)
	npmCI := strings.Index(dry, "npm ci")
	cli := strings.Index(dry, "index.js http://127.0.0.1:"+port+"/runtime/webhooks/mcp --transport http --method tools/list")
	require.GreaterOrEqual(t, npmCI, 0, "a stale tests/node is installed first:\n%s", dry)
	require.Greater(t, cli, npmCI, "then the CLI runs against the port:\n%s", dry)

	out, err := make("-o", stamp, "inspector", "PORT="+port)
	require.NoError(t, err, out)
	var listed struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	require.NoError(t, json.Unmarshal([]byte(jsonPart(out)), &listed), out)
	var names []string
	for _, tool := range listed.Tools {
		names = append(names, tool.Name)
	}
	assert.Len(t, names, len(sampleTools))
	assert.Contains(t, names, "to_roman")

	out, err = make("-o", stamp, "inspector", "PORT="+port, "ARGS=--method tools/call --tool-name to_roman --tool-arg number=12")
	require.NoError(t, err, out)
	assert.JSONEq(t, `{"content":[{"type":"text","text":"XII"}]}`, jsonPart(out))
}
