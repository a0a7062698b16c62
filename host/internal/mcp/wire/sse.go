package wire

import (
	"context"
	"net/http"
	"sync"
	"time"
)

// NotifyWriteTimeout bounds writing one notification (or one event of a
// call's stream) to a client that does not read its stream.
const NotifyWriteTimeout = 10 * time.Second

// SSEWriter writes events to one stream; the stream's loop, the calls
// writing on it and its keep-alive timer share it.
type SSEWriter struct {
	mu     sync.Mutex
	w      http.ResponseWriter
	rc     *http.ResponseController
	closed bool // the handler returned: w must not be used
	// window is the write deadline set before each write: a stream lives
	// longer than any request deadline a server sets, but a client that
	// stops reading is dropped.
	window time.Duration
}

// NewSSEWriter returns the writer of the stream answering w; each write
// must complete within window.
func NewSSEWriter(w http.ResponseWriter, window time.Duration) *SSEWriter {
	return &SSEWriter{w: w, rc: http.NewResponseController(w), window: window}
}

// write writes p and flushes it; the caller holds mu.
func (s *SSEWriter) write(p []byte) error {
	if s.closed {
		return http.ErrHandlerTimeout
	}
	_ = s.rc.SetWriteDeadline(time.Now().Add(s.window))
	if _, err := s.w.Write(p); err != nil {
		return err
	}
	return s.rc.Flush()
}

// Event writes one event named name whose data is data, and flushes it.
func (s *SSEWriter) Event(name string, data []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	buf := GetBuffer()
	defer PutBuffer(buf)
	AppendEvent(buf, name, data)
	return s.write(buf.Bytes())
}

// EventParts writes one event whose data is parts one after the other,
// each written as it is: a large part shared by many streams (a task's
// result) is never copied into a frame.
func (s *SSEWriter) EventParts(name string, parts ...[]byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return http.ErrHandlerTimeout
	}
	_ = s.rc.SetWriteDeadline(time.Now().Add(s.window))
	buf := GetBuffer()
	defer PutBuffer(buf)
	BeginEvent(buf, name)
	for _, p := range parts {
		if buf.Len()+len(p) <= MaxPooled {
			buf.Write(p)
			continue
		}
		if _, err := s.w.Write(buf.Bytes()); err != nil {
			return err
		}
		buf.Reset()
		if _, err := s.w.Write(p); err != nil {
			return err
		}
	}
	EndEvent(buf)
	if _, err := s.w.Write(buf.Bytes()); err != nil {
		return err
	}
	return s.rc.Flush()
}

// Flush flushes the headers of a stream that has nothing to say yet.
func (s *SSEWriter) Flush() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return http.ErrHandlerTimeout
	}
	return s.rc.Flush()
}

// KeepAlive writes a comment every interval, from a timer, until the
// returned stop is called; a failed write (the client left) cancels the
// stream. stop returns once no write can happen any more.
func (s *SSEWriter) KeepAlive(every time.Duration, cancel context.CancelFunc) (stop func()) {
	var t *time.Timer
	s.mu.Lock()
	defer s.mu.Unlock()
	t = time.AfterFunc(every, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.closed {
			return
		}
		if err := s.write(KeepAliveComment); err != nil {
			cancel()
			return
		}
		t.Reset(every)
	})
	return func() {
		t.Stop()
		s.mu.Lock()
		s.closed = true
		s.mu.Unlock()
	}
}
