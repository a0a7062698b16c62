//go:build unix

package config

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLoadRefusesWhatWouldStallOrSwellIt: a named pipe for host.json or
// local.settings.json once hung start-up (reading it waits for a writer),
// and a 200 MB host.json was read whole. Both are refused at once, as a
// function.json is.
func TestLoadRefusesWhatWouldStallOrSwellIt(t *testing.T) {
	const hostJSON = `{"version":"2.0","customHandler":{"description":{"defaultExecutablePath":"handler"}}}`
	tests := []struct {
		name    string
		setup   func(t *testing.T, root string)
		file    string
		message string
	}{
		{"host.json a named pipe", func(t *testing.T, root string) {
			require.NoError(t, syscall.Mkfifo(filepath.Join(root, HostFile), 0o644))
		}, HostFile, "not a regular file (a named pipe): not read"},
		{"local.settings.json a named pipe", func(t *testing.T, root string) {
			require.NoError(t, os.WriteFile(filepath.Join(root, HostFile), []byte(hostJSON), 0o644))
			require.NoError(t, syscall.Mkfifo(filepath.Join(root, LocalSettingsFile), 0o644))
		}, LocalSettingsFile, "not a regular file (a named pipe): not read"},
		{"host.json a device", func(t *testing.T, root string) {
			require.NoError(t, os.Symlink("/dev/zero", filepath.Join(root, HostFile)))
		}, HostFile, "not a regular file (a device): not read"},
		{"host.json too large", func(t *testing.T, root string) {
			big := hostJSON[:len(hostJSON)-1] + `,"pad":"` + strings.Repeat("x", MaxFileBytes) + `"}`
			require.NoError(t, os.WriteFile(filepath.Join(root, HostFile), []byte(big), 0o644))
		}, HostFile, "more than the limit of 1048576: not read"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			tt.setup(t, root)
			done := make(chan error, 1)
			go func() {
				_, err := Load(root)
				done <- err
			}()
			select {
			case err := <-done:
				require.Error(t, err)
				assert.Contains(t, err.Error(), filepath.Join(root, tt.file))
				assert.Contains(t, err.Error(), tt.message)
			case <-time.After(10 * time.Second):
				t.Fatal("Load waited on the file") // the goroutine stays blocked: the test binary ends anyway
			}
		})
	}
}
