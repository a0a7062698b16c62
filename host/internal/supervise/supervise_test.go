package supervise

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

// events is a Reporter that records what it hears, in order.
type events struct {
	mu  sync.Mutex
	got []string
}

func (e *events) add(s string) {
	e.mu.Lock()
	e.got = append(e.got, s)
	e.mu.Unlock()
}

func (e *events) list() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.got...)
}

func (e *events) WorkerURL(url string)    { e.add("url " + url) }
func (e *events) WorkerExited(url string) { e.add("exited " + url) }
func (e *events) Unhealthy(reason string) { e.add("unhealthy " + reason) }
func (e *events) Healthy()                { e.add("healthy") }
func (e *events) Problem(msg string)      { e.add("problem " + msg) }

// reporterFunc overrides WorkerExited of an events.
type reporterFunc struct {
	*events
	exited func(url string)
}

func (r reporterFunc) WorkerExited(url string) { r.exited(url) }

// fakeWorker is a worker the test ends when it likes.
type fakeWorker struct {
	n       int
	done    chan struct{}
	once    sync.Once
	code    int
	byProbe bool
}

func (f *fakeWorker) pid() int                                       { return 1000 + f.n }
func (f *fakeWorker) url() string                                    { return fmt.Sprintf("http://worker-%d", f.n) }
func (f *fakeWorker) describe() []any                                { return nil }
func (f *fakeWorker) exited() <-chan struct{}                        { return f.done }
func (f *fakeWorker) exitCode() int                                  { return f.code }
func (f *fakeWorker) exitError() error                               { return fmt.Errorf("exit status %d", f.code) }
func (f *fakeWorker) waitReady(context.Context, time.Duration) error { return nil }
func (f *fakeWorker) stop(time.Duration) error                       { f.exit(-1); return nil }
func (f *fakeWorker) killByProbe()                                   { f.byProbe = true; f.exit(-1) }
func (f *fakeWorker) killedByProbe() bool                            { return f.byProbe }

// exit ends the worker with code (once).
func (f *fakeWorker) exit(code int) {
	f.once.Do(func() {
		f.code = code
		close(f.done)
	})
}

// fakeStarts makes a supervisor whose workers are fakes; each start is
// recorded with the (fake) time it happened, and then runs onStart.
type fakeStarts struct {
	mu      sync.Mutex
	workers []*fakeWorker
	at      []time.Time
	onStart func(*fakeWorker)
}

func (fs *fakeStarts) start() (worker, error) {
	fs.mu.Lock()
	w := &fakeWorker{n: len(fs.workers) + 1, done: make(chan struct{})}
	fs.workers = append(fs.workers, w)
	fs.at = append(fs.at, time.Now())
	fs.mu.Unlock()
	if fs.onStart != nil {
		fs.onStart(w)
	}
	return w, nil
}

func (fs *fakeStarts) last() *fakeWorker {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fs.workers[len(fs.workers)-1]
}

func (fs *fakeStarts) times() []time.Time {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return append([]time.Time(nil), fs.at...)
}

func newFakeSupervisor(rep Reporter, fs *fakeStarts) *Supervisor {
	s := New(&Options{Logger: discard(), StartupTimeout: time.Second, StopTimeout: time.Second}, rep)
	s.start = fs.start
	return s
}

// TestRestartPolicy walks the policy with fake workers on a fake clock: a
// crash is a failure and the worker is restarted at once; exit code 200
// restarts without counting; the third failure within the window reports
// Unhealthy and restarts back off; the next ready worker is Healthy again.
func TestRestartPolicy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rep := &events{}
		fs := &fakeStarts{}
		s := newFakeSupervisor(rep, fs)
		require.NoError(t, s.Start(t.Context()))
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- s.Run(ctx) }()
		crash := func(code int) {
			fs.last().exit(code)
			synctest.Wait()
		}

		crash(1)
		crash(restartExitCode)
		time.Sleep(time.Second) // the exit-code-200 restart waits out the restart delay
		synctest.Wait()
		crash(2)
		start := time.Now()
		crash(3)                // the third failure within the window
		time.Sleep(time.Second) // the first back-off step
		synctest.Wait()
		assert.Equal(t, time.Second, time.Since(start))

		cancel()
		assert.NoError(t, <-done)
		require.NoError(t, s.Stop())
		w5 := fs.last()
		select {
		case <-w5.exited():
		default:
			t.Error("Stop stopped the worker left running")
		}

		reason := "the worker failed 3 times within 30m0s (last: the worker process (pid 1004) exited unexpectedly: exit status 3); restarting with back-off"
		assert.Equal(t, []string{
			"url http://worker-1",
			"problem the worker process (pid 1001) exited unexpectedly: exit status 1",
			"url http://worker-2",
			"url http://worker-3",
			"problem the worker process (pid 1003) exited unexpectedly: exit status 2",
			"url http://worker-4",
			"problem the worker process (pid 1004) exited unexpectedly: exit status 3",
			"unhealthy " + reason,
			"url http://worker-5",
			"healthy",
		}, rep.list())
	})
}

// TestExitCode200RestartsAreRateLimited runs workers that ask for a
// restart (exit code 200) 50 ms after every start, for 9.5 (fake)
// seconds: restarts are at least the restart delay apart, and none counts
// as a failure.
func TestExitCode200RestartsAreRateLimited(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rep := &events{}
		fs := &fakeStarts{onStart: func(w *fakeWorker) {
			time.AfterFunc(50*time.Millisecond, func() { w.exit(restartExitCode) })
		}}
		s := newFakeSupervisor(rep, fs)
		require.NoError(t, s.Start(t.Context()))
		// Ten starts at 0 s, 1 s, … 9 s; the run ends between two.
		ctx, cancel := context.WithTimeout(t.Context(), 9500*time.Millisecond)
		defer cancel()
		require.NoError(t, s.Run(ctx))

		at := fs.times()
		assert.Equal(t, 10, len(at), "one start a second")
		for i := 1; i < len(at); i++ {
			if !assert.GreaterOrEqual(t, at[i].Sub(at[i-1]), DefaultRestartDelay, "restart %d", i) {
				break
			}
		}
		for _, e := range rep.list() {
			assert.True(t, strings.HasPrefix(e, "url "), "only new URLs are reported: %s", e)
		}
	})
}

// TestFailureWindow checks that failures older than the window are
// forgotten, and that an exhausted policy reports Unhealthy once and backs
// off up to the cap.
func TestFailureWindow(t *testing.T) {
	now := time.Unix(0, 0)
	rep := &events{}
	s := New(&Options{Logger: discard()}, rep)
	s.now = func() time.Time { return now }
	for range maxWorkerErrors - 1 {
		s.fail("failed")
	}
	assert.False(t, s.exhausted())
	now = now.Add(workerErrorWindow)
	s.fail("failed")
	s.fail("failed")
	assert.False(t, s.exhausted(), "the earlier failures are outside the window")
	assert.NotContains(t, strings.Join(rep.list(), "\n"), "unhealthy")
	assert.Equal(t, time.Duration(0), s.backoff(), "no back-off while the policy holds")
	s.fail("failed")
	assert.True(t, s.exhausted())
	assert.Contains(t, rep.list(), "unhealthy the worker failed 3 times within 30m0s (last: failed); restarting with back-off")
	var waits []time.Duration
	for range 9 {
		waits = append(waits, s.backoff())
	}
	assert.Equal(t, []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second,
		32 * time.Second, time.Minute, time.Minute, time.Minute}, waits)
	now = now.Add(workerErrorWindow)
	assert.Equal(t, time.Duration(0), s.backoff(), "the window passed: no back-off")
	s.fail("failed")
	s.fail("failed")
	s.fail("failed")
	assert.Equal(t, time.Second, s.backoff(), "back-off starts again from the first step")
}

// restartEvents is an events that also hears of restarts.
type restartEvents struct{ *events }

func (r restartEvents) Restarted(reason string) { r.add("restarted " + reason) }

// TestRestartsAreReportedWithTheirReason: a reporter that listens for
// restarts hears of each, once the new worker is ready, with why the old
// one ended: it exited, it asked to be restarted (code 200), or the
// liveness probe killed it.
func TestRestartsAreReportedWithTheirReason(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rep := restartEvents{&events{}}
		fs := &fakeStarts{}
		s := newFakeSupervisor(rep, fs)
		require.NoError(t, s.Start(t.Context()))
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- s.Run(ctx) }()

		fs.last().exit(1)
		synctest.Wait()
		fs.last().exit(restartExitCode)
		time.Sleep(time.Second) // the exit-code-200 restart waits out the restart delay
		synctest.Wait()
		fs.last().killByProbe()
		synctest.Wait()

		cancel()
		assert.NoError(t, <-done)
		require.NoError(t, s.Stop())
		var restarts []string
		for _, e := range rep.list() {
			if strings.HasPrefix(e, "restarted ") {
				restarts = append(restarts, e)
			}
		}
		assert.Equal(t, []string{"restarted " + RestartExited, "restarted " + RestartRequested, "restarted " + RestartProbe}, restarts)
	})
}
