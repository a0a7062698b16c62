package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/funcmcp/funcmcp/metadata"
)

// Bounds on every wait, so that a hung process fails the benchmark instead
// of hanging it.
const (
	buildTimeout = 5 * time.Minute
	startTimeout = 60 * time.Second
	stopTimeout  = 10 * time.Second
	callTimeout  = 30 * time.Second
	modulePath   = "github.com/funcmcp/funcmcp"
	endpointPath = "/runtime/webhooks/mcp"
)

// workDir holds this binary's builds and app folders; removed at exit.
var workDir string

// built are the binaries the benchmarks run, built once per test binary.
var built struct {
	once     sync.Once
	err      error
	funchost string // cmd/funchost
	handler  string // function-app-sample
	sdk      string // tests/bench/sdkserver
	mcpgo    string // tests/bench/mcpgoserver, a module of its own
	app      string // the sample app folder: host.json + function folders
}

// binaries builds funchost, the sample worker, the SDK server and the
// mcp-go server once.
func binaries(tb testing.TB) {
	tb.Helper()
	built.once.Do(func() {
		bin := filepath.Join(workDir, "bin")
		built.funchost = filepath.Join(bin, "funchost")
		built.handler = filepath.Join(bin, "handler")
		built.sdk = filepath.Join(bin, "sdkserver")
		built.mcpgo = filepath.Join(bin, "mcpgoserver")
		for out, pkg := range map[string]string{
			built.funchost: "/cmd/funchost",
			built.handler:  "/function-app-sample",
			built.sdk:      "/tests/bench/sdkserver",
		} {
			if built.err = goBuild(out, modulePath+pkg); built.err != nil {
				return
			}
		}
		if built.err = buildModule(built.mcpgo, "mcpgoserver"); built.err != nil {
			return
		}
		built.app, built.err = sampleApp()
	})
	if built.err != nil {
		tb.Fatal(built.err)
	}
}

func goBuild(out, pkg string) error {
	ctx, cancel := context.WithTimeout(context.Background(), buildTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, pkg)
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("building %s: %w\n%s", pkg, err, buf.String())
	}
	return nil
}

// sampleApp makes the sample app folder as `make build` does, with the
// repository's host.json pointing at the built handler.
func sampleApp() (string, error) {
	dir := filepath.Join(workDir, "sample")
	if err := writeAppFolder(dir); err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), buildTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, built.handler, "emit-metadata", dir)
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("emit-metadata: %w\n%s", err, buf.String())
	}
	return dir, nil
}

// writeAppFolder creates dir with the repository's host.json and a link to
// the built sample handler.
func writeAppFolder(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	hostJSON, err := os.ReadFile(filepath.Join("..", "..", "host.json"))
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "host.json"), hostJSON, 0o644); err != nil {
		return err
	}
	return os.Symlink(built.handler, filepath.Join(dir, "handler"))
}

// proc is a process a benchmark started, in a process group of its own.
type proc struct {
	cmd    *exec.Cmd
	out    *lineScanner
	exited chan struct{}
	err    error
}

// lineScanner keeps a process's output and reports the first match of each
// pattern asked for.
type lineScanner struct {
	mu    sync.Mutex
	lines []string
	times []time.Time // when each line was read
	wait  []*lineWait
}

type lineWait struct {
	re *regexp.Regexp
	ch chan []string
}

func (s *lineScanner) add(line string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.lines) < 1000 {
		s.lines = append(s.lines, line)
		s.times = append(s.times, time.Now())
	}
	kept := s.wait[:0]
	for _, w := range s.wait {
		if m := w.re.FindStringSubmatch(line); m != nil {
			w.ch <- m
			continue
		}
		kept = append(kept, w)
	}
	s.wait = kept
}

// expect registers a pattern before the process starts.
func (s *lineScanner) expect(re *regexp.Regexp) <-chan []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch := make(chan []string, 1)
	s.wait = append(s.wait, &lineWait{re: re, ch: ch})
	return ch
}

// seen returns when the first line matching re was read (false when none
// was).
func (s *lineScanner) seen(re *regexp.Regexp) (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, l := range s.lines {
		if re.MatchString(l) {
			return s.times[i], true
		}
	}
	return time.Time{}, false
}

func (s *lineScanner) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.lines, "\n")
}

// startProc starts bin with args; both output streams feed one scanner,
// drained until the process exits (funchost logs every call).
func startProc(bin string, args []string, env []string, patterns ...*regexp.Regexp) (*proc, []<-chan []string, error) {
	return startProcIn("", bin, args, env, patterns...)
}

// startProcIn is startProc in the folder dir ("": the benchmark's).
func startProcIn(dir, bin string, args []string, env []string, patterns ...*regexp.Regexp) (*proc, []<-chan []string, error) {
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Env = env
	p := &proc{cmd: cmd, out: &lineScanner{}, exited: make(chan struct{})}
	waits := make([]<-chan []string, len(patterns))
	for i, re := range patterns {
		waits[i] = p.out.expect(re)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	var readers sync.WaitGroup
	for _, r := range []io.Reader{stdout, stderr} {
		readers.Go(func() {
			sc := bufio.NewScanner(r)
			sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
			for sc.Scan() {
				p.out.add(sc.Text())
			}
			_, _ = io.Copy(io.Discard, r)
		})
	}
	go func() {
		readers.Wait()
		p.err = cmd.Wait()
		close(p.exited)
	}()
	return p, waits, nil
}

// await waits for a line, failing when the process exits or time runs out.
func (p *proc) await(ch <-chan []string, what string) ([]string, error) {
	select {
	case m := <-ch:
		return m, nil
	case <-p.exited:
		return nil, fmt.Errorf("%s exited before %s: %v\n%s", p.cmd.Path, what, p.err, p.out)
	case <-time.After(startTimeout):
		return nil, fmt.Errorf("%s: no %s within %s\n%s", p.cmd.Path, what, startTimeout, p.out)
	}
}

func (p *proc) pid() int { return p.cmd.Process.Pid }

// stop sends SIGTERM to the process and, after stopTimeout, SIGKILL to its
// group; it returns once the process has exited.
func (p *proc) stop() {
	if p == nil {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(stopTimeout):
		_ = syscall.Kill(-p.pid(), syscall.SIGKILL)
		<-p.exited
	}
	// Whatever it started (the worker) is in its group: make sure it is gone.
	deadline := time.Now().Add(stopTimeout)
	for syscall.Kill(-p.pid(), 0) == nil && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	_ = syscall.Kill(-p.pid(), syscall.SIGKILL)
}

var (
	endpointLine = regexp.MustCompile(`MCP server endpoint: (http://127\.0\.0\.1:\d+)` + regexp.QuoteMeta(endpointPath))
	workerLine   = regexp.MustCompile(`worker process started.* pid=(\d+) .*port=(\d+)`)
	sdkLine      = regexp.MustCompile(`listening on (http://127\.0\.0\.1:\d+)`)
)

// hostProc is a running funchost and the worker it started.
type hostProc struct {
	*proc
	base string // http://127.0.0.1:port
	// workerPID is the process funchost started for the worker: on Linux
	// the reaper, whose child runs the worker (see workerPIDs).
	workerPID int
	workerURL string
}

// serverPIDs are funchost and every process under it: the reaper and the
// worker (all the processes of funcmcp's side).
func (h *hostProc) serverPIDs() []int { return append([]int{h.pid()}, descendants(h.pid())...) }

// workerPIDs are the worker's processes: the one funchost started and
// everything under it.
func (h *hostProc) workerPIDs() []int { return append([]int{h.workerPID}, descendants(h.workerPID)...) }

// descendants are the processes under pid (children of any of its threads,
// recursively), from /proc.
func descendants(pid int) []int {
	var out []int
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	for _, f := range tasks {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, field := range strings.Fields(string(data)) {
			if child, err := strconv.Atoi(field); err == nil {
				out = append(out, child)
				out = append(out, descendants(child)...)
			}
		}
	}
	return out
}

func (h *hostProc) endpoint() string { return h.base + endpointPath }

// startFunchost runs `funchost start` on app and waits for its endpoint.
func startFunchost(app string) (*hostProc, error) { return startFunchostEnv(app, os.Environ()) }

// startFunchostEnv is startFunchost with the environment env.
func startFunchostEnv(app string, env []string) (*hostProc, error) {
	p, waits, err := startProc(built.funchost, []string{"start", "--script-root", app, "--port", "0"}, env, endpointLine, workerLine)
	if err != nil {
		return nil, err
	}
	ep, err := p.await(waits[0], "its endpoint line")
	if err != nil {
		p.stop()
		return nil, err
	}
	w, err := p.await(waits[1], "its worker line")
	if err != nil {
		p.stop()
		return nil, err
	}
	pid, _ := strconv.Atoi(w[1])
	return &hostProc{proc: p, base: ep[1], workerPID: pid, workerURL: "http://127.0.0.1:" + w[2]}, nil
}

// sdkProc is a running SDK baseline server.
type sdkProc struct {
	*proc
	base string
}

func (s *sdkProc) endpoint() string { return s.base + "/mcp" }

// startSDK runs the SDK baseline server with the tools of toolsFile.
func startSDK(toolsFile string, stateless bool) (*sdkProc, error) {
	args := []string{"-tools", toolsFile}
	if stateless {
		args = append(args, "-stateless")
	}
	p, waits, err := startProc(built.sdk, args, os.Environ(), sdkLine)
	if err != nil {
		return nil, err
	}
	m, err := p.await(waits[0], "its listening line")
	if err != nil {
		p.stop()
		return nil, err
	}
	return &sdkProc{proc: p, base: m[1]}, nil
}

// workerProc is the sample worker run on its own (no host), for the
// in-process host measurements.
func startWorker(port int) (*proc, string, error) {
	env := append(os.Environ(), metadata.EnvCustomHandlerPort+"="+strconv.Itoa(port))
	p, waits, err := startProc(built.handler, nil, env, regexp.MustCompile(`serving \d+ tool\(s\)[^\n]* on (127\.0\.0\.1:\d+)`))
	if err != nil {
		return nil, "", err
	}
	m, err := p.await(waits[0], "its serving line")
	if err != nil {
		p.stop()
		return nil, "", err
	}
	return p, "http://" + m[1], nil
}

// cpuTime is the CPU time a process has used so far: the sum of its
// threads' run time from /proc/<pid>/task/*/schedstat (nanoseconds), or
// utime+stime from /proc/<pid>/stat (clock ticks) when schedstat is missing.
func cpuTime(pid int) time.Duration {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	var sum time.Duration
	found := false
	for _, f := range tasks {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		fields := strings.Fields(string(data))
		if len(fields) == 0 {
			continue
		}
		ns, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			continue
		}
		sum += time.Duration(ns)
		found = true
	}
	if found {
		return sum
	}
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// Fields after the command name, which is in parentheses.
	rest := string(data)
	if i := strings.LastIndexByte(rest, ')'); i >= 0 {
		rest = rest[i+1:]
	}
	f := strings.Fields(rest)
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	const ticksPerSecond = 100 // USER_HZ on Linux
	return time.Duration(utime+stime) * time.Second / ticksPerSecond
}

// switches is the number of context switches of a process's threads so
// far, voluntary (a thread sleeps: waits for the network, a lock, work)
// and not, from /proc/<pid>/task/*/status.
func switches(pid int) int64 {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/status", pid))
	var sum int64
	for _, f := range tasks {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for line := range strings.Lines(string(data)) {
			k, v, ok := strings.Cut(line, ":")
			if !ok || (k != "voluntary_ctxt_switches" && k != "nonvoluntary_ctxt_switches") {
				continue
			}
			if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
				sum += n
			}
		}
	}
	return sum
}

// sumOf sums f over pids.
func sumOf[T time.Duration | int64](pids []int, f func(int) T) T {
	var sum T
	for _, p := range pids {
		sum += f(p)
	}
	return sum
}

// switchesOf sums switches over pids.
func switchesOf(pids []int) int64 { return sumOf(pids, switches) }

// cpuOf sums cpuTime over pids.
func cpuOf(pids []int) time.Duration { return sumOf(pids, cpuTime) }

// rssOf is the summed resident set (VmRSS) of pids, in bytes; a process
// that is gone counts 0.
func rssOf(pids []int) int64 {
	var sum int64
	for _, pid := range pids {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		if err != nil {
			continue
		}
		for line := range strings.SplitSeq(string(data), "\n") {
			if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
				f := strings.Fields(rest) // "12345 kB"
				if len(f) > 0 {
					kb, _ := strconv.ParseInt(f[0], 10, 64)
					sum += kb << 10
				}
				break
			}
		}
	}
	return sum
}

// pssOf is the summed proportional set size of pids, in bytes: the Pss
// line of /proc/<pid>/smaps_rollup, where a page mapped by n processes
// counts 1/n in each (so the binary's pages that funchost and the reaper
// share count once in the sum); a process that is gone counts 0.
func pssOf(pids []int) int64 { return sumOf(pids, pssOne) }

func pssOne(pid int) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "Pss:"); ok {
			f := strings.Fields(rest) // "12345 kB"
			if len(f) > 0 {
				kb, _ := strconv.ParseInt(f[0], 10, 64)
				return kb << 10
			}
		}
	}
	return 0
}

// loadAvg is the 1-minute load average, as uptime prints it.
func loadAvg() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	if f := strings.Fields(string(data)); len(f) > 0 {
		return f[0]
	}
	return "?"
}

// writeJSON writes v to a file under workDir and returns its path.
func writeJSON(name string, v any) (string, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	path := filepath.Join(workDir, name)
	return path, os.WriteFile(path, data, 0o644)
}
