package invoke

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hopServer serves POST /{fn} with handler and counts the connections it
// accepted.
func hopServer(t *testing.T, handler http.HandlerFunc) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var conns atomic.Int32
	srv := httptest.NewUnstartedServer(handler)
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, &conns
}

func hopCall(t *testing.T, h *hop, srv *httptest.Server, body string) (*hopAnswer, error) {
	t.Helper()
	addr := hopAddr(srv.URL)
	require.NotEmpty(t, addr)
	return h.do(context.Background(), &hopRequest{addr: addr, path: "/fn", header: http.Header{"X-Test": {"1"}}, body: []byte(body)}, 1<<20)
}

func TestHopKeepsConnectionsAlive(t *testing.T) {
	srv, conns := hopServer(t, func(w http.ResponseWriter, r *http.Request) {
		data, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"path":"`+r.URL.Path+`","test":"`+r.Header.Get("X-Test")+`","body":`+string(data)+`}`)
	})
	h := &hop{maxIdle: 2}
	for range 5 {
		ans, err := hopCall(t, h, srv, `{"a":1}`)
		require.NoError(t, err)
		assert.Equal(t, http.StatusOK, ans.status)
		assert.Equal(t, "application/json", ans.contentType)
		assert.JSONEq(t, `{"path":"/fn","test":"1","body":{"a":1}}`, string(ans.body))
	}
	assert.Equal(t, int32(1), conns.Load(), "one connection carried every call")
}

func TestHopDialsAgainWhenTheServerClosedTheConnection(t *testing.T) {
	srv, conns := hopServer(t, func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") })
	h := &hop{maxIdle: 2}
	_, err := hopCall(t, h, srv, "{}")
	require.NoError(t, err)
	srv.CloseClientConnections() // as a worker's keep-alive timeout does
	ans, err := hopCall(t, h, srv, "{}")
	require.NoError(t, err)
	assert.Equal(t, "ok", string(ans.body))
	assert.Equal(t, int32(2), conns.Load())
}

func TestHopAnswers(t *testing.T) {
	tests := []struct {
		name    string
		handler http.HandlerFunc
		status  int
		body    string
		reused  bool
	}{
		{"chunked", func(w http.ResponseWriter, _ *http.Request) {
			_, _ = io.WriteString(w, "par")
			w.(http.Flusher).Flush()
			_, _ = io.WriteString(w, "ts")
		}, 200, "parts", true},
		{"connection close", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Connection", "close")
			_, _ = io.WriteString(w, "bye")
		}, 200, "bye", false},
		{"error status", func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, "no such function", http.StatusNotFound)
		}, 404, "no such function\n", true},
		{"redirect not followed", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "/elsewhere", http.StatusFound)
		}, 302, "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv, conns := hopServer(t, tc.handler)
			h := &hop{maxIdle: 2}
			for range 2 {
				ans, err := hopCall(t, h, srv, "{}")
				require.NoError(t, err)
				assert.Equal(t, tc.status, ans.status)
				if tc.body != "" {
					assert.Equal(t, tc.body, string(ans.body))
				}
			}
			want := int32(2)
			if tc.reused {
				want = 1
			}
			assert.Equal(t, want, conns.Load())
		})
	}
}

func TestHopLimitsTheAnswer(t *testing.T) {
	srv, conns := hopServer(t, func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, strings.Repeat("x", 100)) })
	h := &hop{maxIdle: 2}
	for range 2 {
		ans, err := h.do(context.Background(), &hopRequest{addr: hopAddr(srv.URL), path: "/fn", body: nil}, 10)
		require.NoError(t, err)
		assert.Len(t, ans.body, 11, "limit+1 bytes: the caller sees it is too large")
	}
	assert.Equal(t, int32(2), conns.Load(), "a connection with unread answer is not reused")
}

func TestHopStopsWithItsContext(t *testing.T) {
	release, started := make(chan struct{}), make(chan struct{}, 1)
	srv, _ := hopServer(t, func(w http.ResponseWriter, r *http.Request) {
		started <- struct{}{}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	defer close(release)
	h := &hop{maxIdle: 2}
	ctx, cancel := context.WithCancelCause(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := h.do(ctx, &hopRequest{addr: hopAddr(srv.URL), path: "/fn"}, 10)
		done <- err
	}()
	<-started
	cause := io.ErrUnexpectedEOF
	cancel(cause)
	err := <-done
	assert.ErrorIs(t, err, cause)
	assert.Empty(t, h.idle, "the connection is not kept")
}

func TestHopCannotConnect(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	_, err = (&hop{}).do(context.Background(), &hopRequest{addr: addr, path: "/fn"}, 10)
	assert.True(t, neverSent(err), "a refused connection is a call never sent: %v", err)
}

func TestHopAddr(t *testing.T) {
	for base, want := range map[string]string{
		"http://127.0.0.1:7071": "127.0.0.1:7071",
		"http://[::1]:80":       "[::1]:80",
		"https://127.0.0.1:1":   "",
		"http://127.0.0.1:1/x":  "",
		"http://127.0.0.1":      "",
		"http://u@host:1":       "",
	} {
		assert.Equal(t, want, hopAddr(base), base)
	}
}

// TestHopIdleConnectionsHoldNoBuffers: a kept-alive connection waiting for
// the next call holds no read or write buffer (funchost keeps one per call
// that may run at once), so that the memory of the connections a burst
// opened is the sockets' alone.
func TestHopIdleConnectionsHoldNoBuffers(t *testing.T) {
	const n = 32
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	// The server answers once n requests have arrived, so that the calls
	// hold n connections at once; it keeps what it allocated until the end.
	var (
		arrived  atomic.Int32
		all      = make(chan struct{})
		served   sync.WaitGroup
		keptMu   sync.Mutex
		kept     []any
		accepted = make(chan struct{}, n)
	)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			served.Add(1)
			accepted <- struct{}{}
			go func() {
				defer served.Done()
				buf := make([]byte, 0, 4096)
				keptMu.Lock()
				kept = append(kept, c, &buf)
				keptMu.Unlock()
				chunk := make([]byte, 512)
				for {
					k, err := c.Read(chunk)
					if err != nil {
						return
					}
					buf = append(buf, chunk[:k]...)
					if !strings.HasSuffix(string(buf), "\r\n\r\n{}") {
						continue
					}
					buf = buf[:0]
					if arrived.Add(1) == n {
						close(all)
					}
					<-all
					_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
				}
			}()
		}
	}()
	h := &hop{maxIdle: n}
	addr := ln.Addr().String()
	var calls sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		calls.Go(func() {
			_, err := h.do(context.Background(), &hopRequest{addr: addr, path: "/fn", body: []byte("{}")}, 1<<20)
			errs <- err
		})
	}
	calls.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.Len(t, accepted, n)
	require.Len(t, h.idle, n)

	var before, after runtime.MemStats
	runtime.GC()
	runtime.GC() // the second empties the buffer pools, which are not the connections'
	runtime.ReadMemStats(&before)
	h.closeIdle()
	served.Wait() // the server has seen every connection close
	runtime.GC()
	runtime.ReadMemStats(&after)
	perConn := (int64(before.HeapAlloc) - int64(after.HeapAlloc)) / n
	assert.Less(t, perConn, int64(2048), "bytes held by each idle connection")
	keptMu.Lock()
	runtime.KeepAlive(kept)
	keptMu.Unlock()
}

// TestHopReadsASizedAnswerOnce: an answer that says its length is read into
// one slice of that length, not grown as it is read.
func TestHopReadsASizedAnswerOnce(t *testing.T) {
	answer := strings.Repeat("x", 2199)
	srv, _ := hopServer(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Length", "2199")
		_, _ = io.WriteString(w, answer)
	})
	ans, err := hopCall(t, &hop{maxIdle: 2}, srv, "{}")
	require.NoError(t, err)
	assert.Equal(t, answer, string(ans.body))
	assert.Equal(t, len(ans.body), cap(ans.body))
}
