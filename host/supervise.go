package host

import (
	"context"
	"fmt"
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
	// restartDelay separates a failed start from the next try, and two
	// exit-code-200 restarts.
	restartDelay = time.Second
	// maxBackoff caps the wait between restarts of an unhealthy worker.
	maxBackoff = time.Minute
)

// supervisor keeps the worker process running for Run.
type supervisor struct {
	h        *Host
	spec     *workerSpec
	failures []time.Time
	now      func() time.Time
	// delay is the first back-off step (restartDelay; shorter in tests).
	delay       time.Duration
	lastStart   time.Time
	waits       backoff.Doubling // between restarts once the policy is exhausted
	probe       *prober
	probeCancel context.CancelFunc
}

// supervise waits for proc to exit and starts a new worker each time, until
// ctx is done; it then returns the running process (nil if none), which the
// caller stops.
func (s *supervisor) supervise(ctx context.Context, proc *workerProcess) (*workerProcess, error) {
	if s.delay <= 0 {
		s.delay = restartDelay
	}
	s.lastStart = s.now()
	s.watch(ctx, proc)
	for {
		select {
		case <-ctx.Done():
			s.unwatch()
			return proc, nil
		case <-proc.exited:
		}
		s.unwatch()
		if ctx.Err() != nil {
			return proc, nil
		}
		code := proc.cmd.ProcessState.ExitCode()
		if code == restartExitCode && !proc.killedByProbe.Load() {
			s.h.log.Info("the worker process asked to be restarted", "pid", proc.pid(), "exitCode", code)
			if !backoff.Sleep(ctx, s.delay-s.now().Sub(s.lastStart)) {
				return nil, nil
			}
		} else {
			msg := fmt.Sprintf("the worker process (pid %d) exited unexpectedly: %v", proc.pid(), proc.exitError())
			if proc.killedByProbe.Load() {
				msg = fmt.Sprintf("the worker process (pid %d) stopped answering its liveness probe and was killed", proc.pid())
			}
			s.fail(msg)
		}
		for {
			if !backoff.Sleep(ctx, s.backoff()) {
				return nil, nil
			}
			next, err := s.restart(ctx)
			if err == nil {
				proc = next
				break
			}
			if ctx.Err() != nil {
				return nil, nil
			}
			s.fail(fmt.Sprintf("restarting the worker: %v", err))
			if !backoff.Sleep(ctx, s.delay) {
				return nil, nil
			}
		}
		s.watch(ctx, proc)
	}
}

// backoff is the wait before the next restart: none while the policy
// holds, then doubling from delay up to maxBackoff.
func (s *supervisor) backoff() time.Duration {
	if s.waits.First == 0 {
		s.waits = backoff.Doubling{First: s.delay, Max: maxBackoff}
	}
	if !s.exhausted() {
		s.waits.Reset()
		return 0
	}
	return s.waits.Next()
}

func (s *supervisor) exhausted() bool { return s.recent() >= maxWorkerErrors }

// recent counts the failures within the window, forgetting older ones.
func (s *supervisor) recent() int {
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

// fail records a worker failure; once the policy is exhausted the host is
// marked Unhealthy with the reason.
func (s *supervisor) fail(msg string) {
	s.failures = append(s.failures, s.now())
	s.h.log.Error(msg)
	s.h.addLiveError(msg)
	if n := s.recent(); n >= maxWorkerErrors {
		reason := fmt.Sprintf("the worker failed %d times within %v (last: %s); restarting with back-off", n, workerErrorWindow, msg)
		if s.h.unhealthyReason() == "" {
			s.h.log.Error("Exceeded the worker restart retry count. The host stays up and keeps restarting the worker with back-off.", "reason", reason)
		}
		s.h.setUnhealthy(reason)
	}
}

// restart starts a new worker on a new port and waits until it is ready;
// calls go to it from then on.
func (s *supervisor) restart(ctx context.Context) (*workerProcess, error) {
	s.lastStart = s.now()
	proc, err := startWorker(s.spec)
	if err != nil {
		return nil, err
	}
	s.h.log.Info("worker process restarted", "pid", proc.pid(), "path", proc.cmd.Path, "port", proc.port)
	if err := proc.waitReady(ctx, s.h.opts.StartupTimeout); err != nil {
		_ = proc.stop(s.h.opts.StopTimeout)
		return nil, err
	}
	s.h.inv.SetWorker(proc.url)
	s.h.setHealthy()
	return proc, nil
}
