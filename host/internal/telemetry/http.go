package telemetry

import (
	"net/http"
	"time"

	"github.com/funcmcp/funcmcp/host/internal/mcp"
	"github.com/funcmcp/funcmcp/internal/otelsetup"
)

// HTTP wraps the host's endpoints: the request's context carries the
// client's HTTP trace context (traceparent, tracestate, baggage), so that
// what the request does outside the MCP chain (a message forwarded to
// another instance) joins the client's trace, and a refusal (401, 403,
// 413, 429, 503) is counted in funcmcp.requests.refused. next as is when t
// is nil.
func (t *Telemetry) HTTP(next http.Handler) http.Handler {
	if t == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Traceparent") != "" {
			r = r.WithContext(t.prop.Extract(r.Context(), otelsetup.HeaderCarrier(r.Header)))
		}
		sw := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r)
		t.RefusedStatus(r.Context(), sw.status)
	})
}

// Sessions wraps the Streamable HTTP endpoint to record
// mcp.server.session.duration when a session ends: on a DELETE carrying
// its Mcp-Session-Id (the client ends it), or on the first request whose
// session has expired (answered 404: its duration is its lifetime).
// session reads a request's session (mcp.Handler.Session). next as is
// when t is nil.
func (t *Telemetry) Sessions(next http.Handler, session func(*http.Request) (mcp.SessionInfo, bool)) http.Handler {
	if t == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodDelete {
			if s, ok := session(r); ok && !s.Expired {
				t.SessionEnded(r.Context(), time.Since(s.Began), s.Version, "")
			}
			next.ServeHTTP(w, r)
			return
		}
		sw := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r)
		if sw.status == http.StatusNotFound && r.Header.Get("Mcp-Session-Id") != "" {
			if s, ok := session(r); ok && s.Expired {
				t.SessionEnded(r.Context(), s.Expires.Sub(s.Began), "", "")
			}
		}
	})
}

// Stream wraps the legacy SSE stream endpoint: a stream that opened (200)
// is a session, whose duration is recorded when it closes. next as is
// when t is nil.
func (t *Telemetry) Stream(next http.Handler) http.Handler {
	if t == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r)
		if sw.status == http.StatusOK {
			t.SessionEnded(r.Context(), time.Since(start), "", "") // the revision is the messages', not the stream's
		}
	})
}

// statusWriter notes the status written through it.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (s *statusWriter) WriteHeader(status int) {
	if s.status == 0 {
		s.status = status
	}
	s.ResponseWriter.WriteHeader(status)
}

func (s *statusWriter) Write(p []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(p)
}

// Flush lets a stream through it be flushed by code that asserts
// http.Flusher.
func (s *statusWriter) Flush() {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	_ = http.NewResponseController(s.ResponseWriter).Flush()
}

// Unwrap lets http.ResponseController reach the connection.
func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }
