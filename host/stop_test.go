package host

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/host/internal/guard"
)

// runWorkerHost runs a host over the test worker process with opts.
func runWorkerHost(t *testing.T, opts Options) (*Host, *syncBuffer, context.CancelFunc, <-chan error) {
	t.Helper()
	requireUnix(t)
	return runWorkerHostAt(t, processApp(t, workerHostJSON), opts)
}

// runWorkerHostReady runs a host over the app at root with default options;
// stop cancels it and returns Run's error.
func runWorkerHostReady(t *testing.T, root string) (*Host, *syncBuffer, context.CancelFunc, func() error) {
	t.Helper()
	h, logs, cancel, done := runWorkerHostAt(t, root, Options{})
	return h, logs, cancel, func() error {
		cancel()
		select {
		case err := <-done:
			return err
		case <-time.After(30 * time.Second):
			return errors.New("the host did not stop")
		}
	}
}

func runWorkerHostAt(t *testing.T, root string, opts Options) (*Host, *syncBuffer, context.CancelFunc, <-chan error) {
	t.Helper()
	logs := &syncBuffer{}
	opts.ScriptRoot, opts.Addr, opts.Logger, opts.SystemKey = root, "127.0.0.1:0", newLogger(logs), testKey
	if opts.Output == nil {
		opts.Output = io.Discard
	}
	h, err := New(&opts)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	finished := make(chan struct{})
	go func() { done <- h.Run(ctx); close(finished) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-finished:
		case <-time.After(30 * time.Second):
			t.Error("the host did not stop")
		}
	})
	select {
	case <-h.Ready():
	case err := <-done:
		t.Fatalf("Run returned: %v\n%s", err, logs)
	case <-time.After(20 * time.Second):
		t.Fatalf("not ready\n%s", logs)
	}
	return h, logs, cancel, done
}

func TestGracefulStop(t *testing.T) {
	out := &syncBuffer{}
	h, logs, stop, done := runWorkerHost(t, Options{DrainTimeout: time.Second, Output: out})
	base := strings.TrimSuffix(h.Endpoint(), MCPPath)
	short := goRPC(base, "2025-06-18", "", callBody(1, "sleep", `{"ms":300}`))  // finishes within the drain bound
	long := goRPC(base, "2025-06-18", "", callBody(2, "sleep", `{"ms":20000}`)) // does not
	// Both calls are running in the worker (it prints each invocation)
	// before the host is told to stop.
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Equal(c, 2, strings.Count(out.String(), "[handler] invoked sleep"))
	}, 10*time.Second, 5*time.Millisecond, "the calls did not reach the worker\n%s", logs)
	stop()

	r := await(t, short, 10*time.Second, "the short call")
	assert.Equal(t, http.StatusOK, r.status)
	res := callResult(t, r.body)
	assert.False(t, res.IsError, "a call that finishes within the drain bound gets its result: %s", r.body)

	r = await(t, long, 10*time.Second, "the long call")
	assert.Equal(t, http.StatusOK, r.status)
	assert.JSONEq(t, `{"jsonrpc":"2.0","id":2,"error":{"code":-32000,"message":"`+guard.ShuttingDownMessage+`"}}`, string(r.body))
	select {
	case err := <-done:
		assert.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return")
	}
	assert.Contains(t, logs.String(), "worker process stopped")
	_, err := net.DialTimeout("tcp", strings.TrimPrefix(base, "http://"), time.Second)
	assert.Error(t, err, "a stopped host accepts no connection")
}

func TestConnectionDeadlines(t *testing.T) {
	h, _, _, _ := runWorkerHost(t, Options{ReadHeaderTimeout: 300 * time.Millisecond, ReadTimeout: 500 * time.Millisecond, IdleTimeout: 700 * time.Millisecond})
	addr := strings.TrimPrefix(strings.TrimSuffix(h.Endpoint(), MCPPath), "http://")
	closedWithin := func(t *testing.T, conn net.Conn, bound time.Duration) {
		t.Helper()
		_ = conn.SetReadDeadline(time.Now().Add(bound))
		_, err := io.Copy(io.Discard, conn)
		assert.NoError(t, err, "the server closed the connection within %v", bound)
	}
	t.Run("header never finished", func(t *testing.T) {
		conn, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		defer conn.Close()
		_, _ = io.WriteString(conn, "POST "+MCPPath+" HTTP/1.1\r\nHost: 127.0.0.1\r\n")
		closedWithin(t, conn, 5*time.Second)
	})
	t.Run("body never finished", func(t *testing.T) {
		conn, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		defer conn.Close()
		_, _ = io.WriteString(conn, "POST "+MCPPath+" HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nX-Functions-Key: "+testKey+"\r\nContent-Length: 1000\r\n\r\n{\"jsonrpc\":")
		closedWithin(t, conn, 5*time.Second)
	})
	t.Run("idle keep-alive", func(t *testing.T) {
		conn, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		defer conn.Close()
		body := callBody(1, "sleep", `{"ms":1}`)
		_, _ = io.WriteString(conn, "POST "+MCPPath+" HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json\r\nX-Functions-Key: "+testKey+"\r\nContent-Length: "+itoa(len(body))+"\r\n\r\n"+body)
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		assert.Equal(t, http.StatusOK, resp.StatusCode)
		closedWithin(t, conn, 5*time.Second)
	})
	t.Run("a call longer than the read timeout still answers", func(t *testing.T) {
		base := strings.TrimSuffix(h.Endpoint(), MCPPath)
		status, body := rpc(t, base, "2025-06-18", callBody(1, "sleep", `{"ms":1500}`))
		require.Equal(t, http.StatusOK, status)
		assert.False(t, callResult(t, body).IsError, "%s", body)
	})
}

// TestConnectionLimit: Run serves through the connection-limit listener
// and tells it which connections are idle: at the bound a new connection
// closes an idle keep-alive one (its behaviour is guard's
// TestLimitListener and TestLimitListenerClosesIdleConnections).
func TestConnectionLimit(t *testing.T) {
	root := weatherApp(t, `{"version":"2.0"}`)
	h, base := serveTestHost(t, root, newFakeWorker(t).srv.URL, &Options{MaxConnections: 2})
	addr := strings.TrimPrefix(base, "http://")
	statusRequest := "GET " + StatusPath + " HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Functions-Key: " + testKey + "\r\n\r\n"
	// status sends the status request on c and returns the answer's
	// status, or the error when c was closed.
	status := func(c net.Conn, br *bufio.Reader) (int, error) {
		if _, err := io.WriteString(c, statusRequest); err != nil {
			return 0, err
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			return 0, err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	// Three connections, each answered; the third closes the first, then
	// idle. The server marks a connection idle after its client has read
	// the answer: each connection is dialled once the ones before it are
	// marked, else the first may not be a candidate yet.
	var conns []net.Conn
	var readers []*bufio.Reader
	for i := range 3 {
		require.Eventually(t, func() bool { return h.conns.Idle() == i }, 10*time.Second, time.Millisecond,
			"the server marks the answered connections idle")
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		t.Cleanup(func() { _ = c.Close() })
		require.NoError(t, c.SetDeadline(time.Now().Add(10*time.Second)))
		br := bufio.NewReader(c)
		code, err := status(c, br)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, code)
		conns, readers = append(conns, c), append(readers, br)
	}
	_, err := status(conns[0], readers[0])
	assert.Error(t, err, "the longest idle connection made room")
	code, err := status(conns[2], readers[2])
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, code)
}

func itoa(n int) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			return string(b[i:])
		}
	}
}
