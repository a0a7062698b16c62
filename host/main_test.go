package host

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// The test worker (testdata/worker) is built once per test binary, on
// first use, and removed when the tests end.
var testWorker struct {
	once sync.Once
	dir  string // its temporary folder
	bin  string
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if testWorker.dir != "" {
		_ = os.RemoveAll(testWorker.dir)
	}
	os.Exit(code)
}

// buildWorker puts the test worker at dir/name (built once, then linked
// or copied) and returns its path.
func buildWorker(t *testing.T, dir, name string) string {
	t.Helper()
	testWorker.once.Do(func() {
		testWorker.dir, testWorker.err = os.MkdirTemp("", "funchost-test-worker-")
		if testWorker.err != nil {
			return
		}
		bin := filepath.Join(testWorker.dir, "handler")
		cmd := exec.Command("go", "build", "-o", bin, "./testdata/worker")
		cmd.Env = os.Environ()
		if data, err := cmd.CombinedOutput(); err != nil {
			testWorker.err = fmt.Errorf("building the test worker: %w: %s", err, data)
			return
		}
		testWorker.bin = bin
	})
	require.NoError(t, testWorker.err)
	out := filepath.Join(dir, name)
	if os.Link(testWorker.bin, out) != nil { // another file system: copy
		require.NoError(t, copyFile(testWorker.bin, out))
	}
	return out
}

func copyFile(from, to string) error {
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return err
	}
	return dst.Close()
}
