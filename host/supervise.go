package host

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// The Functions host's restart policy for a custom handler: a worker that
// exits is started again while fewer than maxWorkerErrors failures happened
// within workerErrorWindow; then the host gives up and shuts down.
const (
	maxWorkerErrors   = 3
	workerErrorWindow = 30 * time.Minute
	// restartExitCode is the exit code by which a worker asks to be
	// restarted; it is not counted as a failure.
	restartExitCode = 200
	// restartDelay separates a failed start from the next try.
	restartDelay = time.Second
)

// errWorkerGaveUp is returned (wrapped) by supervise when the restart policy
// is exhausted.
var errWorkerGaveUp = errors.New("the worker kept failing")

// supervisor keeps the worker process running for Run.
type supervisor struct {
	h        *Host
	spec     *workerSpec
	failures []time.Time
	now      func() time.Time
}

// supervise waits for proc to exit and starts a new worker each time, until
// ctx is done (then it returns the running process, which the caller stops)
// or the restart policy is exhausted (then it returns an error wrapping
// errWorkerGaveUp, with the last process already gone).
func (s *supervisor) supervise(ctx context.Context, proc *workerProcess) (*workerProcess, error) {
	for {
		select {
		case <-ctx.Done():
			return proc, nil
		case <-proc.exited:
		}
		if ctx.Err() != nil {
			return proc, nil
		}
		code := proc.cmd.ProcessState.ExitCode()
		if code == restartExitCode {
			s.h.log.Info("the worker process asked to be restarted", "pid", proc.pid(), "exitCode", code)
		} else {
			msg := fmt.Sprintf("the worker process (pid %d) exited unexpectedly: %v", proc.pid(), proc.exitError())
			if err := s.fail(msg); err != nil {
				return nil, err
			}
		}
		next, err := s.restart(ctx)
		for err != nil {
			if ctx.Err() != nil {
				return nil, nil
			}
			if ferr := s.fail(fmt.Sprintf("restarting the worker: %v", err)); ferr != nil {
				return nil, ferr
			}
			select {
			case <-ctx.Done():
				return nil, nil
			case <-time.After(restartDelay):
			}
			next, err = s.restart(ctx)
		}
		proc = next
	}
}

// fail records a worker failure; it returns an error once the policy is
// exhausted.
func (s *supervisor) fail(msg string) error {
	now := s.now()
	kept := s.failures[:0]
	for _, t := range s.failures {
		if now.Sub(t) < workerErrorWindow {
			kept = append(kept, t)
		}
	}
	s.failures = append(kept, now)
	s.h.log.Error(msg)
	s.h.addLiveError(msg)
	if len(s.failures) >= maxWorkerErrors {
		return fmt.Errorf("%w: %d failures within %v; shutting down", errWorkerGaveUp, len(s.failures), workerErrorWindow)
	}
	return nil
}

// restart starts a new worker on a new port and waits until it is ready;
// calls go to it from then on.
func (s *supervisor) restart(ctx context.Context) (*workerProcess, error) {
	proc, err := startWorker(s.spec)
	if err != nil {
		return nil, err
	}
	s.h.log.Info("worker process restarted", "pid", proc.pid(), "path", proc.cmd.Path, "port", proc.port)
	if err := proc.waitReady(ctx, s.h.opts.StartupTimeout); err != nil {
		_ = proc.stop(s.h.opts.StopTimeout)
		return nil, err
	}
	s.h.inv.setBase(proc.url)
	return proc, nil
}
