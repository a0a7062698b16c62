package supervise

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/funcmcp/funcmcp/host/internal/config"
	"github.com/funcmcp/funcmcp/host/internal/ids"
	"github.com/funcmcp/funcmcp/metadata"
)

// readinessPolls is how the host polls GET / while the worker starts, as
// the Functions host does (every 25 ms), only sooner at first: a Go worker
// listens within tens of milliseconds, which the first call waits for. Each
// whole line the worker writes brings a poll at once (a worker says when it
// listens: funcmcp's "serving … on 127.0.0.1:port"), no sooner than minGap
// after the last one; the timed polls back off from 2 ms to 10 ms, because
// a refused connection is not free: at 2 ms apart they took a quarter of a
// core, on a machine the starting worker needs.
var readinessPolls = pollSchedule{
	first: 2 * time.Millisecond, max: 10 * time.Millisecond, quickFor: time.Second,
	slow:   25 * time.Millisecond,
	minGap: time.Millisecond,
}

// pollSchedule says when the readiness wait polls again after a refused
// poll.
type pollSchedule struct {
	first, max time.Duration // the first wait, doubled after each poll up to max,
	quickFor   time.Duration // for this long after the wait began;
	slow       time.Duration // then every slow.
	minGap     time.Duration // a line of output polls no sooner than this after a poll
}

// next is the wait after wait, at since into the readiness wait.
func (s pollSchedule) next(wait, since time.Duration) time.Duration {
	if since >= s.quickFor {
		return s.slow
	}
	return min(2*wait, s.max)
}

// Spec is everything needed to start the worker.
type Spec struct {
	// Root is the script root, the worker's FUNCTIONS_APP_ROOT_PATH.
	Root string
	// Worker is host.json's customHandler description.
	Worker *config.Worker
	// Values are the local.settings.json Values, added to the environment.
	Values []config.Setting
	// Environ is the base environment; nil means os.Environ().
	Environ []string
	// Hidden names variables the worker never gets, from Environ or Values:
	// the host's own secrets (its function keys), which the Functions host
	// does not give a custom handler either.
	Hidden []string
	// Procs is the GOMAXPROCS the worker gets when neither Environ nor
	// Values set one; 0 adds none.
	Procs int
	// HostPort is the port the host itself listens on when it is set
	// (not 0): the worker is never given it.
	HostPort int
}

// worker is a started worker process, as the supervisor sees it (a
// *process, or a fake in tests).
type worker interface {
	// pid, url and describe (path and port) name it in messages.
	pid() int
	url() string
	describe() []any
	// exited is closed once it has exited and been reaped.
	exited() <-chan struct{}
	// exitCode and exitError say how it ended, once exited is closed.
	exitCode() int
	exitError() error
	// waitReady waits until it answers GET / (see waitReady).
	waitReady(ctx context.Context, timeout time.Duration) error
	// stop ends its process group: SIGTERM, then a kill after grace.
	stop(grace time.Duration) error
	// killByProbe kills its group at once (it stopped answering);
	// killedByProbe reports whether that happened.
	killByProbe()
	killedByProbe() bool
}

// process is the custom-handler process the host started (on Linux, the
// reaper that runs it: see reaper_linux.go).
type process struct {
	cmd    *exec.Cmd
	path   string // the worker's executable
	port   int
	base   string // http://127.0.0.1:port
	done   chan struct{}
	err    error // the Wait error, set before done is closed
	stdout *lineWriter
	stderr *lineWriter
	// byProbe is set when the liveness probe killed the worker.
	byProbe atomic.Bool
	// lines has a value once the worker wrote a whole line (stdout or
	// stderr): the readiness wait then polls at once.
	lines chan struct{}
	// control is the reaper's control pipe (nil without a reaper): closing
	// it, or the host's death, ends the worker and everything it started.
	control     *os.File
	controlOnce sync.Once
}

// closeControl asks the reaper to end the worker's process tree.
func (w *process) closeControl() {
	if w.control != nil {
		w.controlOnce.Do(func() { _ = w.control.Close() })
	}
}

// freePort asks the kernel for a free loopback port other than avoid (the
// host's own) and tells reserve before it lets the port go. The
// custom-handler protocol tells the worker its port
// (FUNCTIONS_CUSTOMHANDLER_PORT) and the worker listens itself, so the port
// is released here and taken by the worker: another process could take it
// between the two, and the worker then fails to start (and is started again
// on another port). The host itself must not take it (see
// Supervisor.WorkerPort): its readiness probe would then reach the host.
func freePort(avoid int, reserve func(int)) (int, error) {
	return freePortFrom(func() (net.Listener, error) { return net.Listen("tcp", "127.0.0.1:0") }, avoid, reserve)
}

// freePortFrom is freePort with the listener it asks for the port.
func freePortFrom(listen func() (net.Listener, error), avoid int, reserve func(int)) (int, error) {
	for range 8 {
		ln, err := listen()
		if err != nil {
			return 0, err
		}
		port := ln.Addr().(*net.TCPAddr).Port
		if port == avoid {
			_ = ln.Close()
			continue
		}
		reserve(port)
		_ = ln.Close()
		return port, nil
	}
	return 0, fmt.Errorf("the kernel gave the host's own port %d eight times", avoid)
}

// command builds the worker's command line and environment for port.
func (s *Spec) command(port int) (*exec.Cmd, error) {
	portText := strconv.Itoa(port)
	workerID := ids.GUID()
	added := []config.Setting{
		{Key: metadata.EnvCustomHandlerPort, Value: portText},
		{Key: metadata.EnvHTTPWorkerPort, Value: portText},
		{Key: metadata.EnvWorkerID, Value: workerID},
		{Key: metadata.EnvHTTPWorkerID, Value: workerID},
		{Key: metadata.EnvAppRootPath, Value: s.Root},
	}
	lookup := func(name string) (string, bool) {
		for _, v := range added {
			if v.Key == name {
				return v.Value, true
			}
		}
		for _, v := range s.Values {
			if v.Key == name {
				return v.Value, true
			}
		}
		return os.LookupEnv(name)
	}
	base := config.ResolveDir(s.Root, config.ExpandVars(s.Worker.WorkerDirectory, lookup))
	path := config.ExpandVars(s.Worker.ExecutablePath, lookup)
	exe := config.ResolveExecutable(base, path)
	args := make([]string, len(s.Worker.Arguments))
	for i, a := range s.Worker.Arguments {
		args[i] = config.ExpandVars(a, lookup)
	}
	cmd := exec.Command(exe, args...)
	notFound := func(err error) error {
		return &config.ExecutableNotFoundError{Path: path, Dir: base, Root: s.Root, Err: err}
	}
	if cmd.Err != nil {
		if errors.Is(cmd.Err, exec.ErrNotFound) {
			return nil, notFound(cmd.Err)
		}
		return nil, fmt.Errorf("finding the worker executable %q: %w", s.Worker.ExecutablePath, cmd.Err)
	}
	cmd.Dir = config.ResolveDir(s.Root, config.ExpandVars(s.Worker.WorkingDirectory, lookup))
	// A path with a folder in it is not looked up: said here, its absence
	// names host.json's key and the app folder, not a fork/exec failure
	// (which, started through the reaper, would be an exit status).
	if full := cmd.Path; full != "" {
		if !filepath.IsAbs(full) {
			full = filepath.Join(cmd.Dir, full)
		}
		if _, err := os.Stat(full); errors.Is(err, fs.ErrNotExist) {
			return nil, notFound(err)
		}
	}
	env := s.Environ
	if env == nil {
		env = os.Environ()
	}
	env = slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		return slices.Contains(s.Hidden, name)
	})
	if s.Procs > 0 && !setsProcs(env, s.Values) {
		env = append(env, "GOMAXPROCS="+strconv.Itoa(s.Procs))
	}
	for _, v := range s.Values {
		if !slices.Contains(s.Hidden, v.Key) {
			env = append(env, v.Key+"="+v.Value)
		}
	}
	for _, v := range added {
		env = append(env, v.Key+"="+v.Value)
	}
	cmd.Env = env // exec keeps the last value of a repeated name
	return cmd, nil
}

// setsProcs reports whether env or values set GOMAXPROCS (to anything but
// nothing).
func setsProcs(env []string, values []config.Setting) bool {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "GOMAXPROCS="); ok && v != "" {
			return true
		}
	}
	return slices.ContainsFunc(values, func(v config.Setting) bool { return v.Key == "GOMAXPROCS" && v.Value != "" })
}

// startProcess starts the worker process on a free port. Its output is
// copied line by line to out with the prefix "[handler] ". onExit, when
// set, is called as soon as the process has exited.
func startProcess(spec *Spec, out io.Writer, onExit func(*process), reserve func(int)) (*process, error) {
	port, err := freePort(spec.HostPort, reserve)
	if err != nil {
		return nil, fmt.Errorf("finding a free port for the worker: %w", err)
	}
	cmd, err := spec.command(port)
	if err != nil {
		return nil, err
	}
	path := cmd.Path
	control, started, err := reaped(cmd)
	if err != nil {
		return nil, err
	}
	w := &process{
		cmd:     cmd,
		path:    path,
		control: control,
		port:    port,
		base:    "http://127.0.0.1:" + strconv.Itoa(port),
		done:    make(chan struct{}),
		lines:   make(chan struct{}, 1),
	}
	w.stdout = &lineWriter{out: out, prefix: "[handler] ", lines: w.lines}
	w.stderr = &lineWriter{out: out, prefix: "[handler] ", lines: w.lines}
	cmd.Stdout, cmd.Stderr = w.stdout, w.stderr
	cmd.SysProcAttr = workerProcAttr()
	// Bound the wait for output pipes held open by grandchildren.
	cmd.WaitDelay = 2 * time.Second
	err = cmd.Start()
	started()
	if err != nil {
		w.closeControl()
		return nil, fmt.Errorf("starting the worker %s: %w", path, err)
	}
	go func() {
		w.err = cmd.Wait()
		if onExit != nil {
			onExit(w)
		}
		w.closeControl()
		_ = w.signalGroup(killSignal) // grandchildren the worker left in its group
		w.stdout.flush()
		w.stderr.flush()
		close(w.done)
	}()
	return w, nil
}

func (w *process) pid() int                { return w.cmd.Process.Pid }
func (w *process) url() string             { return w.base }
func (w *process) describe() []any         { return []any{"path", w.path, "port", w.port} }
func (w *process) exited() <-chan struct{} { return w.done }
func (w *process) exitCode() int           { return w.cmd.ProcessState.ExitCode() }
func (w *process) killedByProbe() bool     { return w.byProbe.Load() }

// exitError describes how the process ended.
func (w *process) exitError() error {
	if w.err != nil {
		return w.err
	}
	return errors.New("exit status 0")
}

// waitReady polls GET / (see readinessPolls) until the worker answers. Any
// HTTP answer (even 404) means ready; only a refused connection keeps
// waiting, as in the Functions host. It fails early when the process exits.
func (w *process) waitReady(ctx context.Context, timeout time.Duration) error {
	transport := &http.Transport{DisableKeepAlives: true}
	defer transport.CloseIdleConnections()
	return waitReady(ctx, transport, w.base+"/", timeout, w.done, w.exitError, w.lines, readinessPolls)
}

// waitReady polls GET url through transport until it gets an HTTP answer,
// when sched says and whenever lines has a value; see process.waitReady.
func waitReady(ctx context.Context, transport http.RoundTripper, url string, timeout time.Duration, exited <-chan struct{}, exitErr func() error,
	lines <-chan struct{}, sched pollSchedule) error {
	client := &http.Client{Timeout: 2 * time.Second, Transport: transport}
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	wait := time.NewTimer(sched.first)
	defer wait.Stop()
	began := time.Now()
	interval := sched.first
	for {
		select {
		case <-exited:
			return fmt.Errorf("the worker process exited before it was ready: %w", exitErr())
		default:
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		polled := time.Now()
		resp, err := client.Do(req)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if !errors.Is(err, syscall.ECONNREFUSED) {
			return nil // the Functions host counts any other failure as an answer
		}
		due := polled.Add(interval)
		interval = sched.next(interval, time.Since(began))
		wait.Reset(time.Until(due))
	waiting:
		for {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-exited:
				return fmt.Errorf("the worker process exited before it was ready: %w", exitErr())
			case <-deadline.C:
				return fmt.Errorf("the worker was not ready within %v: GET %s was refused", timeout, url)
			case <-lines:
				if soon := polled.Add(sched.minGap); soon.Before(due) {
					due = soon
					wait.Reset(time.Until(due))
				}
			case <-wait.C:
				break waiting
			}
		}
	}
}

// stop asks the worker's process group to end (SIGTERM, or a kill where
// signals are not supported), waits up to grace, then kills the group.
func (w *process) stop(grace time.Duration) error {
	select {
	case <-w.done:
		return nil
	default:
	}
	if err := w.terminate(); err != nil {
		_ = w.killGroup()
	}
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-w.done:
		return nil
	case <-t.C:
	}
	if err := w.killGroup(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("killing the worker (pid %d): %w", w.pid(), err)
	}
	<-w.done
	return nil
}

// killByProbe ends the worker's group at once (a hung worker).
func (w *process) killByProbe() {
	w.byProbe.Store(true)
	_ = w.killGroup()
}

// maxLine bounds a buffered worker output line; longer lines are split.
const maxLine = 64 << 10

// lineWriter copies whole lines, each with a prefix, to out: one Write per
// line, so that lines from several writers do not interleave.
type lineWriter struct {
	out    io.Writer
	prefix string
	// lines, when set, gets a value (without blocking) after each line.
	lines chan<- struct{}
	mu    sync.Mutex
	buf   []byte
}

func (l *lineWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			l.buf = append(l.buf, p...)
			if len(l.buf) >= maxLine {
				l.emit()
			}
			break
		}
		l.buf = append(l.buf, p[:i]...)
		l.emit()
		p = p[i+1:]
	}
	return n, nil
}

func (l *lineWriter) emit() {
	line := l.buf
	if len(line) > 0 && line[len(line)-1] == '\r' {
		line = line[:len(line)-1]
	}
	out := make([]byte, 0, len(l.prefix)+len(line)+1)
	out = append(out, l.prefix...)
	out = append(out, line...)
	out = append(out, '\n')
	_, _ = l.out.Write(out)
	l.buf = l.buf[:0]
	if l.lines != nil {
		select {
		case l.lines <- struct{}{}:
		default:
		}
	}
}

func (l *lineWriter) flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.buf) > 0 {
		l.emit()
	}
}
