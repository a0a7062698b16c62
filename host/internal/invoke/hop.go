package invoke

import (
	"bufio"
	"bytes"
	"context"
	"errors"
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
	ans, reusable, err := readAnswer(br, limit)
	br.Reset(nil)
	hopReaders.Put(br)
	return ans, reusable, err
}

// readAnswer reads an answer, at most limit+1 bytes of its body.
func readAnswer(br *bufio.Reader, limit int64) (*hopAnswer, bool, error) {
	ans, n, err := readHead(br)
	if err != nil {
		return nil, false, err
	}
	if ans == nil { // not the usual form: net/http reads it, from the same bytes
		return readResponse(br, limit)
	}
	// The length is known: one slice of it, where reading to the end grows
	// one from 512 bytes (a 2 KiB answer: five slices).
	ans.body = make([]byte, min(n, limit+1))
	if _, err := io.ReadFull(br, ans.body); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF // as net/http says it
		}
		return nil, false, err
	}
	// Within the limit, the body was read to its end: the next answer
	// starts at its status line, unless the worker sent more than asked
	// (which the reader, given back, would lose).
	return ans, n <= limit && br.Buffered() == 0, nil
}

// readResponse reads an answer with net/http, for the forms readHead
// leaves to it.
func readResponse(br *bufio.Reader, limit int64) (*hopAnswer, bool, error) {
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return nil, false, err
	}
	var data []byte
	if n := resp.ContentLength; n >= 0 && n <= limit {
		data = make([]byte, n)
		_, err = io.ReadFull(resp.Body, data)
	} else {
		data, err = io.ReadAll(io.LimitReader(resp.Body, limit+1))
	}
	_ = resp.Body.Close()
	if err != nil {
		return nil, false, err
	}
	reusable := !resp.Close && int64(len(data)) <= limit && br.Buffered() == 0
	return &hopAnswer{status: resp.StatusCode, statusText: resp.Status, contentType: resp.Header.Get("Content-Type"), body: data},
		reusable, nil
}

// readHead reads the status line and header of the usual answer of a
// worker: HTTP/1.1, a final status with a body, one Content-Length, no
// Transfer-Encoding, the header within the reader's buffer. It returns the
// answer without its body and the body's length; the connection stays
// open. For any other form it returns a nil answer and consumes
// nothing, for net/http to read from the same bytes: http.ReadResponse,
// which the usual answer spends a map, a dozen strings and a body reader on,
// was a quarter of the hop's own CPU.
func readHead(br *bufio.Reader) (ans *hopAnswer, n int64, err error) {
	var head []byte
	for {
		buf, _ := br.Peek(br.Buffered())
		if end := headEnd(buf); end > 0 {
			head = buf[:end]
			break
		}
		if len(buf) == br.Size() {
			return nil, 0, nil // a header this large is net/http's to read
		}
		if _, err := br.Peek(len(buf) + 1); err != nil {
			if br.Buffered() > 0 {
				return nil, 0, nil // a cut answer: net/http says what is wrong with it
			}
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF // as net/http says it
			}
			return nil, 0, err
		}
	}
	if bytes.Count(head, lf) != bytes.Count(head, crlf) {
		return nil, 0, nil // lines ended by a bare LF: net/http's
	}
	line, rest, _ := bytes.Cut(head, crlf)
	status, ok := statusOf(line)
	if !ok {
		return nil, 0, nil
	}
	n = -1
	var contentType []byte
	typed := false
	for len(rest) > 2 {
		var field []byte
		field, rest, _ = bytes.Cut(rest, crlf)
		key, value, ok := bytes.Cut(field, colon)
		if !ok || len(key) == 0 || !valid(key, &nameBytes) || !valid(value, &valueBytes) {
			return nil, 0, nil // continuation lines and malformed fields: net/http's
		}
		value = bytes.Trim(value, " \t")
		switch {
		case bytes.EqualFold(key, []byte("Content-Length")):
			if n >= 0 {
				return nil, 0, nil
			}
			if n = lengthOf(value); n < 0 {
				return nil, 0, nil
			}
		case bytes.EqualFold(key, []byte("Content-Type")):
			if !typed { // the first, as Header.Get says
				contentType, typed = value, true
			}
		case bytes.EqualFold(key, []byte("Transfer-Encoding")):
			return nil, 0, nil
		case bytes.EqualFold(key, []byte("Connection")):
			if !bytes.EqualFold(value, []byte("keep-alive")) {
				return nil, 0, nil
			}
		}
	}
	if n < 0 {
		return nil, 0, nil
	}
	ans = &hopAnswer{status: status, statusText: statusText(line[len("HTTP/1.1 "):]), contentType: mediaType(contentType)}
	_, _ = br.Discard(len(head))
	return ans, n, nil
}

// headEnd is the length of the header at the start of buf, through the
// empty line that ends it (an LF alone, or CR LF), or 0.
func headEnd(buf []byte) int {
	for i := 0; ; {
		j := bytes.IndexByte(buf[i:], '\n')
		if j < 0 {
			return 0
		}
		i += j + 1
		if len(buf[i:]) > 0 && buf[i] == '\n' {
			return i + 1
		}
		if len(buf[i:]) > 1 && buf[i] == '\r' && buf[i+1] == '\n' {
			return i + 2
		}
	}
}

var (
	lf    = []byte("\n")
	crlf  = []byte("\r\n")
	colon = []byte(":")
)

// nameBytes and valueBytes are the bytes net/http takes in a field's name
// (a token) and in its value (no control byte but HTAB).
var nameBytes, valueBytes = func() (name, value [256]bool) {
	for c := range 256 {
		name[c] = 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", byte(c)) >= 0
		value[c] = c == '\t' || 0x20 <= c && c != 0x7f
	}
	return
}()

// valid reports whether every byte of b is in set.
func valid(b []byte, set *[256]bool) bool {
	for _, c := range b {
		if !set[c] {
			return false
		}
	}
	return true
}

// statusOf reads a status line "HTTP/1.1 200 OK" of a final status that
// has a body (not 1xx, 204 or 304).
func statusOf(line []byte) (int, bool) {
	const proto = "HTTP/1.1 "
	if len(line) < len(proto)+3 || string(line[:len(proto)]) != proto || (len(line) > len(proto)+3 && line[len(proto)+3] != ' ') {
		return 0, false
	}
	code := 0
	for _, d := range line[len(proto) : len(proto)+3] {
		if d < '0' || d > '9' {
			return 0, false
		}
		code = code*10 + int(d-'0')
	}
	if code < 200 || code == http.StatusNoContent || code == http.StatusNotModified {
		return 0, false
	}
	return code, true
}

// lengthOf is a Content-Length's value, or -1.
func lengthOf(v []byte) int64 {
	if len(v) == 0 || len(v) > 18 {
		return -1
	}
	var n int64
	for _, d := range v {
		if d < '0' || d > '9' {
			return -1
		}
		n = n*10 + int64(d-'0')
	}
	return n
}

// statusText and mediaType are the status and Content-Type of an answer,
// without a string made for the usual ones.
func statusText(b []byte) string {
	if string(b) == "200 OK" {
		return "200 OK"
	}
	return string(b)
}

func mediaType(b []byte) string {
	switch string(b) {
	case "":
		return ""
	case "application/json":
		return "application/json"
	case "application/json; charset=utf-8":
		return "application/json; charset=utf-8"
	}
	return string(b)
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
