package host

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/funcmcp/funcmcp/host/internal/config"
	"github.com/funcmcp/funcmcp/host/internal/ids"
	"github.com/funcmcp/funcmcp/metadata"
)

// readinessInterval is how often the host polls GET / while the worker starts,
// as the Functions host does.
const readinessInterval = 25 * time.Millisecond

// workerProcess is the custom-handler process the host started.
type workerProcess struct {
	cmd    *exec.Cmd
	port   int
	url    string // http://127.0.0.1:port
	exited chan struct{}
	err    error // the Wait error, set before exited is closed
	stdout *lineWriter
	stderr *lineWriter
	// killedByProbe is set when the liveness probe killed the worker.
	killedByProbe atomic.Bool
}

// workerSpec is everything needed to start the worker.
type workerSpec struct {
	Root    string
	Desc    *config.Worker
	Values  []config.Setting
	Environ []string // the base environment; nil → os.Environ()
	Console *console
	// OnExit, when set, is called as soon as the worker process has exited.
	OnExit func(*workerProcess)
}

// freePort asks the kernel for a free loopback port.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// command builds the worker's command line and environment for port.
func (s *workerSpec) command(port int) (*exec.Cmd, error) {
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
	base := config.ResolveDir(s.Root, config.ExpandVars(s.Desc.WorkerDirectory, lookup))
	exe := config.ResolveExecutable(base, config.ExpandVars(s.Desc.ExecutablePath, lookup))
	args := make([]string, len(s.Desc.Arguments))
	for i, a := range s.Desc.Arguments {
		args[i] = config.ExpandVars(a, lookup)
	}
	cmd := exec.Command(exe, args...)
	if cmd.Err != nil {
		return nil, fmt.Errorf("finding the worker executable %q: %w", s.Desc.ExecutablePath, cmd.Err)
	}
	cmd.Dir = config.ResolveDir(s.Root, config.ExpandVars(s.Desc.WorkingDirectory, lookup))
	env := s.Environ
	if env == nil {
		env = os.Environ()
	}
	env = append([]string(nil), env...)
	for _, v := range s.Values {
		env = append(env, v.Key+"="+v.Value)
	}
	for _, v := range added {
		env = append(env, v.Key+"="+v.Value)
	}
	cmd.Env = env // exec keeps the last value of a repeated name
	return cmd, nil
}

// startWorker starts the worker process on a free port. Its output is copied
// line by line to the console with the prefix "[handler] ".
func startWorker(spec *workerSpec) (*workerProcess, error) {
	port, err := freePort()
	if err != nil {
		return nil, fmt.Errorf("finding a free port for the worker: %w", err)
	}
	cmd, err := spec.command(port)
	if err != nil {
		return nil, err
	}
	w := &workerProcess{
		cmd:    cmd,
		port:   port,
		url:    "http://127.0.0.1:" + strconv.Itoa(port),
		exited: make(chan struct{}),
		stdout: &lineWriter{console: spec.Console, prefix: "[handler] "},
		stderr: &lineWriter{console: spec.Console, prefix: "[handler] "},
	}
	cmd.Stdout, cmd.Stderr = w.stdout, w.stderr
	cmd.SysProcAttr = workerProcAttr()
	// Bound the wait for output pipes held open by grandchildren.
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the worker %s: %w", cmd.Path, err)
	}
	go func() {
		w.err = cmd.Wait()
		if spec.OnExit != nil {
			spec.OnExit(w)
		}
		_ = w.killGroup() // grandchildren the worker left behind
		w.stdout.flush()
		w.stderr.flush()
		close(w.exited)
	}()
	return w, nil
}

// pid returns the process id.
func (w *workerProcess) pid() int { return w.cmd.Process.Pid }

// exitError describes how the process ended.
func (w *workerProcess) exitError() error {
	if w.err != nil {
		return w.err
	}
	return errors.New("exit status 0")
}

// waitReady polls GET / every 25 ms until the worker answers. Any HTTP answer
// (even 404) means ready; only a refused connection keeps waiting, as in the
// Functions host. It fails early when the process exits.
func (w *workerProcess) waitReady(ctx context.Context, timeout time.Duration) error {
	return waitReady(ctx, w.url+"/", timeout, w.exited, w.exitError)
}

func waitReady(ctx context.Context, url string, timeout time.Duration, exited <-chan struct{}, exitErr func() error) error {
	client := &http.Client{
		Timeout:   2 * time.Second,
		Transport: &http.Transport{DisableKeepAlives: true},
	}
	defer client.CloseIdleConnections()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(readinessInterval)
	defer tick.Stop()
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
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-exited:
			return fmt.Errorf("the worker process exited before it was ready: %w", exitErr())
		case <-deadline.C:
			return fmt.Errorf("the worker was not ready within %v: GET %s was refused", timeout, url)
		case <-tick.C:
		}
	}
}

// stop asks the worker's process group to end (SIGTERM, or a kill where
// signals are not supported), waits up to grace, then kills the group.
func (w *workerProcess) stop(grace time.Duration) error {
	select {
	case <-w.exited:
		return nil
	default:
	}
	if err := w.terminate(); err != nil {
		_ = w.killGroup()
	}
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-w.exited:
		return nil
	case <-t.C:
	}
	if err := w.killGroup(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("killing the worker (pid %d): %w", w.pid(), err)
	}
	<-w.exited
	return nil
}

// kill ends the worker's group at once (a hung worker).
func (w *workerProcess) kill() { _ = w.killGroup() }

// console serializes writes of whole lines to the host's output.
type console struct {
	mu sync.Mutex
	w  io.Writer
}

func (c *console) printf(format string, args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	fmt.Fprintf(c.w, format, args...)
}

func (c *console) write(p []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, _ = c.w.Write(p)
}

// maxLine bounds a buffered worker output line; longer lines are split.
const maxLine = 64 << 10

// lineWriter copies whole lines, each with a prefix, to the console.
type lineWriter struct {
	console *console
	prefix  string
	mu      sync.Mutex
	buf     []byte
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
	l.console.write(out)
	l.buf = l.buf[:0]
}

func (l *lineWriter) flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.buf) > 0 {
		l.emit()
	}
}
