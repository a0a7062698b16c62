package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/host"
	"github.com/funcmcp/funcmcp/metadata"

	"github.com/funcmcp/funcmcp/internal/testutil"
)

var endpointRE = regexp.MustCompile(`^MCP server endpoint: (http://127\.0\.0\.1:\d+/runtime/webhooks/mcp)$`)

func TestUsage(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStdout string
		wantStderr string
	}{
		{"help", []string{"--help"}, 0, "funchost start [flags]", ""},
		{"help lists the flags", []string{"-h"}, 0, "-script-root", ""},
		{"start --help", []string{"start", "--help"}, 0, "", "-port"},
		{"no command", nil, 2, "", "Usage:"},
		{"unknown command", []string{"serve"}, 2, "", `funchost: unknown command "serve"`},
		{"unknown flag", []string{"start", "--nope"}, 2, "", "flag provided but not defined: -nope"},
		{"bad port", []string{"start", "--port", "70000"}, 2, "", "funchost: --port 70000 is not a port number"},
		{"extra arguments", []string{"start", "dir"}, 2, "", "funchost: unexpected arguments: [dir]"},
		{"version", []string{"--version"}, 0, "funchost " + host.Version + " (module ", ""},
		{"bad log format", []string{"start", "--log-format", "xml"}, 2, "", `funchost: --log-format "xml" is not text or json`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), tc.args, &stdout, &stderr)
			assert.Equal(t, tc.wantCode, code, "stderr: %s", stderr.String())
			assert.Contains(t, stdout.String(), tc.wantStdout)
			assert.Contains(t, stderr.String(), tc.wantStderr)
		})
	}
}

func writeFile(t *testing.T, root, name, text string) {
	t.Helper()
	p := filepath.Join(root, name)
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
}

func writeApp(t *testing.T, hostJSON string) string {
	t.Helper()
	root := t.TempDir()
	writeFile(t, root, "host.json", hostJSON)
	fn, err := metadata.NewToolFunction("get_weather", &metadata.ToolOptions{ToolName: "get_weather", Description: "Weather.",
		Properties:   []metadata.ToolProperty{{PropertyName: "city", PropertyType: "string", IsRequired: true}},
		OutputSchema: `{"type":"object","properties":{"city":{"type":"string"},"temp":{"type":"number"}}}`})
	require.NoError(t, err)
	require.NoError(t, metadata.WriteFunction(root, fn))
	writeFile(t, root, "broken/function.json", `{"bindings":[{"type":"mcpToolTrigger","direction":"in","name":"context","toolName":"broken","description":"x","outputSchema":"[]"}]}`)
	return root
}

func TestStartupFailures(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("uses sh")
	}
	tests := []struct {
		name       string
		hostJSON   string // "" → none
		args       []string
		wantStderr string
	}{
		{"no host.json", "", nil, "funchost: loading the host configuration: "},
		{"no custom handler", `{"version":"2.0"}`, nil, "customHandler: missing"},
		{"worker exits", `{"customHandler":{"description":{"defaultExecutablePath":"sh","arguments":["-c","exit 4"]}}}`, nil,
			"funchost: starting the worker: the worker process exited before it was ready: exit status 4"},
		{"worker never ready", `{"customHandler":{"description":{"defaultExecutablePath":"sh","arguments":["-c","exec sleep 30"]}}}`,
			[]string{"--startup-timeout", "200ms"}, "funchost: starting the worker: the worker was not ready within 200ms"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			if tc.hostJSON != "" {
				root = writeApp(t, tc.hostJSON)
			}
			var stdout, stderr bytes.Buffer
			args := append([]string{"start", "--script-root", root, "--port", "0"}, tc.args...)
			code := run(context.Background(), args, &stdout, &stderr)
			assert.Equal(t, 1, code)
			assert.Contains(t, stderr.String(), tc.wantStderr)
			assert.NotContains(t, stdout.String(), "MCP server endpoint:")
			assert.Contains(t, stderr.String(), "level=ERROR", "a failure is an ERROR log line")
		})
	}
}

// TestPortInUse: a port another process listens on (the sample's
// make run, say) fails the start with the flag that picks another.
func TestPortInUse(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer busy.Close()
	port := strconv.Itoa(busy.Addr().(*net.TCPAddr).Port)
	root := writeApp(t, `{"customHandler":{"description":{"defaultExecutablePath":"sh","arguments":["-c","exit 4"]}}}`)
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"start", "--script-root", root, "--port", port}, &stdout, &stderr)
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr.String(), "address already in use")
	assert.Contains(t, stderr.String(), "port "+port+" is in use by another program (another funchost or func start?): "+
		"serve on another port with --port N (make run PORT=N), or --port 0 for a free one")
}

// TestWorkerRuntimeNotCustom: FUNCTIONS_WORKER_RUNTIME other than custom is
// served as the Functions host serves it (host.json's customHandler decides)
// but not without a warning naming the setting and its value.
func TestWorkerRuntimeNotCustom(t *testing.T) {
	for _, tc := range []struct {
		name, settings, env, want string
	}{
		{name: "node in local.settings.json", settings: `{"Values":{"FUNCTIONS_WORKER_RUNTIME":"node"}}`,
			want: `local.settings.json Values.FUNCTIONS_WORKER_RUNTIME is \"node\", not custom`},
		{name: "python in the environment", env: "python",
			want: `environment FUNCTIONS_WORKER_RUNTIME is \"python\", not custom`},
		{name: "Custom", settings: `{"Values":{"FUNCTIONS_WORKER_RUNTIME":"Custom"}}`},
		{name: "unset"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("FUNCTIONS_WORKER_RUNTIME", tc.env)
			root := writeApp(t, `{"customHandler":{"description":{"defaultExecutablePath":"sh","arguments":["-c","exit 4"]}}}`)
			if tc.settings != "" {
				writeFile(t, root, "local.settings.json", tc.settings)
			}
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), []string{"start", "--script-root", root, "--port", "0"}, &stdout, &stderr)
			assert.Equal(t, 1, code, "the worker exits")
			if tc.want == "" {
				assert.NotContains(t, stderr.String(), "FUNCTIONS_WORKER_RUNTIME")
				return
			}
			assert.Contains(t, stderr.String(), "level=WARN")
			assert.Contains(t, stderr.String(), tc.want)
			assert.Contains(t, stderr.String(), "a custom handler app sets it to custom")
		})
	}
}

// TestJSONLog: with --log-format json every line on stderr is a JSON log
// record, failures at level ERROR.
func TestJSONLog(t *testing.T) {
	root := writeApp(t, `{"customHandler":{"description":{"defaultExecutablePath":"sh","arguments":["-c","exit 4"]}}}`)
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"start", "--script-root", root, "--port", "0", "--log-format", "json"}, &stdout, &stderr)
	assert.Equal(t, 1, code)
	levels := map[string]int{}
	for line := range strings.Lines(stderr.String()) {
		var rec struct{ Level, Msg string }
		require.NoError(t, json.Unmarshal([]byte(line), &rec), "not a JSON record: %s", line)
		levels[rec.Level]++
	}
	assert.Equal(t, 2, levels["ERROR"], "the refused tool and the failed start:\n%s", stderr.String())
}

// testWorker is the host's test worker, built once per test binary on
// first use and removed by TestMain.
var testWorker struct {
	once sync.Once
	dir  string
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if testWorker.dir != "" {
		_ = os.RemoveAll(testWorker.dir)
	}
	os.Exit(code)
}

// buildWorker puts the host's test worker at dir/handler.
func buildWorker(t *testing.T, dir string) {
	t.Helper()
	testWorker.once.Do(func() {
		if testWorker.dir, testWorker.err = os.MkdirTemp("", "funchost-cmd-worker-"); testWorker.err != nil {
			return
		}
		out, err := exec.Command("go", "build", "-o", filepath.Join(testWorker.dir, "handler"), "../../host/testdata/worker").CombinedOutput()
		if err != nil {
			testWorker.err = fmt.Errorf("building the test worker: %w: %s", err, out)
		}
	})
	require.NoError(t, testWorker.err)
	data, err := os.ReadFile(filepath.Join(testWorker.dir, "handler"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "handler"), data, 0o755))
}

// lineBuffer collects output and reports the endpoint line.
type lineBuffer struct {
	mu       sync.Mutex
	lines    []string
	endpoint chan string
}

func (l *lineBuffer) consume(r io.Reader) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		l.mu.Lock()
		l.lines = append(l.lines, line)
		l.mu.Unlock()
		if m := endpointRE.FindStringSubmatch(line); m != nil {
			l.endpoint <- m[1]
		}
	}
}

func (l *lineBuffer) text() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

func TestStartServesAndStops(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("uses POSIX signals")
	}
	root := writeApp(t, `{"version":"2.0","customHandler":{"description":{"defaultExecutablePath":"handler"}}}`)
	buildWorker(t, root)

	pr, pw := io.Pipe()
	out := &lineBuffer{endpoint: make(chan string, 1)}
	go out.consume(pr)
	var stderr syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	codec := make(chan int, 1)
	go func() {
		codec <- run(ctx, []string{"start", "--script-root", root, "--port", "0"}, pw, &stderr)
		pw.Close()
	}()
	var endpoint string
	select {
	case endpoint = <-out.endpoint:
	case code := <-codec:
		t.Fatalf("exited %d: %s\n%s", code, out.text(), stderr.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("no endpoint line: %s\n%s", out.text(), stderr.String())
	}

	// The console says where the generated function keys are kept.
	keysLine := regexp.MustCompile(`(?m)^Function keys: required, the mcp_extension system key or the master key in the x-functions-key header or \?code=; kept in (.+)$`)
	var keysFile string
	for deadline := time.Now().Add(10 * time.Second); keysFile == "" && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if m := keysLine.FindStringSubmatch(out.text()); m != nil {
			keysFile = m[1]
		}
	}
	require.Equal(t, filepath.Join(root, ".funchost", "keys.json"), keysFile, out.text())
	data, err := os.ReadFile(keysFile)
	require.NoError(t, err)
	var keys struct {
		SystemKeys map[string]string `json:"systemKeys"`
	}
	require.NoError(t, json.Unmarshal(data, &keys))
	key := keys.SystemKeys["mcp_extension"]
	require.NotEmpty(t, key)
	assert.NotContains(t, out.text(), key, "the key itself is never printed")

	call := func(key string) (int, string) {
		req, _ := http.NewRequest("POST", endpoint, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_weather","arguments":{"city":"Oslo"}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json")
		if key != "" {
			req.Header.Set("X-Functions-Key", key)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, string(body)
	}
	status, _ := call("")
	assert.Equal(t, http.StatusUnauthorized, status, "no key")
	status, body := call(key)
	assert.Equal(t, http.StatusOK, status)
	assert.Contains(t, body, `"structuredContent":{"city":"Oslo","temp":21.5}`)

	cancel()
	select {
	case code := <-codec:
		assert.Equal(t, 0, code, stderr.String())
	case <-time.After(15 * time.Second):
		t.Fatal("did not stop")
	}
	text := out.text()
	assert.True(t, strings.HasPrefix(text, "Functions:\n"), text)
	assert.Contains(t, text, "  get_weather: mcpToolTrigger (tool get_weather)\n")
	assert.Contains(t, text, "  broken: mcpToolTrigger (tool broken) (not served: see its ERROR line)\n")
	assert.NotContains(t, text, "output schema must be", "the reason is said once, in the log")
	assert.Equal(t, 1, strings.Count(text, "MCP server endpoint:"))
	refusal := `level=ERROR msg="tool not served: function \"broken\", tool \"broken\" (` + filepath.Join(root, "broken", "function.json") + `): output schema must be a JSON object`
	assert.Equal(t, 1, strings.Count(stderr.String(), refusal), "one ERROR line per refused function:\n%s", stderr.String())
	assert.NotContains(t, stderr.String(), key, "the key is never logged")
}

// TestSignalExitsZero runs the built command and stops it with SIGTERM.
func TestSignalExitsZero(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("uses POSIX signals")
	}
	dir := t.TempDir()
	out, err := exec.Command("go", "build", "-o", filepath.Join(dir, "funchost"), ".").CombinedOutput()
	require.NoError(t, err, "%s", out)
	root := writeApp(t, `{"version":"2.0","customHandler":{"description":{"defaultExecutablePath":"handler"}}}`)
	buildWorker(t, root)

	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd := exec.Command(filepath.Join(dir, "funchost"), "start", "--script-root", root, "--port", "0")
			stdout, err := cmd.StdoutPipe()
			require.NoError(t, err)
			var stderr syncBuffer
			cmd.Stderr = &stderr
			require.NoError(t, cmd.Start())
			lines := &lineBuffer{endpoint: make(chan string, 1)}
			done := make(chan struct{})
			go func() { lines.consume(stdout); close(done) }()
			select {
			case <-lines.endpoint:
			case <-time.After(30 * time.Second):
				_ = cmd.Process.Kill()
				t.Fatalf("no endpoint line: %s\n%s", lines.text(), stderr.String())
			}
			require.NoError(t, cmd.Process.Signal(sig))
			<-done
			err = cmd.Wait()
			assert.NoError(t, err, stderr.String())
			assert.Equal(t, 0, cmd.ProcessState.ExitCode())
			assert.Contains(t, stderr.String(), "worker process stopped")
		})
	}
}

// syncBuffer is a goroutine-safe buffer for process output and logs.
type syncBuffer = testutil.SyncBuffer

// TestWorkerDiesWithTheHost kills funchost with SIGKILL, which it cannot
// handle: the kernel must still end the worker (parent-death signal).
func TestWorkerDiesWithTheHost(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the parent-death signal is Linux only")
	}
	dir := t.TempDir()
	out, err := exec.Command("go", "build", "-o", filepath.Join(dir, "funchost"), ".").CombinedOutput()
	require.NoError(t, err, "%s", out)
	root := writeApp(t, `{"version":"2.0","customHandler":{"description":{"defaultExecutablePath":"handler"}}}`)
	buildWorker(t, root)
	cmd := exec.Command(filepath.Join(dir, "funchost"), "start", "--script-root", root, "--port", "0")
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr syncBuffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	lines := &lineBuffer{endpoint: make(chan string, 1)}
	go lines.consume(stdout)
	select {
	case <-lines.endpoint:
	case <-time.After(30 * time.Second):
		t.Fatalf("no endpoint line: %s\n%s", lines.text(), stderr.String())
	}
	workers := childrenOf(t, cmd.Process.Pid)
	require.Len(t, workers, 1, "one worker process")
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()
	require.Eventually(t, func() bool { return !alive(workers[0]) }, 10*time.Second, 20*time.Millisecond,
		"the worker (pid %d) outlived a killed host", workers[0])
}

// childrenOf lists the processes whose parent is pid, from /proc.
func childrenOf(t *testing.T, pid int) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	require.NoError(t, err)
	var out []int
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(data)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		fields := strings.Fields(s[i+1:])
		if len(fields) > 1 && fields[1] == strconv.Itoa(pid) {
			out = append(out, child)
		}
	}
	return out
}

// alive reports whether pid exists and is not a zombie.
func alive(pid int) bool {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] != 'Z'
}
