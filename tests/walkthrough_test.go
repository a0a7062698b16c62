package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/internal/testutil"
)

// walkthroughDoc is what the test reads of docs/walkthrough.md: the
// commands of its sh blocks (a line ending in a backslash joined with the
// next) and its text blocks, the output a command prints, in order.
type walkthroughDoc struct {
	commands []string
	outputs  []string
}

func readWalkthrough(t *testing.T) walkthroughDoc {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", "walkthrough.md"))
	require.NoError(t, err)
	blocks, err := codeBlocks("docs/walkthrough.md", strings.Split(string(data), "\n"))
	require.NoError(t, err)
	var doc walkthroughDoc
	for _, b := range blocks {
		switch b.lang {
		case "sh":
			cmd := ""
			for _, line := range strings.Split(b.content, "\n") {
				if rest, ok := strings.CutSuffix(line, `\`); ok {
					cmd += rest
					continue
				}
				if cmd += line; strings.TrimSpace(cmd) != "" {
					doc.commands = append(doc.commands, strings.TrimSpace(cmd))
				}
				cmd = ""
			}
		case "text":
			doc.outputs = append(doc.outputs, b.content)
		}
	}
	return doc
}

// walkStep is what the test does with one command of the walkthrough.
type walkStep struct {
	has    string // a part of the command, so that the table follows the page
	kind   string // "run", "export", "serve" (a server, in the background), "listen" (curl -N, in the background), "azurite"
	output int    // the text block the command's output holds, -1 for none
}

// walkthroughSteps are the commands of docs/walkthrough.md, in order. A
// listener's output is checked after the command that follows it (the call
// whose change it hears). "azurite" stops the servers and starts Azurite
// itself, on ports of its own, instead of the page's command.
var walkthroughSteps = []walkStep{
	{"go run ./cmd/funchost new ../todo", "run", 0},
	{"cp examples/walkthrough/main.go examples/walkthrough/main_test.go ../todo/", "run", -1},
	{"make -C ../todo run", "serve", 1},
	{`"name":"add_todo","arguments":{"text":"water the plants"}`, "run", 2},
	{`"name":"add_todo","arguments":{}`, "run", 3},
	{`"name":"clear_todos"`, "run", 4},
	{"export FUNCMCP_AUTH_ISSUER=$ISSUER", "export", -1},
	{"export FUNCMCP_AUTH_AUDIENCE=http://127.0.0.1:7071/runtime/webhooks/mcp", "export", -1},
	{"make -C ../todo run", "serve", -1},
	{`curl -si`, "run", 5},
	{`"id":5,"method":"tools/call","params":{"name":"add_todo"`, "run", -1},
	{`"id":6,"method":"tools/call","params":{"name":"clear_todos"`, "run", 6},
	{"cp examples/walkthrough/host.json ../todo/", "run", -1},
	{"export OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318", "export", -1},
	{"make -C ../todo run", "serve", -1},
	{`"id":7,`, "run", 7},
	{"curl -sN http://127.0.0.1:7071/", "listen", 9},
	{`"id":8,`, "run", -1},
	{"azurite.js", "azurite", -1},
	{"export FUNCMCP_BACKPLANE=azurequeues", "export", -1},
	{"export WEBSITE_AUTH_ENCRYPTION_KEY=$(openssl rand -hex 32)", "export", -1},
	{"make -C ../todo build", "run", -1},
	{"go tool funchost start --script-root dist --port 7071", "serve", -1},
	{"go tool funchost start --script-root dist --port 7072", "serve", 10},
	{"curl -sN http://127.0.0.1:7072/", "listen", 11},
	{`"id":9,`, "run", -1},
}

// walkthroughSpans is the text block of the trace step 4 shows.
const walkthroughSpans = 8

// TestWalkthrough runs docs/walkthrough.md as a reader would, offline
// (GOPROXY=off): funchost new, the example's files copied in, make run, the
// curl calls of each step, access tokens from an OpenID provider on
// 127.0.0.1 (ISSUER and TOKEN, as the page asks the reader to set them),
// telemetry to an OTLP receiver standing in for the trace viewer, listeners
// that hear the changes, and two instances on Azurite's queues. Each
// command's output must hold the lines of the text block the page shows for
// it (JSON compared as JSON), and the trace the page draws must arrive, each
// span the child of the one above it. The ports 7071, 7072 and 4318 of the
// page become free ports; ../todo a temporary folder.
func TestWalkthrough(t *testing.T) {
	for _, tool := range []string{"make", "curl", "openssl", "bash"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is needed to run the walkthrough's commands: %v", tool, err)
		}
	}
	t.Parallel()
	doc := readWalkthrough(t)
	require.Len(t, doc.commands, len(walkthroughSteps), "the commands of docs/walkthrough.md:\n%s", strings.Join(doc.commands, "\n"))
	for i, step := range walkthroughSteps {
		require.Contains(t, doc.commands[i], step.has, "command %d of docs/walkthrough.md", i+1)
	}

	root := repoRoot(t)
	dir := filepath.Join(t.TempDir(), "todo")
	p1, p2 := testutil.FreePort(t), testutil.FreePort(t)
	otlp := startOTLPReceiver(t)
	op := testutil.StartOIDC(t)
	endpoint := fmt.Sprintf("http://127.0.0.1:%d/runtime/webhooks/mcp", p1)
	token := op.Token(t, testutil.Claims(op.URL, endpoint, "alice", "Todo.Admin"))
	replacer := strings.NewReplacer(
		"../todo", dir,
		"127.0.0.1:7071", "127.0.0.1:"+strconv.Itoa(p1),
		"127.0.0.1:7072", "127.0.0.1:"+strconv.Itoa(p2),
		"--port 7071", "--port "+strconv.Itoa(p1),
		"--port 7072", "--port "+strconv.Itoa(p2),
		"http://127.0.0.1:4318", otlp.url,
	)
	env := append(os.Environ(), "GOPROXY=off", "GOWORK=off", "ISSUER="+op.URL, "TOKEN="+token,
		"OTEL_BSP_SCHEDULE_DELAY=200") // spans sooner than the default 5 s
	shell := func(line string) *exec.Cmd {
		cmd := exec.Command("bash", "-c", line)
		cmd.Dir = root
		cmd.Env = env
		return cmd
	}

	servers := map[int]*makeRun{}
	stopServers := func() {
		for port, s := range servers {
			s.stop(t)
			delete(servers, port)
		}
	}
	var listener *listenCmd
	for i, step := range walkthroughSteps {
		line := replacer.Replace(doc.commands[i])
		t.Logf("command %d: %s", i+1, doc.commands[i])
		var out string
		switch step.kind {
		case "run":
			ctx, cancel := context.WithTimeout(t.Context(), buildTimeout)
			var err error
			out, err = runBounded(ctx, shell(line))
			cancel()
			require.NoError(t, err, "%s:\n%s", line, out)
		case "export":
			name, _, _ := strings.Cut(strings.TrimPrefix(line, "export "), "=")
			value, err := shell(line + `; printf '%s' "$` + name + `"`).Output()
			require.NoError(t, err, line)
			env = append(env, name+"="+string(value))
		case "serve":
			port := p1
			if strings.Contains(line, "--port "+strconv.Itoa(p2)) {
				port = p2
			}
			if s := servers[port]; s != nil {
				s.stop(t) // Ctrl-C before the next start
				delete(servers, port)
			}
			if strings.HasPrefix(line, "make ") {
				line += " PORT=" + strconv.Itoa(port)
			}
			s := startMakeRun(t, shell(strings.TrimSuffix(line, " &")))
			require.Equal(t, fmt.Sprintf("http://127.0.0.1:%d/runtime/webhooks/mcp", port), s.endpoint)
			servers[port] = s
			out = s.console.String()
		case "listen":
			listener = startListen(t, shell(line))
			continue // its output is checked after the next command
		case "azurite":
			stopServers()
			az := testutil.StartAzurite(t, root)
			env = append(env, "AzureWebJobsStorage="+az.ConnectionString())
		}
		if step.output >= 0 {
			want := replacer.Replace(doc.outputs[step.output])
			if i == 0 { // funchost new names the default port, whatever the test's
				want = strings.ReplaceAll(doc.outputs[step.output], "../todo", dir)
			}
			expectOutput(t, line, want, func() string { return out }, 0)
		}
		if listener != nil && step.kind == "run" {
			l := listener
			expectOutput(t, "the listener", replacer.Replace(doc.outputs[walkthroughSteps[i-1].output]), l.output, clientTimeout)
			l.stop(t)
			listener = nil
		}
		if strings.Contains(line, `"id":7,`) {
			expectTrace(t, otlp, doc.outputs[walkthroughSpans])
		}
	}
	stopServers()
}

// expectOutput waits (up to wait) until every line of want is in what
// output returns: a line of JSON (or an SSE "data: " line) equal as JSON to
// one of its lines, any other line a part of one of its lines.
func expectOutput(t *testing.T, what, want string, output func() string, wait time.Duration) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for {
		missing := missingLines(want, output())
		if len(missing) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the output of %s lacks the lines the walkthrough shows:\n%s\noutput:\n%s", what, strings.Join(missing, "\n"), output())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// missingLines returns the lines of want that got lacks.
func missingLines(want, got string) []string {
	gotLines := strings.Split(got, "\n")
	var missing []string
	for _, w := range strings.Split(want, "\n") {
		w = strings.TrimSpace(w)
		if w == "" {
			continue
		}
		found := false
		for _, g := range gotLines {
			if sameLine(w, strings.TrimSpace(g)) {
				found = true
				break
			}
		}
		if !found {
			missing = append(missing, w)
		}
	}
	return missing
}

// sameLine compares a line the page shows with one printed.
func sameLine(want, got string) bool {
	wantJSON, wantData := strings.CutPrefix(want, "data: ")
	gotJSON, gotData := strings.CutPrefix(got, "data: ")
	if strings.HasPrefix(wantJSON, "{") && wantData == gotData {
		var w, g any
		return json.Unmarshal([]byte(wantJSON), &w) == nil && json.Unmarshal([]byte(gotJSON), &g) == nil && reflect.DeepEqual(w, g)
	}
	return strings.Contains(got, want)
}

// spanLine is a line of the page's trace: the span's name, then two
// spaces or more.
var spanLine = regexp.MustCompile(`^(\S+(?: \S+)*)\s{2,}`)

// expectTrace waits until the trace the page draws arrives: the spans its
// lines name, in one trace, each the parent of the next.
func expectTrace(t *testing.T, otlp *otlpReceiver, drawn string) {
	t.Helper()
	var names []string
	for _, line := range strings.Split(drawn, "\n") {
		if m := spanLine.FindStringSubmatch(line); m != nil {
			names = append(names, m[1])
		}
	}
	require.Len(t, names, 4, "the trace the walkthrough draws:\n%s", drawn)
	otlp.waitFor(t, "the trace of "+strings.Join(names, " → "), func(spans []recvSpan, _ map[string]string) bool {
		for _, s := range spans {
			if s.name == names[0] {
				if _, ok := chainOf(spans, s.traceID, names...); ok {
					return true
				}
			}
		}
		return false
	})
}

// listenCmd is a curl -N listener running in a process group of its own.
type listenCmd struct {
	cmd  *exec.Cmd
	out  *syncBuffer
	done chan struct{}
}

// startListen starts cmd (curl -sN …) and waits until it printed its
// first event, the acknowledgement, so that a change made next is heard.
func startListen(t *testing.T, cmd *exec.Cmd) *listenCmd {
	t.Helper()
	l := &listenCmd{cmd: cmd, out: &syncBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = l.out, l.out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(t, cmd.Start())
	go func() { _ = cmd.Wait(); close(l.done) }()
	t.Cleanup(func() { l.stop(t) })
	expectOutput(t, "the listener's start", "notifications/subscriptions/acknowledged", l.output, clientTimeout)
	return l
}

func (l *listenCmd) output() string { return l.out.String() }

// stop ends the listener (Ctrl-C) and waits for it.
func (l *listenCmd) stop(t *testing.T) {
	select {
	case <-l.done:
		return
	default:
	}
	_ = syscall.Kill(-l.cmd.Process.Pid, syscall.SIGINT)
	select {
	case <-l.done:
	case <-time.After(stopTimeout):
		_ = syscall.Kill(-l.cmd.Process.Pid, syscall.SIGKILL)
		<-l.done
		assert.Fail(t, "curl did not stop on SIGINT")
	}
}
