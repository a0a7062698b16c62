package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/metadata"
)

func requireUnix(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("uses POSIX signals and sh")
	}
}

// runHost starts h.Run in the background; the returned func cancels it and
// returns Run's error.
func runHost(t *testing.T, h *Host) (stop func() error, done <-chan error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- h.Run(ctx) }()
	t.Cleanup(cancel)
	return func() error {
		cancel()
		select {
		case err := <-errc:
			return err
		case <-time.After(15 * time.Second):
			t.Fatal("Run did not return after cancel")
			return nil
		}
	}, errc
}

// runReadyHost loads root, runs the host with a real worker process on a
// free port and waits until it serves. out and logs collect the console and
// the host log.
func runReadyHost(t *testing.T, root string) (h *Host, out, logs *syncBuffer, stop func() error, done <-chan error) {
	t.Helper()
	out, logs = &syncBuffer{}, &syncBuffer{}
	h, err := New(&Options{ScriptRoot: root, Addr: "127.0.0.1:0", Output: out, Logger: newLogger(logs), StartupTimeout: 20 * time.Second, SystemKey: testKey,
		restartDelay: 300 * time.Millisecond})
	require.NoError(t, err)
	stop, done = runHost(t, h)
	select {
	case <-h.Ready():
	case err := <-done:
		t.Fatalf("Run returned before ready: %v\n%s\n%s", err, out, logs)
	case <-time.After(20 * time.Second):
		t.Fatalf("not ready\n%s\n%s", out, logs)
	}
	return h, out, logs, stop, done
}

func TestRealWorkerProcess(t *testing.T) {
	requireUnix(t)
	root := t.TempDir()
	buildWorker(t, root, "handler")
	require.NoError(t, os.MkdirAll(filepath.Join(root, "wd"), 0o755))
	writeFile(t, root, HostFile, `{"version":"2.0","customHandler":{"description":{"defaultExecutablePath":"handler","arguments":["--greet","%GREETING%","--port=%FUNCTIONS_CUSTOMHANDLER_PORT%"],"workingDirectory":"wd"}}}`)
	// The host's function keys, from local.settings.json and from the
	// environment, are never the worker's.
	writeFile(t, root, LocalSettingsFile, `{"IsEncrypted":false,"Values":{"GREETING":"hello","FUNCHOST_MASTER_KEY":"master-key-from-settings"}}`)
	t.Setenv("FUNCHOST_MCP_EXTENSION_KEY", "system-key-from-the-environment")
	writeTool(t, root, "get_weather", &metadata.ToolOptions{ToolName: "get_weather", Description: "Weather.", Properties: cityProperty, OutputSchema: weatherSchema})
	writeTool(t, root, "env", &metadata.ToolOptions{ToolName: "env", Description: "The worker's environment.", Properties: []metadata.ToolProperty{}})

	h, out, logs, stop, _ := runReadyHost(t, root)

	endpoint := regexp.MustCompile(`(?m)^MCP server endpoint: (http://127\.0\.0\.1:\d+/runtime/webhooks/mcp)$`)
	m := endpoint.FindAllStringSubmatch(out.String(), -1)
	require.Len(t, m, 1, out.String())
	assert.Equal(t, h.Endpoint(), m[0][1])
	base := strings.TrimSuffix(m[0][1], MCPPath)
	assert.Equal(t, StateRunning, h.Status().State)

	status, body := rpc(t, base, "2025-06-18", callBody(1, "get_weather", `{"city":"Oslo"}`))
	require.Equal(t, http.StatusOK, status, string(body))
	res := callResult(t, body)
	assert.False(t, res.IsError)
	assert.JSONEq(t, `{"city":"Oslo","temp":21.5}`, string(res.StructuredContent))

	_, body = rpc(t, base, "2025-06-18", callBody(2, "env", ""))
	res = callResult(t, body)
	require.False(t, res.IsError, string(body))
	var env struct {
		Pid                            int
		Args                           []string
		Wd, Port, LegacyPort, WorkerID string
		AppRoot, Greeting, UserAgent   string
		HostKeys                       []string
	}
	require.NoError(t, json.Unmarshal(res.StructuredContent, &env))
	assert.Empty(t, env.HostKeys, "the worker's environment holds no function key")
	assert.Equal(t, []string{"--greet", "hello", "--port=" + env.Port}, env.Args)
	wantWD, _ := filepath.EvalSymlinks(filepath.Join(root, "wd"))
	gotWD, _ := filepath.EvalSymlinks(env.Wd)
	assert.Equal(t, wantWD, gotWD)
	assert.NotEmpty(t, env.Port)
	assert.Equal(t, env.Port, env.LegacyPort)
	assert.Len(t, env.WorkerID, 36)
	assert.Equal(t, root, env.AppRoot)
	assert.Equal(t, "hello", env.Greeting)
	assert.Equal(t, "Azure-Functions-Host/"+Version, env.UserAgent)
	require.NotZero(t, env.Pid)

	require.NoError(t, stop())
	assert.Equal(t, StateStopped, h.Status().State)
	// The worker process is gone (and reaped).
	err := syscall.Kill(env.Pid, 0)
	assert.True(t, errors.Is(err, syscall.ESRCH), "worker pid %d still exists: %v", env.Pid, err)

	// Its output was streamed line by line with a prefix.
	assert.Contains(t, out.String(), "[handler] worker listening on port "+env.Port+"\n")
	assert.Contains(t, out.String(), "[handler] worker stderr line\n")
	assert.Regexp(t, `\[handler\] invoked get_weather \(invocation [0-9a-f-]{36}\)`, out.String())
	assert.Contains(t, logs.String(), `msg="worker handled get_weather"`)
	assert.Regexp(t, `level=INFO msg="Executed 'Functions\.get_weather' \(Succeeded\)" function=get_weather tool=get_weather invocationId=[0-9a-f-]{36} duration=\d`, logs.String())
	// The endpoint line comes after the worker was ready.
	assert.Less(t, strings.Index(out.String(), "[handler] worker listening"), strings.Index(out.String(), "MCP server endpoint:"))
}

func TestWorkerStartFailures(t *testing.T) {
	requireUnix(t)
	tests := []struct {
		name    string
		desc    string // customHandler.description
		wantErr string
		wantOut string
	}{
		{"exits before ready", `{"defaultExecutablePath":"sh","arguments":["-c","echo bye; exit 3"]}`,
			"starting the worker: the worker process exited before it was ready: exit status 3", "[handler] bye\n"},
		{"never ready", `{"defaultExecutablePath":"sh","arguments":["-c","exec sleep 30"]}`,
			"starting the worker: the worker was not ready within 300ms: GET http://127.0.0.1:", ""},
		// A handler that is not there is named with host.json's key and the
		// app folder (ROOT), not as exec's "executable file not found in
		// $PATH" or, for a path, an exit status of the reaper.
		{"no such executable", `{"defaultExecutablePath":"handlr"}`,
			`starting the worker: the handler "handlr" named by host.json's customHandler.description.defaultExecutablePath was not found in the app folder ROOT (nor on PATH)`, ""},
		{"no such path", `{"defaultExecutablePath":"bin/handlr"}`,
			`starting the worker: the handler "bin/handlr" named by host.json's customHandler.description.defaultExecutablePath was not found in the app folder ROOT`, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := weatherApp(t, `{"customHandler":{"description":`+tc.desc+`}}`)
			tc.wantErr = strings.ReplaceAll(tc.wantErr, "ROOT", root)
			out := &syncBuffer{}
			h, err := New(&Options{ScriptRoot: root, Addr: "127.0.0.1:0", Output: out, Logger: newLogger(&syncBuffer{}),
				StartupTimeout: 300 * time.Millisecond, StopTimeout: 2 * time.Second})
			require.NoError(t, err)
			start := time.Now()
			err = h.Run(context.Background())
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.wantErr)
			assert.Less(t, time.Since(start), 10*time.Second)
			assert.Contains(t, out.String(), tc.wantOut)
			assert.NotContains(t, out.String(), "MCP server endpoint:")
			assert.Equal(t, StateStopped, h.Status().State)
		})
	}
}

func TestRunErrors(t *testing.T) {
	fw := newFakeWorker(t)
	root := weatherApp(t, `{"version":"2.0"}`)
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer busy.Close()
	h, _ := newTestHost(t, root, fw.srv.URL, &Options{Addr: busy.Addr().String()})
	err = h.Run(context.Background())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "listening on "+busy.Addr().String())
	err = h.Run(context.Background())
	assert.EqualError(t, err, "running the host: it already ran")
}

func TestRunWithWorkerURL(t *testing.T) {
	fw := newFakeWorker(t)
	root := weatherApp(t, `{"version":"2.0"}`)
	out := &syncBuffer{}
	h, _ := newTestHost(t, root, fw.srv.URL, &Options{Addr: "127.0.0.1:0", Output: out})
	stop, _ := runHost(t, h)
	select {
	case <-h.Ready():
	case <-time.After(10 * time.Second):
		t.Fatal("not ready")
	}
	resp, err := getWithKey(strings.TrimSuffix(h.Endpoint(), MCPPath)+StatusPath, testKey)
	require.NoError(t, err)
	var st Status
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&st))
	resp.Body.Close()
	assert.Equal(t, StateRunning, st.State)
	require.NoError(t, stop())
	assert.Equal(t, 1, strings.Count(out.String(), "MCP server endpoint: "))
	assert.True(t, strings.HasPrefix(out.String(), "Functions:\n"))
}

// TestWorkerRestart crashes the real worker process and checks the restart
// policy: a crash is counted and the worker restarted on a new port, exit
// code 200 restarts without counting, and the third failure within the
// window stops the host with an error.
func TestWorkerRestart(t *testing.T) {
	requireUnix(t)
	root := t.TempDir()
	buildWorker(t, root, "handler")
	writeFile(t, root, HostFile, `{"version":"2.0","customHandler":{"description":{"defaultExecutablePath":"handler"}}}`)
	writeTool(t, root, "env", &metadata.ToolOptions{ToolName: "env", Description: "The worker's environment.", Properties: []metadata.ToolProperty{}})
	writeTool(t, root, "exit", &metadata.ToolOptions{ToolName: "exit", Description: "Exit.", Properties: []metadata.ToolProperty{{PropertyName: "code", PropertyType: "integer", IsRequired: true}}})

	h, out, logs, _, done := runReadyHost(t, root)
	base := strings.TrimSuffix(h.Endpoint(), MCPPath)

	// workerPid calls env until a worker answers (bounded) and returns its pid.
	workerPid := func() int {
		t.Helper()
		var pid int
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			p, err := tryEnvPid(base)
			assert.NoError(c, err)
			assert.NotZero(c, p, "a worker answers")
			pid = p
		}, 20*time.Second, 50*time.Millisecond, "no worker answered\n%s\n%s", out, logs)
		return pid
	}
	crash := func(code int) {
		t.Helper()
		_, body := rpc(t, base, "2025-06-18", callBody(2, "exit", fmt.Sprintf(`{"code":%d}`, code)))
		assert.True(t, callResult(t, body).IsError, "a call the worker dies in fails: %s", body)
	}
	liveErrors := func() int {
		n := 0
		for _, e := range h.Status().Errors {
			if strings.Contains(e, "exited unexpectedly") {
				n++
			}
		}
		return n
	}

	pid1 := workerPid()
	crash(1)
	pid2 := workerPid()
	assert.NotEqual(t, pid1, pid2, "a new worker process serves after the crash")
	assert.Equal(t, 1, liveErrors())
	assert.Equal(t, StateRunning, h.Status().State)
	assert.Contains(t, logs.String(), "worker process restarted")

	crash(200) // asks for a restart
	pid3 := workerPid()
	assert.NotEqual(t, pid2, pid3)
	assert.Equal(t, 1, liveErrors(), "exit code 200 asks for a restart and is not a failure")
	assert.Contains(t, logs.String(), "the worker process asked to be restarted")

	crash(3)
	workerPid()
	crash(4) // the third failure within the window: the host stays up
	require.Eventually(t, func() bool { return h.Status().State == StateUnhealthy }, 10*time.Second, 5*time.Millisecond, "%s", logs)
	st := h.Status()
	assert.Contains(t, st.Reason, "the worker failed 3 times within 30m0s")
	_, body := rpc(t, base, "2025-06-18", callBody(3, "env", ""))
	assert.True(t, callResult(t, body).IsError, "an unhealthy host answers calls with isError: %s", body)
	assert.Contains(t, logs.String(), "Exceeded the worker restart retry count. The host stays up")
	// The back-off restart brings a worker back.
	require.Eventually(t, func() bool { return h.Status().State == StateRunning }, 20*time.Second, 10*time.Millisecond, "%s", logs)
	workerPid()
	select {
	case err := <-done:
		t.Fatalf("the host stopped: %v", err)
	default:
	}
	assert.Equal(t, 3, liveErrors())
}
