package supervise

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/host/internal/config"
	"github.com/funcmcp/funcmcp/host/internal/reaper"
	"github.com/funcmcp/funcmcp/internal/testutil"
)

// treeWorker is a worker that starts three processes the way detaching
// programs do (a child, an orphan whose parent exits, a new session) and
// prints their pids; then it waits, or exits with $EXIT_CODE.
const treeWorker = `#!/bin/sh
sleep 300 &
echo "child $!"
sh -c 'sleep 300 & echo "orphan $!"'
setsid sleep 300 &
echo "session $!"
if [ -n "$EXIT_CODE" ]; then exit "$EXIT_CODE"; fi
exec sleep 300
`

var pidLine = regexp.MustCompile(`\[handler\] (child|orphan|session) (\d+)`)

// startTree starts treeWorker and returns the process and the pids it
// printed.
func startTree(t *testing.T, exitCode string) (*process, []int) {
	t.Helper()
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, "handler"), []byte(treeWorker), 0o755))
	out := &testutil.SyncBuffer{}
	spec := &Spec{Root: root, Worker: &config.Worker{ExecutablePath: "handler"}, Values: []config.Setting{{Key: "EXIT_CODE", Value: exitCode}}}
	p, err := startProcess(spec, out, nil, func(int) {})
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.stop(time.Second) })
	var pids []int
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		m := pidLine.FindAllStringSubmatch(out.String(), -1)
		assert.Len(c, m, 3, out.String())
		pids = pids[:0]
		for _, g := range m {
			pid, _ := strconv.Atoi(g[2])
			pids = append(pids, pid)
		}
	}, 20*time.Second, 10*time.Millisecond)
	return p, pids
}

// gone reports whether pid has ended (a zombie has ended too: it only
// waits for its parent to read its status).
func gone(pid int) bool {
	if syscall.Kill(pid, 0) == syscall.ESRCH {
		return true
	}
	_, zombie, ok := reaper.ProcParent(pid)
	return !ok || zombie
}

// TestReaperEndsTheWorkersTree: whatever ends the worker, nothing it
// started outlives it, however detached: not a child, not an orphan, not a
// process in a session of its own.
func TestReaperEndsTheWorkersTree(t *testing.T) {
	t.Run("the host closes the control pipe, as its death does", func(t *testing.T) {
		p, pids := startTree(t, "")
		p.closeControl()
		select {
		case <-p.exited():
		case <-time.After(20 * time.Second):
			t.Fatal("the reaper did not exit")
		}
		for _, pid := range pids {
			assert.True(t, gone(pid), "pid %d outlived the host", pid)
		}
	})
	t.Run("the worker exits: its status passes through", func(t *testing.T) {
		p, pids := startTree(t, "200")
		select {
		case <-p.exited():
		case <-time.After(20 * time.Second):
			t.Fatal("the reaper did not exit")
		}
		assert.Equal(t, 200, p.exitCode(), "exit code 200 asks for a restart: it must reach the supervisor")
		for _, pid := range pids {
			assert.True(t, gone(pid), "pid %d outlived the worker", pid)
		}
	})
	t.Run("SIGTERM reaches the worker through its group", func(t *testing.T) {
		p, _ := startTree(t, "")
		require.NoError(t, p.stop(20*time.Second))
		assert.Equal(t, -1, p.exitCode())
		assert.Contains(t, p.exitError().Error(), "signal: terminated", "the worker ended by SIGTERM, and so the reaper")
	})
}
