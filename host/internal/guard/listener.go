package guard

import (
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// limitListener accepts at most max connections at once; one more is
// answered 503 and closed at once instead of waiting unseen in the backlog.
type limitListener struct {
	net.Listener
	max  int
	mu   sync.Mutex
	open int
}

// LimitListener returns ln accepting at most max open connections.
func LimitListener(ln net.Listener, max int) net.Listener {
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

// Deadlines bounds each request: its body must arrive within readTimeout
// (the deadline is lifted once it has, so a long call is not cut) and, when
// writeWithin is positive, its response must be written within it, which
// the host sets to leave a call's SSE stream all the time the call may take.
func Deadlines(next http.Handler, readTimeout, writeWithin time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		if err := rc.SetReadDeadline(time.Now().Add(readTimeout)); err == nil && r.Body != nil && r.Body != http.NoBody {
			r.Body = &liftOnEOF{ReadCloser: r.Body, rc: rc}
		} else if r.Body == nil || r.Body == http.NoBody {
			_ = rc.SetReadDeadline(time.Time{})
		}
		if writeWithin > 0 {
			_ = rc.SetWriteDeadline(time.Now().Add(writeWithin))
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
