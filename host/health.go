package host

import (
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// health is the worker's state as calls and /admin/host/status see it.
type health struct {
	reason atomic.Pointer[string] // non-empty while unhealthy
}

// unhealthyReason returns why the worker is unhealthy, "" when it is not.
func (h *Host) unhealthyReason() string {
	if r := h.health.reason.Load(); r != nil {
		return *r
	}
	return ""
}

func (h *Host) setUnhealthy(reason string) {
	h.health.reason.Store(&reason)
	h.state.Store(StateUnhealthy)
}

func (h *Host) setHealthy() {
	if h.health.reason.Swap(nil) != nil {
		h.state.CompareAndSwap(StateUnhealthy, StateRunning)
	}
}

// limitListener accepts at most max connections at once; one more is
// answered 503 and closed at once instead of waiting unseen in the backlog.
type limitListener struct {
	net.Listener
	max  int
	mu   sync.Mutex
	open int
}

func newLimitListener(ln net.Listener, max int) net.Listener {
	return &limitListener{Listener: ln, max: max}
}

const busyResponse = "HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Type: text/plain\r\nContent-Length: 26\r\n\r\ntoo many open connections\n"

func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		l.mu.Lock()
		ok := l.open < l.max
		if ok {
			l.open++
		}
		l.mu.Unlock()
		if ok {
			return &limitConn{Conn: c, l: l}, nil
		}
		_ = c.SetWriteDeadline(time.Now().Add(time.Second))
		_, _ = c.Write([]byte(busyResponse))
		_ = c.Close()
	}
}

type limitConn struct {
	net.Conn
	l    *limitListener
	once sync.Once
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		c.l.mu.Lock()
		c.l.open--
		c.l.mu.Unlock()
	})
	return err
}

// deadlines bounds each request: its body must arrive within ReadTimeout
// (the deadline is lifted once it has, so a long call is not cut) and its
// response must be written within the call timeout plus a minute, which
// leaves a call's SSE stream all the time the call may take.
func (h *Host) deadlines(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		if err := rc.SetReadDeadline(time.Now().Add(h.opts.ReadTimeout)); err == nil && r.Body != nil && r.Body != http.NoBody {
			r.Body = &liftOnEOF{ReadCloser: r.Body, rc: rc}
		} else if r.Body == nil || r.Body == http.NoBody {
			_ = rc.SetReadDeadline(time.Time{})
		}
		if h.opts.CallTimeout > 0 {
			_ = rc.SetWriteDeadline(time.Now().Add(h.opts.CallTimeout + time.Minute))
		}
		next.ServeHTTP(w, r)
	})
}

// liftOnEOF clears the read deadline once the body has been read whole.
type liftOnEOF struct {
	io.ReadCloser
	rc   *http.ResponseController
	done bool
}

func (b *liftOnEOF) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF && !b.done {
		b.done = true
		_ = b.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}
