package guard

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/funcmcp/funcmcp/host/internal/owner"
)

// ConnLimits bounds the open client connections: Global in all, PerAddress
// from one client address (its host, whatever the port). GlobalSetting and
// PerAddressSetting name what changes each, for refusals.
type ConnLimits struct {
	Global, PerAddress               int
	GlobalSetting, PerAddressSetting string
	// Refused, when set, hears of each connection refused (telemetry).
	Refused func()
}

// Listener accepts connections within [ConnLimits]. Under pressure it
// closes an idle keep-alive connection to let a new one in: when an address
// is at its bound, that address's longest idle one; when the server is, the
// longest idle one of the address holding the most. Only when none is idle
// is the new connection answered 503 (naming the limit) and closed at once,
// instead of waiting unseen in the backlog. It learns which connections are
// idle from [Listener.ConnState], which must be the http.Server's ConnState.
type Listener struct {
	net.Listener
	limits ConnLimits
	open   *owner.Counter // connections per address

	mu   sync.Mutex
	idle map[*limitConn]time.Time // idle keep-alive connections, since when
}

// LimitListener returns ln accepting connections within l.
func LimitListener(ln net.Listener, l ConnLimits) *Listener {
	return &Listener{Listener: ln, limits: l, idle: map[*limitConn]time.Time{},
		open: owner.NewCounter("open connections", l.PerAddressSetting,
			owner.Limit{PerOwner: int64(l.PerAddress), Global: int64(l.Global)})}
}

// Accept returns the next connection within the limits.
func (l *Listener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		lc, refusal := l.admit(c)
		if lc != nil {
			return lc, nil
		}
		if l.limits.Refused != nil {
			l.limits.Refused()
		}
		refuse(c, refusal)
	}
}

// admit counts c against the limits, closing idle connections to make room
// where it can; it returns the refusal when it cannot.
func (l *Listener) admit(c net.Conn) (*limitConn, string) {
	addr := owner.Address(c.RemoteAddr().String())
	for range 3 { // the address's bound, then the server's: each frees one
		release, err := l.open.Take(addr, 1)
		if err == nil {
			return &limitConn{Conn: c, l: l, addr: addr, release: release}, ""
		}
		le, ok := errors.AsType[*owner.LimitError](err)
		if !ok {
			return nil, err.Error()
		}
		victim := l.victim(addr, le.Global)
		if victim == nil {
			msg, setting := fmt.Sprintf("too many open connections from this address (the limit is %d)", le.Limit), l.limits.PerAddressSetting
			if le.Global {
				msg, setting = fmt.Sprintf("too many open connections (the limit is %d)", le.Limit), l.limits.GlobalSetting
			}
			if setting != "" {
				msg += "; " + setting + " changes it"
			}
			return nil, msg
		}
		_ = victim.Close() // gives its count back at once
	}
	return nil, "too many open connections"
}

// victim picks the idle connection to close: addr's longest idle one, or,
// when any is the server's, the longest idle one of the address holding
// the most connections; nil when there is none.
func (l *Listener) victim(addr owner.ID, server bool) *limitConn {
	l.mu.Lock()
	defer l.mu.Unlock()
	var (
		best      *limitConn
		bestSince time.Time
		bestHeld  int64
	)
	for c, since := range l.idle {
		if !server && c.addr != addr {
			continue
		}
		held := int64(0)
		if server {
			held = l.open.Held(c.addr)
		}
		if best == nil || held > bestHeld || (held == bestHeld && since.Before(bestSince)) {
			best, bestSince, bestHeld = c, since, held
		}
	}
	if best != nil {
		delete(l.idle, best)
	}
	return best
}

// ConnState tracks which connections are idle keep-alive connections (they
// served a request and wait for the next): set it as the http.Server's
// ConnState.
func (l *Listener) ConnState(c net.Conn, state http.ConnState) {
	lc, ok := c.(*limitConn)
	if !ok {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if state == http.StateIdle {
		l.idle[lc] = time.Now()
	} else {
		delete(l.idle, lc)
	}
}

// Idle returns the number of idle keep-alive connections now.
func (l *Listener) Idle() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.idle)
}

// Open returns the number of open connections now.
func (l *Listener) Open() int64 { return l.open.Total() }

// refuse answers a connection over the limits 503 with the reason, and
// closes it.
func refuse(c net.Conn, reason string) {
	body := reason + "\n"
	_ = c.SetWriteDeadline(time.Now().Add(time.Second))
	_, _ = fmt.Fprintf(c, "HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	_ = c.Close()
}

// limitConn is an admitted connection; closing it gives its count back.
type limitConn struct {
	net.Conn
	l       *Listener
	addr    owner.ID
	release func()
	once    sync.Once
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		c.release()
		c.l.mu.Lock()
		delete(c.l.idle, c)
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
