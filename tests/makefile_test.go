package tests

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
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
