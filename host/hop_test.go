package host

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/metadata"
)

// processApp writes an app served by the test worker process, with its
// tools env, exit, sleep and freeze.
func processApp(t *testing.T, hostJSON string) string {
	t.Helper()
	root := t.TempDir()
	buildWorker(t, root, "handler")
	writeFile(t, root, HostFile, hostJSON)
	noProps := []metadata.ToolProperty{}
	writeTool(t, root, "env", &metadata.ToolOptions{ToolName: "env", Description: "The worker's environment.", Properties: noProps})
	writeTool(t, root, "exit", &metadata.ToolOptions{ToolName: "exit", Description: "Exit.", Properties: []metadata.ToolProperty{{PropertyName: "code", PropertyType: "integer", IsRequired: true}}})
	writeTool(t, root, "sleep", &metadata.ToolOptions{ToolName: "sleep", Description: "Sleep.", Properties: []metadata.ToolProperty{{PropertyName: "ms", PropertyType: "integer", IsRequired: true}}})
	writeTool(t, root, "freeze", &metadata.ToolOptions{ToolName: "freeze", Description: "Hang.", Properties: noProps})
	return root
}

const workerHostJSON = `{"version":"2.0","customHandler":{"description":{"defaultExecutablePath":"handler"}}}`

// envPid calls env once and returns the worker's pid, 0 when the call failed.
func envPid(t *testing.T, base string) int {
	t.Helper()
	pid, err := tryEnvPid(base)
	require.NoError(t, err)
	return pid
}

// tryEnvPid is envPid for any goroutine (an Eventually condition).
func tryEnvPid(base string) (int, error) {
	_, body, err := tryRPC(base, "2025-06-18", "", callBody(1, "env", ""))
	if err != nil {
		return 0, err
	}
	var reply struct{ Result *metadata.CallToolResult }
	if err := json.Unmarshal(body, &reply); err != nil || reply.Result == nil {
		return 0, fmt.Errorf("not a tools/call result: %s", body)
	}
	if reply.Result.IsError {
		return 0, nil
	}
	var env struct{ Pid int }
	if err := json.Unmarshal(reply.Result.StructuredContent, &env); err != nil {
		return 0, err
	}
	return env.Pid, nil
}

func TestWorkerRedirectIsAFailedCall(t *testing.T) {
	var elsewhere atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"Outputs":{},"Logs":[],"ReturnValue":"foreign"}`)
	}))
	defer other.Close()
	worker := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			return
		}
		http.Redirect(w, r, other.URL+"/steal", http.StatusTemporaryRedirect)
	}))
	defer worker.Close()
	root := weatherApp(t, `{"version":"2.0"}`)
	h, logs := newTestHost(t, root, worker.URL, nil)
	srv := httptest.NewServer(h.Handler())
	defer srv.Close()
	status, body := rpc(t, srv.URL, "2025-06-18", callBody(1, "get_weather", `{"city":"Oslo"}`))
	require.Equal(t, http.StatusOK, status)
	res := callResult(t, body)
	assert.True(t, res.IsError, "a 3xx is a failed call: %s", body)
	assert.NotContains(t, string(body), "foreign")
	assert.Equal(t, int32(0), elsewhere.Load(), "the redirect is not followed")
	assert.Contains(t, logs.String(), "307 Temporary Redirect")
}

func TestFunctionTimeoutFromHostJSON(t *testing.T) {
	fw := newFakeWorker(t)
	root := weatherApp(t, `{"version":"2.0","functionTimeout":"00:00:01"}`)
	h, logs := newTestHost(t, root, fw.srv.URL, nil)
	srv := httptest.NewServer(h.Handler())
	defer srv.Close()
	start := time.Now()
	_, body := rpc(t, srv.URL, "2025-06-18", callBody(1, "slow", `{}`))
	assert.True(t, callResult(t, body).IsError)
	assert.Less(t, time.Since(start), 8*time.Second, "bounded by functionTimeout, not the worker's 10 s")
	assert.Contains(t, logs.String(), "the worker did not answer within 1s")
}

// cancelWorker is a custom handler whose every call waits until cancelled
// or released (or 10 s), telling the test when it started and how it
// ended. A released call answers a valid get_weather result.
type cancelWorker struct {
	srv       *httptest.Server
	started   chan struct{}
	cancelled chan struct{}
	release   chan struct{}
}

func newCancelWorker(t *testing.T) *cancelWorker {
	cw := &cancelWorker{started: make(chan struct{}, 8), cancelled: make(chan struct{}, 8), release: make(chan struct{}, 8)}
	cw.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			return
		}
		_, _ = io.Copy(io.Discard, r.Body) // a server notices a closed connection once the body is read
		cw.started <- struct{}{}
		select {
		case <-r.Context().Done():
			cw.cancelled <- struct{}{}
		case <-cw.release:
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(metadata.InvocationResponse{Outputs: map[string]json.RawMessage{}, Logs: []string{},
				ReturnValue: envelopeReturn(`{"city":"Oslo","temp":21.5}`)})
		case <-time.After(10 * time.Second):
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"Outputs":{},"Logs":[],"ReturnValue":"late"}`)
		}
	}))
	t.Cleanup(cw.srv.Close)
	return cw
}

func (cw *cancelWorker) wait(t *testing.T, ch chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(5 * time.Second):
		t.Fatalf("the worker call was not %s", what)
	}
}

func TestCancelledNotificationCancelsTheCall(t *testing.T) {
	cw := newCancelWorker(t)
	root := weatherApp(t, `{"version":"2.0"}`)
	h, logs := newTestHost(t, root, cw.srv.URL, nil)
	srv := httptest.NewServer(h.Handler())
	defer srv.Close()
	session := initSession(t, srv.URL, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"probe","version":"0.1"}}}`)
	other := initSession(t, srv.URL, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}`)

	// Another session's cancel of the same id changes nothing. The host
	// handles a cancel before it answers 202: had this one reached the
	// call, the call would be cancelled by now, and the worker's answer
	// below would not be delivered.
	call := goRPC(srv.URL, "", session, callBody(42, "get_weather", `{"city":"Oslo"}`))
	cw.wait(t, cw.started, "started")
	status, _ := rpcSession(t, srv.URL, other, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":42,"reason":"not mine"}}`)
	require.Equal(t, http.StatusAccepted, status)
	cw.release <- struct{}{}
	r := await(t, call, 10*time.Second, "the call")
	res := callResult(t, r.body)
	assert.False(t, res.IsError, "a cancel from another session stopped the call: %s", r.body)
	assert.NotContains(t, logs.String(), "(Cancelled)")

	// The call's own session cancels it.
	call = goRPC(srv.URL, "", session, callBody(43, "get_weather", `{"city":"Oslo"}`))
	cw.wait(t, cw.started, "started")
	status, _ = rpcSession(t, srv.URL, session, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":43,"reason":"user gave up"}}`)
	require.Equal(t, http.StatusAccepted, status)
	cw.wait(t, cw.cancelled, "cancelled")
	await(t, call, 10*time.Second, "the cancelled call")
	assert.Contains(t, logs.String(), "Executed 'Functions.get_weather' (Cancelled)")
	assert.NotContains(t, logs.String(), "level=ERROR", "a cancelled call is not a failure")
}

func TestClientDisconnectIsNotAFailure(t *testing.T) {
	cw := newCancelWorker(t)
	root := weatherApp(t, `{"version":"2.0"}`)
	h, logs := newTestHost(t, root, cw.srv.URL, nil)
	srv := httptest.NewServer(h.Handler())
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	go postUntilCancelled(ctx, srv.URL, callBody(1, "get_weather", `{"city":"Oslo"}`))
	cw.wait(t, cw.started, "started")
	cancel() // the client goes away
	cw.wait(t, cw.cancelled, "cancelled")
	require.Eventually(t, func() bool { return strings.Contains(logs.String(), "(Cancelled)") }, 5*time.Second, 10*time.Millisecond)
	assert.NotContains(t, logs.String(), "level=ERROR")
	assert.NotContains(t, logs.String(), "(Failed)")
}

func TestCallsWaitForARestartedWorker(t *testing.T) {
	requireUnix(t)
	root := processApp(t, workerHostJSON)
	h, _, logs, _, _ := runReadyHost(t, root)
	base := strings.TrimSuffix(h.Endpoint(), MCPPath)
	pid1 := envPid(t, base)
	require.NotZero(t, pid1)
	_, body := rpc(t, base, "2025-06-18", callBody(2, "exit", `{"code":1}`))
	require.True(t, callResult(t, body).IsError)
	// Once the exit is noticed, while the new worker starts: the call waits
	// for it.
	require.Eventually(t, h.inv.Restarting, 5*time.Second, time.Millisecond)
	pid2 := envPid(t, base)
	assert.NotZero(t, pid2, "a call during a restart reaches the new worker\n%s", logs)
	assert.NotEqual(t, pid1, pid2)
}

func TestLivenessProbeRestartsAHungWorker(t *testing.T) {
	requireUnix(t)
	root := processApp(t, workerHostJSON)
	out, logs := &syncBuffer{}, &syncBuffer{}
	h, err := New(&Options{ScriptRoot: root, Addr: "127.0.0.1:0", Output: out, Logger: newLogger(logs), SystemKey: testKey,
		ProbeInterval: 100 * time.Millisecond, ProbeTimeout: 200 * time.Millisecond, ProbeFailures: 2})
	require.NoError(t, err)
	stop, _ := runHost(t, h)
	defer func() { _ = stop() }()
	select {
	case <-h.Ready():
	case <-time.After(20 * time.Second):
		t.Fatalf("not ready\n%s", logs)
	}
	base := strings.TrimSuffix(h.Endpoint(), MCPPath)
	pid1 := envPid(t, base)
	require.NotZero(t, pid1)
	_, body := rpc(t, base, "2025-06-18", callBody(2, "freeze", `{}`))
	assert.True(t, callResult(t, body).IsError, "the call the worker hung in fails once the worker is killed: %s\n%s", body, logs)
	var pid2 int
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		pid, err := tryEnvPid(base)
		assert.NoError(c, err)
		assert.NotZero(c, pid, "a worker answers")
		pid2 = pid
	}, 20*time.Second, 50*time.Millisecond, "%s", logs)
	assert.NotEqual(t, pid1, pid2)
	assert.Contains(t, logs.String(), "did not answer its liveness probe")
	assert.Contains(t, logs.String(), "stopped answering its liveness probe and was killed")
	assert.False(t, processAlive(pid1), "the hung worker is gone")
}

// processAlive reports whether pid exists and is not a zombie.
func processAlive(pid int) bool {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return syscall.Kill(pid, 0) == nil // no /proc: existence only
	}
	i := strings.LastIndexByte(string(data), ')')
	return i < 0 || i+2 >= len(data) || data[i+2] != 'Z'
}

func TestStopKillsTheWorkersProcessGroup(t *testing.T) {
	requireUnix(t)
	root := processApp(t, `{"version":"2.0","customHandler":{"description":{"defaultExecutablePath":"sh","arguments":["-c","sleep 300 & echo $! > grandchild.pid; exec ./handler"]}}}`)
	_, _, logs, stop, _ := runReadyHost(t, root)
	var gc int
	require.Eventually(t, func() bool {
		data, err := os.ReadFile(filepath.Join(root, "grandchild.pid"))
		if err != nil {
			return false
		}
		gc, err = strconv.Atoi(strings.TrimSpace(string(data)))
		return err == nil
	}, 10*time.Second, 10*time.Millisecond)
	require.True(t, processAlive(gc))
	require.NoError(t, stop())
	require.Eventually(t, func() bool { return !processAlive(gc) }, 5*time.Second, 10*time.Millisecond,
		"the worker's child (pid %d) outlived the host's stop\n%s", gc, logs)
}

func TestBusyOverTheBoundOfCallsInFlight(t *testing.T) {
	cw := newCancelWorker(t)
	root := weatherApp(t, `{"version":"2.0"}`)
	h, _ := newTestHost(t, root, cw.srv.URL, &Options{MaxCallsInFlight: 1})
	srv := httptest.NewServer(h.Handler())
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go postUntilCancelled(ctx, srv.URL, callBody(1, "get_weather", `{"city":"Oslo"}`))
	cw.wait(t, cw.started, "started")
	status, body := rpc(t, srv.URL, "2025-06-18", callBody(2, "get_weather", `{"city":"Bergen"}`))
	assert.Equal(t, http.StatusOK, status)
	assert.JSONEq(t, `{"jsonrpc":"2.0","id":2,"error":{"code":-32000,"message":"Server busy: 1 tool calls are running, the most allowed; try again later."}}`, string(body))
	cancel()
	cw.wait(t, cw.cancelled, "cancelled")
	require.Eventually(t, func() bool { return h.calls.InFlight() == 0 }, 5*time.Second, 5*time.Millisecond)
}

// TestExitCode200RestartsARealWorker runs a worker process that asks for a
// restart (exit code 200) 50 ms after every start: it is started again,
// and none of it counts as a failure. (That such restarts are at least a
// second apart is shown by supervise's TestExitCode200RestartsAreRateLimited,
// on a fake clock.)
func TestExitCode200RestartsARealWorker(t *testing.T) {
	requireUnix(t)
	root := processApp(t, workerHostJSON)
	writeFile(t, root, LocalSettingsFile, `{"IsEncrypted":false,"Values":{"EXIT200_AFTER_MS":"50"}}`)
	h, logs, _, stop := runWorkerHostReady(t, root)
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.GreaterOrEqual(c, strings.Count(logs.String(), "the worker process asked to be restarted"), 2)
		assert.GreaterOrEqual(c, strings.Count(logs.String(), "worker process restarted"), 2)
	}, 20*time.Second, 20*time.Millisecond, "the worker was not restarted twice")
	require.NoError(t, stop())
	assert.NotEqual(t, StateUnhealthy, h.Status().State)
	assert.NotContains(t, logs.String(), "exited unexpectedly")
}

// postUntilCancelled posts an MCP request and drops the reply; cancelling ctx
// is the client going away.
func postUntilCancelled(ctx context.Context, url, body string) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+MCPPath, strings.NewReader(body))
	if err != nil {
		return
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
	}
}
