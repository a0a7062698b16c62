package testutil

import (
	"net"
	"sync"
	"testing"
)

// HoldProxy is a TCP proxy on 127.0.0.1 in front of a service: while held,
// it accepts connections and reads what they send but forwards nothing in
// either direction, as storage that stalls does; Release lets the bytes
// through again. It stops when the test ends.
type HoldProxy struct {
	ln     net.Listener
	target string

	mu      sync.Mutex
	held    bool
	release chan struct{} // closed by Release
	conns   map[net.Conn]struct{}
	closed  bool
	wg      sync.WaitGroup
}

// StartHoldProxy starts a proxy to target (host:port).
func StartHoldProxy(t testing.TB, target string) *HoldProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("starting the proxy: %v", err)
	}
	p := &HoldProxy{ln: ln, target: target, release: make(chan struct{}), conns: map[net.Conn]struct{}{}}
	close(p.release)
	p.wg.Go(p.serve)
	t.Cleanup(p.close)
	return p
}

// Addr is the proxy's host:port.
func (p *HoldProxy) Addr() string { return p.ln.Addr().String() }

// Hold stops forwarding until Release.
func (p *HoldProxy) Hold() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.held {
		p.held = true
		p.release = make(chan struct{})
	}
}

// Release forwards again, what was held first.
func (p *HoldProxy) Release() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.held {
		p.held = false
		close(p.release)
	}
}

func (p *HoldProxy) gate() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.release
}

func (p *HoldProxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *HoldProxy) serve() {
	for {
		in, err := p.ln.Accept()
		if err != nil {
			return
		}
		out, err := net.Dial("tcp", p.target)
		if err != nil {
			in.Close()
			continue
		}
		if !p.track(in) || !p.track(out) {
			in.Close()
			out.Close()
			return
		}
		p.wg.Go(func() { p.pipe(out, in) })
		p.wg.Go(func() { p.pipe(in, out) })
	}
}

// pipe copies from src to dst, waiting at the gate before each write.
func (p *HoldProxy) pipe(dst, src net.Conn) {
	defer dst.Close()
	defer src.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			<-p.gate()
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil { // io.EOF or a closed connection
			return
		}
	}
}

func (p *HoldProxy) close() {
	p.mu.Lock()
	p.closed = true
	conns := p.conns
	p.conns = map[net.Conn]struct{}{}
	if p.held {
		p.held = false
		close(p.release)
	}
	p.mu.Unlock()
	p.ln.Close()
	for c := range conns {
		c.Close()
	}
	p.wg.Wait()
}
