package tests

import (
	"bufio"
	"bytes"
	"context"
	"debug/elf"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestScaffoldedApp is docs/own-app.md's two commands, run as a user would
// from a funcmcp checkout and offline (GOPROXY=off): `go run ./cmd/funchost
// new DIR`, then `make -C DIR run`, the app's own Makefile target, which
// builds DIR/dist and serves it with funchost from go.mod's tool directive.
// The official Go SDK client then finds the scaffolded tool with its output
// schema and calls it.
func TestScaffoldedApp(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a new module and runs make")
	}
	if _, err := exec.LookPath("make"); err != nil {
		t.Fatalf("make is needed to run the scaffolded app's Makefile: %v", err)
	}
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "hello-tools")
	env := append(os.Environ(), "GOPROXY=off", "GOWORK=off")

	// Command 1, from the checkout.
	ctx, cancel := context.WithTimeout(t.Context(), buildTimeout)
	defer cancel()
	newCmd := exec.CommandContext(ctx, "go", "run", "./cmd/funchost", "new", dir)
	newCmd.Dir = repoRoot(t)
	newCmd.Env = env
	out, err := newCmd.CombinedOutput()
	require.NoError(t, err, "go run ./cmd/funchost new:\n%s", out)
	t.Logf("go run ./cmd/funchost new %s:\n%s", dir, out)
	next := "make -C " + dir + " run"
	require.True(t, strings.HasSuffix(string(out), "\n  "+next+"\n"), "the last line is the next command:\n%s", out)

	// Command 2, the one that line names (on a free port).
	app := startMakeRun(t, dir, env)

	// The app folder a Functions host loads.
	dist := filepath.Join(dir, "dist")
	for _, f := range []string{"host.json", "local.settings.json", "handler", "text_stats/function.json"} {
		assert.FileExists(t, filepath.Join(dist, filepath.FromSlash(f)))
	}
	declared := readOutputSchemas(t, dist)
	require.Contains(t, declared, "text_stats", "dist/text_stats/function.json declares an output schema")
	validate := compileSchema(t, declared["text_stats"])

	for _, version := range []string{"", "2025-06-18"} {
		t.Run("protocol "+cmpOr(version, "default"), func(t *testing.T) {
			cs := connectGoSDK(t, app.endpoint, version)
			ctx, cancel := context.WithTimeout(t.Context(), clientTimeout)
			defer cancel()
			assert.Equal(t, "hello-tools", cs.InitializeResult().ServerInfo.Name)

			listed, err := cs.ListTools(ctx, nil)
			require.NoError(t, err)
			require.Len(t, listed.Tools, 1)
			tool := listed.Tools[0]
			assert.Equal(t, "text_stats", tool.Name)
			assert.Equal(t, "Text statistics", tool.Title)
			require.NotNil(t, tool.OutputSchema, "tools/list advertises the output schema")
			assert.JSONEq(t, declared["text_stats"], string(toJSON(t, tool.OutputSchema)))
			assert.JSONEq(t, `{"type":"object","required":["text"],"properties":{"text":{"type":"string","description":"The text to measure."}},"additionalProperties":false}`,
				string(toJSON(t, tool.InputSchema)))

			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "text_stats", Arguments: map[string]any{"text": "one two three\nfour"}})
			require.NoError(t, err)
			require.False(t, res.IsError, "result: %s", toJSON(t, res))
			got := toJSON(t, res.StructuredContent)
			assert.JSONEq(t, `{"characters":18,"words":4,"lines":2}`, string(got))
			assert.NoError(t, validate(got), "structuredContent matches the advertised output schema")
			require.Len(t, res.Content, 1)
			text, ok := res.Content[0].(*mcp.TextContent)
			require.True(t, ok, "content: %s", toJSON(t, res.Content))
			assert.JSONEq(t, string(got), text.Text, "the text block holds the same JSON")
		})
	}
	app.stop(t)

	// The app's own tests, as its Makefile runs them.
	t.Logf("make test:\n%s", makeIn(t, dir, env, "test"))

	// The build for Azure Functions on Linux: an x86-64 ELF handler beside
	// the same function folders.
	makeIn(t, dir, append(env, "GOOS=linux", "GOARCH=amd64"), "build")
	f, err := elf.Open(filepath.Join(dist, "handler"))
	require.NoError(t, err)
	assert.Equal(t, elf.EM_X86_64, f.Machine)
	require.NoError(t, f.Close())
	assert.Equal(t, declared, readOutputSchemas(t, dist))
}

// compileSchema compiles a JSON Schema with an independent validator.
func compileSchema(t *testing.T, schema string) func(value []byte) error {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(schema))
	require.NoError(t, err)
	c := jsonschema.NewCompiler()
	require.NoError(t, c.AddResource("output.json", doc))
	s, err := c.Compile("output.json")
	require.NoError(t, err)
	return func(value []byte) error {
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader(value))
		if err != nil {
			return err
		}
		return s.Validate(v)
	}
}

// makeRun is a running `make -C DIR run PORT=0`.
type makeRun struct {
	pgid     int
	endpoint string
	console  *syncBuffer
	exited   chan struct{}
	stopped  bool
}

// startMakeRun runs `make -C dir run PORT=0` in a process group of its own
// and waits for funchost's endpoint line; make builds first, so the wait is
// bounded by buildTimeout. The group is stopped when the test ends, if the
// test has not stopped it.
func startMakeRun(t *testing.T, dir string, env []string) *makeRun {
	t.Helper()
	cmd := exec.Command("make", "-C", dir, "run", "PORT=0")
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	m := &makeRun{console: &syncBuffer{}, exited: make(chan struct{})}
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = m.console
	require.NoError(t, cmd.Start())
	m.pgid = cmd.Process.Pid
	started := time.Now()

	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(m.console, line)
			if match := endpointLine.FindStringSubmatch(line); match != nil {
				select {
				case found <- match[1]:
				default:
				}
			}
		}
		io.Copy(io.Discard, stdout)
	}()
	var waitErr error
	go func() {
		waitErr = cmd.Wait()
		close(m.exited)
	}()
	t.Cleanup(func() { m.stop(t) })

	select {
	case m.endpoint = <-found:
		t.Logf("make run served %s after %s", m.endpoint, time.Since(started).Round(time.Millisecond))
	case <-m.exited:
		t.Fatalf("make run exited before printing %q: %v\nconsole:\n%s", endpointPrefix, waitErr, m.console.String())
	case <-time.After(buildTimeout):
		t.Fatalf("make run printed no %q line within %s\nconsole:\n%s", endpointPrefix, buildTimeout, m.console.String())
	}
	return m
}

// stop sends SIGTERM to the group started (make, go tool, funchost;
// funchost stops the handler), which must be gone within stopTimeout, and
// checks that funchost said it stopped its worker.
func (m *makeRun) stop(t *testing.T) {
	if m.stopped {
		return
	}
	m.stopped = true
	_ = syscall.Kill(-m.pgid, syscall.SIGTERM)
	select {
	case <-m.exited:
	case <-time.After(stopTimeout):
		t.Errorf("make run did not exit within %s of SIGTERM; killing its group\nconsole:\n%s", stopTimeout, m.console.String())
		_ = syscall.Kill(-m.pgid, syscall.SIGKILL)
		<-m.exited
	}
	for deadline := time.Now().Add(stopTimeout); syscall.Kill(-m.pgid, 0) == nil; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Errorf("a process of make run is still running %s after SIGTERM; killing its group", stopTimeout)
			_ = syscall.Kill(-m.pgid, syscall.SIGKILL)
			break
		}
	}
	assert.Contains(t, m.console.String(), `msg="worker process stopped"`, "funchost stopped the handler")
	if t.Failed() {
		t.Logf("make run console:\n%s", m.console.String())
	}
}

// makeIn runs make in dir with the environment env, bounded, and returns
// its output.
func makeIn(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), buildTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "make", append([]string{"-C", dir}, args...)...)
	cmd.Env = env
	cmd.WaitDelay = stopTimeout
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "make %s:\n%s", strings.Join(args, " "), out)
	return string(out)
}
