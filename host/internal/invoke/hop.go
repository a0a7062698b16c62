package invoke

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// hop is the HTTP/1.1 client of invocations to a worker at an http://
// address. A call writes its request and reads the answer on the calling
// goroutine over a kept-alive connection: net/http's Transport hands each
// request to a writer goroutine and each answer back from a reader
// goroutine, two wake-ups per call that cost a loopback hop as much as the
// round trip itself. The wire is the same HTTP/1.1 (plain request, answer
// with Content-Length or chunked), so any custom handler serves it.
type hop struct {
	dialer net.Dialer

	mu      sync.Mutex
	idle    []*hopConn // most recently used last
	maxIdle int
}

// hopConn is a kept-alive connection to one worker address. It holds no
// buffer: a call takes a writer for its request and a reader for its
// answer from the pools below and gives them back, so that the idle
// connections kept for the next burst cost their sockets alone.
type hopConn struct {
	addr string
	c    net.Conn
	used time.Time
}

// The buffers of the calls in progress. A writer is held while a request
// is written; a reader while its answer is awaited and read, the size of
// net/http's (an answer's body larger than it is read straight into the
// body's slice).
var (
	hopWriters = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, 8<<10) }}
	hopReaders = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 4<<10) }}
)

// hopIdleTimeout is how long an idle connection is kept.
const hopIdleTimeout = 90 * time.Second

// hopRequest is one invocation request.
type hopRequest struct {
	addr   string      // host:port
	path   string      // /{function}, nothing to escape
	header http.Header // besides Host, Content-Length
	body   []byte
}

// hopAnswer is the worker's answer, read in full (up to the limit).
type hopAnswer struct {
	status      int
	statusText  string // "200 OK"
	contentType string
	body        []byte
}

// do sends req and reads the answer, at most limit+1 bytes of its body. A
// call that cannot connect fails with the dialer's *net.OpError (see
// neverSent). When ctx ends the connection is closed and the call fails.
func (h *hop) do(ctx context.Context, req *hopRequest, limit int64) (*hopAnswer, error) {
	conn, err := h.get(ctx, req.addr)
	if err != nil {
		return nil, err
	}
	stop := context.AfterFunc(ctx, func() { _ = conn.c.SetDeadline(time.Unix(1, 0)) })
	ans, reusable, err := conn.roundTrip(req, limit)
	if !stop() { // ctx ended: the connection's deadline is spent
		reusable = false
		if err == nil {
			err = context.Cause(ctx)
		}
	}
	if err != nil {
		if ctxErr := context.Cause(ctx); ctxErr != nil {
			err = fmt.Errorf("%w (%w)", ctxErr, err)
		}
		reusable = false
	}
	if reusable {
		h.put(conn)
	} else {
		_ = conn.c.Close()
	}
	return ans, err
}

// roundTrip writes req and reads the answer; reusable says whether the
// connection may carry another request.
func (c *hopConn) roundTrip(req *hopRequest, limit int64) (*hopAnswer, bool, error) {
	bw := hopWriters.Get().(*bufio.Writer)
	bw.Reset(c.c)
	bw.WriteString("POST ")
	bw.WriteString(req.path)
	bw.WriteString(" HTTP/1.1\r\nHost: ")
	bw.WriteString(req.addr)
	bw.WriteString("\r\nContent-Length: ")
	bw.WriteString(strconv.Itoa(len(req.body)))
	bw.WriteString("\r\n")
	for k, vs := range req.header {
		for _, v := range vs {
			bw.WriteString(k)
			bw.WriteString(": ")
			bw.WriteString(v)
			bw.WriteString("\r\n")
		}
	}
	bw.WriteString("\r\n")
	bw.Write(req.body)
	err := bw.Flush()
	bw.Reset(nil)
	hopWriters.Put(bw)
	if err != nil {
		return nil, false, err
	}
	br := hopReaders.Get().(*bufio.Reader)
	br.Reset(c.c)
	defer func() {
		br.Reset(nil)
		hopReaders.Put(br)
	}()
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return nil, false, err
	}
	var data []byte
	if n := resp.ContentLength; n >= 0 && n <= limit {
		// The length is known: one slice of it, where reading to the end
		// grows one from 512 bytes (a 2 KiB answer: five slices).
		data = make([]byte, n)
		_, err = io.ReadFull(resp.Body, data)
	} else {
		data, err = io.ReadAll(io.LimitReader(resp.Body, limit+1))
	}
	_ = resp.Body.Close()
	if err != nil {
		return nil, false, err
	}
	// Within the limit, the body was read to its end: the next answer
	// starts at its status line, unless the worker sent more than asked
	// (which the reader, given back, would lose).
	reusable := !resp.Close && int64(len(data)) <= limit && br.Buffered() == 0
	return &hopAnswer{status: resp.StatusCode, statusText: resp.Status, contentType: resp.Header.Get("Content-Type"), body: data},
		reusable, nil
}

// get returns an idle connection to addr that is still open, or dials one.
func (h *hop) get(ctx context.Context, addr string) (*hopConn, error) {
	now := time.Now()
	for {
		h.mu.Lock()
		n := len(h.idle)
		if n == 0 {
			h.mu.Unlock()
			break
		}
		c := h.idle[n-1]
		h.idle = h.idle[:n-1]
		h.mu.Unlock()
		if c.addr == addr && now.Sub(c.used) < hopIdleTimeout && stillOpen(c.c) {
			return c, nil
		}
		_ = c.c.Close()
	}
	nc, err := h.dialer.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	return &hopConn{addr: addr, c: nc}, nil
}

// put keeps c for the next call, unless enough are kept.
func (h *hop) put(c *hopConn) {
	c.used = time.Now()
	_ = c.c.SetDeadline(time.Time{})
	h.mu.Lock()
	if len(h.idle) < h.maxIdle {
		h.idle = append(h.idle, c)
		c = nil
	}
	h.mu.Unlock()
	if c != nil {
		_ = c.c.Close()
	}
}

// closeIdle closes every idle connection.
func (h *hop) closeIdle() {
	h.mu.Lock()
	idle := h.idle
	h.idle = nil
	h.mu.Unlock()
	for _, c := range idle {
		_ = c.c.Close()
	}
}

// hopAddr is the host:port of an http:// base URL without a path, or ""
// when invocations to base go through net/http instead.
func hopAddr(base string) string {
	rest, ok := strings.CutPrefix(base, "http://")
	if !ok || rest == "" || strings.ContainsAny(rest, "/?#@") {
		return ""
	}
	if _, _, err := net.SplitHostPort(rest); err != nil {
		return ""
	}
	return rest
}
