package supervise

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/host/internal/config"
	"github.com/funcmcp/funcmcp/internal/testutil"
)

func TestWorkerCommand(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "bin"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "bin", "handler"), nil, 0o755))
	spec := &Spec{
		Root: root,
		Worker: &config.Worker{ExecutablePath: "handler", WorkerDirectory: "bin",
			Arguments: []string{"--port", "%FUNCTIONS_CUSTOMHANDLER_PORT%", "%GREETING%", "%NOPE%"}, WorkingDirectory: "wd"},
		Values:  []config.Setting{{Key: "GREETING", Value: "hello"}, {Key: "PATH_OVERRIDE", Value: "1"}, {Key: "SECRET_B", Value: "b"}},
		Environ: []string{"GREETING=from-os", "KEEP=1", "SECRET_A=a"},
		Hidden:  []string{"SECRET_A", "SECRET_B"},
	}
	cmd, err := spec.command(4242)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(root, "bin", "handler"), cmd.Path)
	assert.Equal(t, []string{filepath.Join(root, "bin", "handler"), "--port", "4242", "hello", "%NOPE%"}, cmd.Args)
	assert.Equal(t, filepath.Join(root, "wd"), cmd.Dir)
	env := map[string]string{}
	for _, kv := range cmd.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	assert.Equal(t, "hello", env["GREETING"], "local.settings.json wins over the OS environment")
	assert.Equal(t, "1", env["KEEP"])
	assert.NotContains(t, env, "SECRET_A", "a hidden variable of the environment")
	assert.NotContains(t, env, "SECRET_B", "a hidden variable of local.settings.json")
	assert.Equal(t, "4242", env["FUNCTIONS_CUSTOMHANDLER_PORT"])
	assert.Equal(t, "4242", env["FUNCTIONS_HTTPWORKER_PORT"])
	assert.Equal(t, root, env["FUNCTIONS_APP_ROOT_PATH"])
	assert.Len(t, env["FUNCTIONS_CUSTOMHANDLER_WORKER_ID"], 36)
	assert.Equal(t, env["FUNCTIONS_CUSTOMHANDLER_WORKER_ID"], env["FUNCTIONS_HTTPWORKER_ID"])

}

// TestWorkerCommandMissingExecutable: a handler that is not there is named
// with host.json's key and the folder it was looked for in, before any
// process starts.
func TestWorkerCommandMissingExecutable(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(root, "bin"), 0o755))
	const named = `the handler %q named by host.json's customHandler.description.defaultExecutablePath`
	for _, tc := range []struct {
		name   string
		worker config.Worker
		want   string
	}{
		{"a bare name", config.Worker{ExecutablePath: "no-such-handler-for-funchost"},
			fmt.Sprintf(named, "no-such-handler-for-funchost") + " was not found in the app folder " + root + " (nor on PATH)"},
		{"a variable", config.Worker{ExecutablePath: "%HANDLER_NAME%"},
			fmt.Sprintf(named, "handlr") + " was not found in the app folder " + root + " (nor on PATH)"},
		{"a path", config.Worker{ExecutablePath: "bin/handlr"},
			fmt.Sprintf(named, "bin/handlr") + " was not found in the app folder " + root},
		{"in the worker directory", config.Worker{ExecutablePath: "handlr", WorkerDirectory: "bin"},
			fmt.Sprintf(named, "handlr") + " was not found in the worker directory " + filepath.Join(root, "bin") +
				" (customHandler.description.workerDirectory) (nor on PATH)"},
		{"an absolute path", config.Worker{ExecutablePath: filepath.Join(root, "handlr")},
			fmt.Sprintf(named, filepath.Join(root, "handlr")) + " does not exist"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := &Spec{Root: root, Worker: &tc.worker, Values: []config.Setting{{Key: "HANDLER_NAME", Value: "handlr"}}}
			_, err := spec.command(1)
			var nf *config.ExecutableNotFoundError
			require.ErrorAs(t, err, &nf)
			assert.Equal(t, tc.want, err.Error())
		})
	}
}

// TestWorkerCommandProcs: the worker gets the GOMAXPROCS funchost chose for
// it, unless the environment or local.settings.json Values set one.
func TestWorkerCommandProcs(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, "handler"), nil, 0o755))
	procs := func(spec Spec) (string, bool) {
		t.Helper()
		spec.Root, spec.Worker = root, &config.Worker{ExecutablePath: "handler"}
		cmd, err := spec.command(1)
		require.NoError(t, err)
		v, ok := "", false
		for _, kv := range cmd.Environ() {
			if rest, found := strings.CutPrefix(kv, "GOMAXPROCS="); found {
				v, ok = rest, true // exec keeps the last one
			}
		}
		return v, ok
	}
	v, ok := procs(Spec{Procs: 1, Environ: []string{"KEEP=1"}})
	assert.True(t, ok)
	assert.Equal(t, "1", v, "the share funchost chose")
	v, _ = procs(Spec{Procs: 1, Environ: []string{"GOMAXPROCS=4"}})
	assert.Equal(t, "4", v, "the environment's choice")
	v, _ = procs(Spec{Procs: 1, Environ: []string{"GOMAXPROCS=4"}, Values: []config.Setting{{Key: "GOMAXPROCS", Value: "3"}}})
	assert.Equal(t, "3", v, "local.settings.json's choice")
	v, _ = procs(Spec{Procs: 2, Environ: []string{"GOMAXPROCS="}})
	assert.Equal(t, "2", v, "an empty GOMAXPROCS chooses nothing")
	_, ok = procs(Spec{Environ: []string{"KEEP=1"}})
	assert.False(t, ok, "Procs 0 adds none")
}

func TestLineWriter(t *testing.T) {
	out := &testutil.SyncBuffer{}
	lw := &lineWriter{out: out, prefix: "[handler] "}
	for _, chunk := range []string{"one\ntw", "o\r\n", "", "three\n\nfour"} {
		n, err := lw.Write([]byte(chunk))
		require.NoError(t, err)
		assert.Equal(t, len(chunk), n)
	}
	lw.flush()
	assert.Equal(t, "[handler] one\n[handler] two\n[handler] three\n[handler] \n[handler] four\n", out.String())

	out2 := &testutil.SyncBuffer{}
	long := &lineWriter{out: out2, prefix: "> "}
	_, _ = long.Write([]byte(strings.Repeat("x", maxLine+10)))
	assert.Len(t, out2.String(), 2+maxLine+10+1, "an over-long partial line is written out")
	_, _ = long.Write([]byte("tail\n"))
	assert.True(t, strings.HasSuffix(out2.String(), "\n> tail\n"))
}

// TestLineWriterSignalsEachLine: a whole line of the worker's output tells
// the readiness wait to poll (a worker says when it listens); a partial
// line does not, and the signal never blocks the worker's output.
func TestLineWriterSignalsEachLine(t *testing.T) {
	lines := make(chan struct{}, 1)
	lw := &lineWriter{out: io.Discard, prefix: "[handler] ", lines: lines}
	_, _ = lw.Write([]byte("serving 1 tool(s)"))
	select {
	case <-lines:
		t.Fatal("a partial line signalled")
	default:
	}
	_, _ = lw.Write([]byte(" on 127.0.0.1:7071\nmore\nand more\n")) // three lines, one pending signal
	select {
	case <-lines:
	default:
		t.Fatal("a whole line did not signal")
	}
}

// TestPollScheduleBacksOff: the timed polls double from the first wait up
// to the bound for the quick period, then come at the slow interval.
func TestPollScheduleBacksOff(t *testing.T) {
	s := pollSchedule{first: 2 * time.Millisecond, max: 10 * time.Millisecond, quickFor: time.Second, slow: 25 * time.Millisecond}
	var got []time.Duration
	wait := s.first
	for _, at := range []time.Duration{0, 2, 6, 14, 24, 34, 990, 1000, 1025} {
		got = append(got, wait)
		wait = s.next(wait, at*time.Millisecond)
	}
	ms := time.Millisecond
	assert.Equal(t, []time.Duration{2 * ms, 4 * ms, 8 * ms, 10 * ms, 10 * ms, 10 * ms, 10 * ms, 10 * ms, 25 * ms}, got)
}

// attempts is a transport that reports the outcome of every poll.
type attempts struct {
	rt   http.RoundTripper
	seen chan error
}

func (a attempts) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := a.rt.RoundTrip(req)
	select {
	case a.seen <- err:
	default:
	}
	return resp, err
}

func TestWaitReady(t *testing.T) {
	never := make(chan struct{})
	noErr := func() error { return nil }
	transport := func(t *testing.T) *http.Transport {
		tr := &http.Transport{DisableKeepAlives: true}
		t.Cleanup(tr.CloseIdleConnections)
		return tr
	}
	t.Run("404 means ready", func(t *testing.T) {
		srv := http.Server{Handler: http.NotFoundHandler()}
		port := testutil.ReservePort(t)
		ln := port.Listen(t)
		go func() { _ = srv.Serve(ln) }()
		t.Cleanup(func() { _ = srv.Close() })
		require.NoError(t, waitReady(context.Background(), transport(t), port.URL()+"/missing", 5*time.Second, never, noErr, nil, readinessPolls))
	})
	t.Run("refused until the worker listens", func(t *testing.T) {
		port := testutil.ReservePort(t)
		seen := make(chan error, 1)
		done := make(chan error, 1)
		go func() {
			done <- waitReady(context.Background(), attempts{transport(t), seen}, port.URL()+"/", 10*time.Second, never, noErr, nil, readinessPolls)
		}()
		select {
		case err := <-seen:
			require.ErrorContains(t, err, "connection refused", "the first poll is refused")
		case err := <-done:
			t.Fatalf("ready before anything listened: %v", err)
		case <-time.After(10 * time.Second):
			t.Fatal("no poll within 10s")
		}
		srv := http.Server{Handler: http.NotFoundHandler()}
		ln := port.Listen(t)
		go func() { _ = srv.Serve(ln) }()
		t.Cleanup(func() { _ = srv.Close() })
		select {
		case err := <-done:
			assert.NoError(t, err, "ready once the worker listens")
		case <-time.After(10 * time.Second):
			t.Fatal("not ready within 10s of listening")
		}
	})
	t.Run("a line of output polls at once", func(t *testing.T) {
		// The timed polls are an hour apart: only the worker's line of
		// output can bring the second poll.
		hourly := pollSchedule{first: time.Hour, max: time.Hour, quickFor: time.Hour, slow: time.Hour}
		port := testutil.ReservePort(t)
		seen := make(chan error, 1)
		output := make(chan struct{}, 1)
		done := make(chan error, 1)
		go func() {
			done <- waitReady(context.Background(), attempts{transport(t), seen}, port.URL()+"/", time.Hour, never, noErr, output, hourly)
		}()
		select {
		case err := <-seen:
			require.ErrorContains(t, err, "connection refused", "the first poll is refused")
		case <-time.After(10 * time.Second):
			t.Fatal("no poll within 10s")
		}
		srv := http.Server{Handler: http.NotFoundHandler()}
		ln := port.Listen(t)
		go func() { _ = srv.Serve(ln) }()
		t.Cleanup(func() { _ = srv.Close() })
		output <- struct{}{} // "serving … on 127.0.0.1:port"
		select {
		case err := <-done:
			assert.NoError(t, err, "ready at the line")
		case <-time.After(10 * time.Second):
			t.Fatal("the line of output brought no poll within 10s")
		}
	})
	t.Run("timeout", func(t *testing.T) {
		err := waitReady(context.Background(), transport(t), testutil.ReservePort(t).URL()+"/", 100*time.Millisecond, never, noErr, nil, readinessPolls)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "the worker was not ready within 100ms")
	})
	t.Run("process exit", func(t *testing.T) {
		exited := make(chan struct{})
		close(exited)
		err := waitReady(context.Background(), transport(t), testutil.ReservePort(t).URL()+"/", 5*time.Second, exited, func() error { return errors.New("exit status 7") }, nil, readinessPolls)
		assert.EqualError(t, err, "the worker process exited before it was ready: exit status 7")
	})
	t.Run("cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		err := waitReady(ctx, transport(t), testutil.ReservePort(t).URL()+"/", 5*time.Second, never, noErr, nil, readinessPolls)
		assert.ErrorIs(t, err, context.Canceled)
	})
}

// TestStartAndStopARealProcess starts sh as the worker: its output is
// copied line by line, it is never ready (nothing listens), and the
// readiness wait ends as soon as it exits.
func TestStartAndStopARealProcess(t *testing.T) {
	out := &testutil.SyncBuffer{}
	var exitedURL atomic.Pointer[string]
	rep := &events{}
	s := New(&Options{
		Spec:   Spec{Root: t.TempDir(), Worker: &config.Worker{ExecutablePath: "sh", Arguments: []string{"-c", "echo out; echo err >&2; exit 3"}}},
		Output: out, Logger: discard(), StartupTimeout: 10 * time.Second, StopTimeout: time.Second,
	}, rep)
	s.r = reporterFunc{events: rep, exited: func(url string) { exitedURL.Store(&url) }}
	err := s.Start(context.Background())
	require.EqualError(t, err, "the worker process exited before it was ready: exit status 3")
	assert.Contains(t, out.String(), "[handler] out\n")
	assert.Contains(t, out.String(), "[handler] err\n")
	require.NotNil(t, exitedURL.Load())
	assert.Regexp(t, `^http://127\.0\.0\.1:\d+$`, *exitedURL.Load())
	assert.Empty(t, rep.list(), "the URL of a worker that never got ready is not told")
	assert.NoError(t, s.Stop(), "nothing left to stop")
}
