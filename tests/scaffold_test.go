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

// TestScaffoldedApp runs the commands of docs/own-app.md as a user would,
// from a funcmcp checkout and offline (GOPROXY=off): `go run ./cmd/funchost
// new DIR`, then `make -C DIR run`, the app's own Makefile target, which
// builds DIR/dist and serves it with funchost from go.mod's tool directive.
// The official Go SDK client then finds the scaffolded tool with its output
// schema and calls it. Then the app's make test, whose
// TestTextStatsThroughMCP calls the tool through the MCP front that
// funcmcptest serves in the test, and its build for Linux x86-64.
func TestScaffoldedApp(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Fatalf("make is needed to run the scaffolded app's Makefile: %v", err)
	}
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "hello-tools")
	env := append(os.Environ(), "GOPROXY=off", "GOWORK=off")

	doc := readOwnAppDoc(t)
	require.Equal(t, []string{
		"go run ./cmd/funchost new ../hello-tools",
		"make -C ../hello-tools run",
		"make -C ../hello-tools test",
		"go get github.com/funcmcp/funcmcp@latest", // not run: funcmcp is on no proxy reachable here
		"GOOS=linux GOARCH=amd64 make -C ../hello-tools build",
	}, doc.commands, "the commands of docs/own-app.md are the ones this test runs")
	command := func(line string) *exec.Cmd {
		cmdEnv, args := docCommand(line, dir)
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir = repoRoot(t)
		cmd.Env = append(env, cmdEnv...)
		return cmd
	}

	// Command 1, from the checkout.
	ctx, cancel := context.WithTimeout(t.Context(), buildTimeout)
	defer cancel()
	newCmd := command(doc.commands[0])
	out, err := runBounded(ctx, newCmd)
	require.NoError(t, err, "%s:\n%s", doc.commands[0], out)
	t.Logf("%s:\n%s", newCmd, out)
	next := "make -C " + dir + " run"
	require.True(t, strings.HasSuffix(out, "\n  "+next+"\n"), "the last line is the next command:\n%s", out)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var written []string
	for _, e := range entries {
		written = append(written, e.Name())
	}
	assert.ElementsMatch(t, doc.files, written, "docs/own-app.md lists the files new writes")

	// Command 2, the one that line names (on a free port).
	runCmd := command(doc.commands[1])
	runCmd.Args = append(runCmd.Args, "PORT=0")
	app := startMakeRun(t, runCmd)

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

	// The app's own tests, as its Makefile runs them, then the build for
	// Azure Functions on Linux: an x86-64 ELF handler beside the same
	// function folders.
	for _, line := range doc.commands[2:] {
		if strings.HasPrefix(line, "go get") {
			continue
		}
		ctx, cancel := context.WithTimeout(t.Context(), buildTimeout)
		out, err := runBounded(ctx, command(line))
		cancel()
		require.NoError(t, err, "%s:\n%s", line, out)
		t.Logf("%s:\n%s", line, out)
	}
	// The app's own test calls its tool through the MCP front, served in
	// the test by funcmcptest.
	ctx, cancel = context.WithTimeout(t.Context(), buildTimeout)
	defer cancel()
	mcpTest := exec.Command("go", "test", "-count=1", "-v", "-run", "TestTextStatsThroughMCP", ".")
	mcpTest.Dir, mcpTest.Env = dir, env
	out, err = runBounded(ctx, mcpTest)
	require.NoError(t, err, "%s", out)
	assert.Contains(t, out, "--- PASS: TestTextStatsThroughMCP", "the scaffold's test calls text_stats through MCP")

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

// startMakeRun starts cmd (make -C DIR run PORT=0) in a process group of
// its own and waits for funchost's endpoint line; make builds first, so the
// wait is bounded by buildTimeout. The group is stopped when the test ends,
// if the test has not stopped it.
func startMakeRun(t *testing.T, cmd *exec.Cmd) *makeRun {
	t.Helper()
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

// runBounded runs cmd until it exits or ctx is done, in a process group of
// its own, which is killed (by the pid started) when ctx is done. It
// returns the combined output.
func runBounded(ctx context.Context, cmd *exec.Cmd) (string, error) {
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return "", err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return out.String(), err
	case <-ctx.Done():
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		return out.String(), fmt.Errorf("%s did not finish: %w", cmd, ctx.Err())
	}
}

// ownAppDoc is what the test reads of docs/own-app.md.
type ownAppDoc struct {
	commands []string // the lines of its sh blocks
	files    []string // the first column of the table of files new writes
}

func readOwnAppDoc(t *testing.T) ownAppDoc {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", "own-app.md"))
	require.NoError(t, err)
	var doc ownAppDoc
	inSh, inFiles := false, false
	for _, line := range strings.Split(string(data), "\n") {
		switch {
		case line == "```sh":
			inSh = true
		case strings.HasPrefix(line, "```"):
			inSh = false
		case inSh && strings.TrimSpace(line) != "":
			doc.commands = append(doc.commands, strings.TrimSpace(line))
		case strings.HasPrefix(line, "## "):
			inFiles = line == "## What `new` writes"
		case inFiles && strings.HasPrefix(line, "| `"):
			name, _, _ := strings.Cut(strings.TrimPrefix(line, "| `"), "`")
			doc.files = append(doc.files, name)
		}
	}
	return doc
}

// docCommand turns a command line of the docs into environment settings
// (its leading NAME=value words) and arguments, with the app folder
// ../hello-tools replaced by dir.
func docCommand(line, dir string) (env, args []string) {
	for _, word := range strings.Fields(line) {
		if len(args) == 0 && strings.Contains(word, "=") {
			env = append(env, word)
			continue
		}
		if word == "../hello-tools" {
			word = dir
		}
		args = append(args, word)
	}
	return env, args
}
