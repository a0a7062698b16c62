package supervise

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/funcmcp/funcmcp/host/internal/backoff"
)

// The restart policy for a custom handler. As in the Functions host, a
// worker that exits is started again, and maxWorkerErrors failures within
// workerErrorWindow exhaust the normal policy; unlike it, funchost then does
// not stop: it reports Unhealthy, answers calls with isError results and
// keeps restarting with capped exponential back-off.
const (
	maxWorkerErrors   = 3
	workerErrorWindow = 30 * time.Minute
	// restartExitCode is the exit code by which a worker asks to be
	// restarted; it is not counted as a failure, but such restarts are at
	// least restartDelay apart.
	restartExitCode = 200
	// DefaultRestartDelay separates a failed start from the next try, and
	// two exit-code-200 restarts; it is the first back-off step.
	DefaultRestartDelay = time.Second
	// maxBackoff caps the wait between restarts of an unhealthy worker.
	maxBackoff = time.Minute
)

// Reporter hears what happens to the worker. Its methods may be called
// from several goroutines and must not block for long.
type Reporter interface {
	// WorkerURL: the worker at this base URL is ready; calls go to it from
	// now on.
	WorkerURL(url string)
	// WorkerExited: the worker at url has exited; calls should wait for
	// the next one rather than reach for the dead one.
	WorkerExited(url string)
	// Unhealthy: the worker keeps failing (the restart policy is
	// exhausted); reason says why. Restarts go on with back-off.
	Unhealthy(reason string)
	// Healthy: after Unhealthy, a restarted worker is ready.
	Healthy()
	// Problem is a failure worth showing on the status page.
	Problem(msg string)
}

// RestartReporter is a [Reporter] that also hears of each restart: the
// new worker is ready, the old one having ended for reason (RestartExited,
// RestartRequested, RestartProbe). It is optional.
type RestartReporter interface {
	Restarted(reason string)
}

// Reasons of a restart.
const (
	RestartExited    = "exited"    // the worker exited on its own, unexpectedly
	RestartRequested = "requested" // it exited with code 200, asking for it
	RestartProbe     = "probe"     // it stopped answering its liveness probe and was killed
)

// Probe configures the liveness probe: GET / every Interval, each bounded
// by Timeout; after Failures missed probes in a row the worker's group is
// killed (and restarted). An Interval of zero or less turns it off.
type Probe struct {
	Interval, Timeout time.Duration
	Failures          int
}

// Options configures a [Supervisor].
type Options struct {
	Spec
	// Output receives the worker's stdout and stderr, line by line, each
	// line prefixed "[handler] " and written with one Write call; it must
	// be safe for concurrent use.
	Output io.Writer
	Logger *slog.Logger
	// StartupTimeout bounds the wait for a started worker to answer GET /.
	StartupTimeout time.Duration
	// StopTimeout is how long a worker has to exit after SIGTERM.
	StopTimeout time.Duration
	// RestartDelay is the first back-off step; 0 means DefaultRestartDelay.
	RestartDelay time.Duration
	Probe        Probe
}

// Supervisor starts the worker process, keeps it running and stops it. It
// knows nothing of the host: what happens is told to its [Reporter].
type Supervisor struct {
	o     Options
	r     Reporter
	log   *slog.Logger
	start func() (worker, error) // startProcess, or a fake in tests
	now   func() time.Time

	// Owned by the goroutine that calls Start, then Run.
	failures  []time.Time
	lastStart time.Time
	waits     backoff.Doubling // between restarts once the policy is exhausted
	unhealthy bool             // Unhealthy was reported, Healthy not yet

	mu      sync.Mutex
	current worker // the worker running now; nil when none

	// port is the port given to the worker starting or running (0 before
	// the first): set before the port is let go (see freePort).
	port atomic.Int64
}

// New returns the supervisor of the worker o describes; nothing starts
// before [Supervisor.Start].
func New(o *Options, r Reporter) *Supervisor {
	s := &Supervisor{o: *o, r: r, log: o.Logger, now: time.Now}
	if s.o.RestartDelay <= 0 {
		s.o.RestartDelay = DefaultRestartDelay
	}
	s.waits = backoff.Doubling{First: s.o.RestartDelay, Max: maxBackoff}
	s.start = func() (worker, error) {
		p, err := startProcess(&s.o.Spec, s.o.Output, func(p *process) { s.r.WorkerExited(p.url()) }, func(port int) { s.port.Store(int64(port)) })
		if err != nil {
			return nil, err // not a nil *process in an interface
		}
		return p, nil
	}
	return s
}

// WorkerPort is the loopback port given to the worker that is starting or
// running; 0 before the first start chose one. A host that listens on an
// ephemeral port checks that it did not get this one: the kernel may give
// it the worker's port after the supervisor let it go and before the
// worker took it.
func (s *Supervisor) WorkerPort() int { return int(s.port.Load()) }

// Start starts the first worker, waits until it answers and then tells the
// reporter its URL (calls made meanwhile wait for it: a call sent to a
// worker that does not listen yet would be refused). When it does not
// answer, the worker is stopped and the error says why (ctx's error when
// ctx ended first).
func (s *Supervisor) Start(ctx context.Context) error {
	s.lastStart = s.now()
	w, err := s.start()
	if err != nil {
		return err
	}
	s.log.Info("worker process started", append([]any{"pid", w.pid()}, w.describe()...)...)
	if err := w.waitReady(ctx, s.o.StartupTimeout); err != nil {
		_ = w.stop(s.o.StopTimeout)
		return err
	}
	s.setCurrent(w)
	s.r.WorkerURL(w.url())
	return nil
}

// Run waits for the worker to exit and starts a new one each time, until
// ctx ends; the worker then running is left running for [Supervisor.Stop].
// It returns nil.
func (s *Supervisor) Run(ctx context.Context) error {
	w := s.running()
	if w == nil {
		return nil
	}
	for {
		stopProbe := s.watch(ctx, w)
		select {
		case <-ctx.Done():
			stopProbe()
			return nil
		case <-w.exited():
		}
		stopProbe()
		if ctx.Err() != nil {
			return nil
		}
		s.setCurrent(nil)
		reason := RestartExited
		if code := w.exitCode(); code == restartExitCode && !w.killedByProbe() {
			reason = RestartRequested
			s.log.Info("the worker process asked to be restarted", "pid", w.pid(), "exitCode", code)
			if !backoff.Sleep(ctx, s.o.RestartDelay-s.now().Sub(s.lastStart)) {
				return nil
			}
		} else {
			msg := fmt.Sprintf("the worker process (pid %d) exited unexpectedly: %v", w.pid(), w.exitError())
			if w.killedByProbe() {
				reason = RestartProbe
				msg = fmt.Sprintf("the worker process (pid %d) stopped answering its liveness probe and was killed", w.pid())
			}
			s.fail(msg)
		}
		for {
			if !backoff.Sleep(ctx, s.backoff()) {
				return nil
			}
			next, err := s.restart(ctx)
			if err == nil {
				w = next
				if rr, ok := s.r.(RestartReporter); ok {
					rr.Restarted(reason)
				}
				break
			}
			if ctx.Err() != nil {
				return nil
			}
			s.fail(fmt.Sprintf("restarting the worker: %v", err))
			if !backoff.Sleep(ctx, s.o.RestartDelay) {
				return nil
			}
		}
	}
}

// Stop stops the worker left running, if any: SIGTERM to its process
// group, and a kill after the stop timeout.
func (s *Supervisor) Stop() error {
	w := s.running()
	if w == nil {
		return nil
	}
	s.setCurrent(nil)
	err := w.stop(s.o.StopTimeout)
	s.log.Info("worker process stopped", "pid", w.pid())
	return err
}

func (s *Supervisor) running() worker {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.current
}

func (s *Supervisor) setCurrent(w worker) {
	s.mu.Lock()
	s.current = w
	s.mu.Unlock()
}

// backoff is the wait before the next restart: none while the policy
// holds, then doubling from the restart delay up to maxBackoff.
func (s *Supervisor) backoff() time.Duration {
	if !s.exhausted() {
		s.waits.Reset()
		return 0
	}
	return s.waits.Next()
}

func (s *Supervisor) exhausted() bool { return s.recent() >= maxWorkerErrors }

// recent counts the failures within the window, forgetting older ones.
func (s *Supervisor) recent() int {
	now := s.now()
	kept := s.failures[:0]
	for _, t := range s.failures {
		if now.Sub(t) < workerErrorWindow {
			kept = append(kept, t)
		}
	}
	s.failures = kept
	return len(kept)
}

// fail records a worker failure; once the policy is exhausted the worker
// is reported Unhealthy with the reason.
func (s *Supervisor) fail(msg string) {
	s.failures = append(s.failures, s.now())
	s.log.Error(msg)
	s.r.Problem(msg)
	if n := s.recent(); n >= maxWorkerErrors {
		reason := fmt.Sprintf("the worker failed %d times within %v (last: %s); restarting with back-off", n, workerErrorWindow, msg)
		if !s.unhealthy {
			s.log.Error("Exceeded the worker restart retry count. The host stays up and keeps restarting the worker with back-off.", "reason", reason)
		}
		s.unhealthy = true
		s.r.Unhealthy(reason)
	}
}

// restart starts a new worker on a new port and waits until it is ready;
// calls go to it from then on.
func (s *Supervisor) restart(ctx context.Context) (worker, error) {
	s.lastStart = s.now()
	w, err := s.start()
	if err != nil {
		return nil, err
	}
	s.log.Info("worker process restarted", append([]any{"pid", w.pid()}, w.describe()...)...)
	if err := w.waitReady(ctx, s.o.StartupTimeout); err != nil {
		_ = w.stop(s.o.StopTimeout)
		return nil, err
	}
	s.setCurrent(w)
	s.r.WorkerURL(w.url())
	if s.unhealthy {
		s.unhealthy = false
		s.r.Healthy()
	}
	return w, nil
}
