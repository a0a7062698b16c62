package host

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/metadata"
)

// markingApp is the weather app with a worker that writes its pid to the
// file started in the app folder (its working directory), prints a line
// and then waits, never ready (it does not listen). It returns the app
// folder and the pid file's path.
func markingApp(t *testing.T) (root, pidFile string) {
	t.Helper()
	script := `echo $$ > started; echo early line; exec sleep 30`
	root = weatherApp(t, `{"version":"2.0","customHandler":{"description":{"defaultExecutablePath":"sh","arguments":["-c",`+strconv.Quote(script)+`]}}}`)
	return root, filepath.Join(root, "started")
}

// startedPid waits for the worker to write its pid.
func startedPid(t *testing.T, pidFile string) int {
	t.Helper()
	var pid int
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		data, err := os.ReadFile(pidFile)
		if !assert.NoError(c, err, "the worker did not start") {
			return
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(data)))
		assert.NoError(c, err)
	}, 10*time.Second, 5*time.Millisecond)
	return pid
}

// ended reports whether pid has ended (a zombie has).
func ended(pid int) bool {
	if errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
		return true
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	i := strings.LastIndexByte(string(stat), ')')
	return i > 0 && len(stat) > i+2 && (stat[i+2] == 'Z' || stat[i+2] == 'X')
}

// TestNewStartsTheWorker: the worker process starts while New loads the
// app, not once Run is called, so that its start-up runs beside the
// load. What it prints and what the supervisor logs are held back until
// Run has printed the function list; a host closed without running stops
// the worker and shows nothing of it.
func TestNewStartsTheWorker(t *testing.T) {
	requireUnix(t)
	root, pidFile := markingApp(t)
	out, logs := &syncBuffer{}, &syncBuffer{}
	h, err := New(&Options{ScriptRoot: root, Addr: "127.0.0.1:0", Output: out, Logger: newLogger(logs),
		StartupTimeout: 20 * time.Second, StopTimeout: 2 * time.Second})
	require.NoError(t, err)
	pid := startedPid(t, pidFile) // with no Run
	time.Sleep(50 * time.Millisecond)
	assert.NotContains(t, out.String(), "[handler]", "the worker's lines wait for Run")
	assert.NotContains(t, logs.String(), "worker process started", "so does the supervisor's log")

	require.NoError(t, h.Close())
	assert.Eventually(t, func() bool { return ended(pid) }, 10*time.Second, 5*time.Millisecond, "Close stops the worker New started")
	assert.NotContains(t, out.String(), "[handler]")
	assert.NotContains(t, logs.String(), "worker process")
}

// TestNewFailingStopsTheWorker: when New fails after the worker started,
// the worker is stopped.
func TestNewFailingStopsTheWorker(t *testing.T) {
	requireUnix(t)
	root, pidFile := markingApp(t)
	// A setting New reads after the worker started.
	writeFile(t, root, LocalSettingsFile, `{"Values":{"`+SettingTrustedProxies+`":"not an address"}}`)
	_, err := New(&Options{ScriptRoot: root, Addr: "127.0.0.1:0", Output: &syncBuffer{}, Logger: newLogger(&syncBuffer{}),
		StartupTimeout: 20 * time.Second, StopTimeout: 2 * time.Second})
	require.ErrorContains(t, err, "loading the trusted proxies")
	// New stopped what it started before it returned: no child process of
	// this test is left (the reaper, or the worker itself where there is
	// none), whether or not the worker got to write its pid.
	if runtime.GOOS == "linux" {
		assert.Eventually(t, func() bool { return len(childProcesses(t)) == 0 }, 10*time.Second, 5*time.Millisecond,
			"a process New started outlived the failed New")
	}
	data, err := os.ReadFile(pidFile)
	if errors.Is(err, os.ErrNotExist) {
		return // the worker never ran its script: the check above holds
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	require.NoError(t, err)
	assert.Eventually(t, func() bool { return ended(pid) }, 10*time.Second, 5*time.Millisecond, "the worker outlived the failed New")
}

// childProcesses lists the live (not zombie) child processes of this
// process, from /proc (Linux).
func childProcesses(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("/proc/self/task/*/children")
	require.NoError(t, err)
	var live []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue // the thread ended
		}
		for _, pid := range strings.Fields(string(data)) {
			stat, err := os.ReadFile("/proc/" + pid + "/stat")
			if err != nil {
				continue
			}
			if _, rest, ok := strings.Cut(string(stat), ") "); ok && !strings.HasPrefix(rest, "Z") {
				live = append(live, pid)
			}
		}
	}
	return live
}

// TestRunShowsTheWorkerAfterTheFunctions: the worker's lines and the
// supervisor's log come after the function list, as when Run started the
// worker, and the endpoint line after the worker is ready.
func TestRunShowsTheWorkerAfterTheFunctions(t *testing.T) {
	requireUnix(t)
	root := t.TempDir()
	buildWorker(t, root, "handler")
	writeFile(t, root, HostFile, `{"version":"2.0","customHandler":{"description":{"defaultExecutablePath":"handler"}}}`)
	writeTool(t, root, "get_weather", &metadata.ToolOptions{ToolName: "get_weather", Description: "Weather.", Properties: cityProperty, OutputSchema: weatherSchema})
	_, out, logs, stop, _ := runReadyHost(t, root)
	require.NoError(t, stop())
	text := out.String()
	functions, worker, endpoint := strings.Index(text, "Functions:"), strings.Index(text, "[handler]"), strings.Index(text, "MCP server endpoint:")
	require.True(t, functions >= 0 && worker >= 0 && endpoint >= 0, text)
	assert.Less(t, functions, worker, text)
	assert.Less(t, worker, endpoint, text)
	assert.Contains(t, logs.String(), "worker process started")
}
