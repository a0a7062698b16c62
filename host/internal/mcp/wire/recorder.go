package wire

import (
	"bytes"
	"net/http"
)

// Recorder is the ResponseWriter of a message run through the endpoint
// in-process (a legacy SSE stream's message): it keeps the status, the
// header and the body.
type Recorder struct {
	header http.Header
	// Status is the first status written; 0 until something is.
	Status int
	// Body is what was written.
	Body bytes.Buffer
}

// NewRecorder returns an empty Recorder.
func NewRecorder() *Recorder { return &Recorder{header: http.Header{}} }

// Header returns the response header.
func (r *Recorder) Header() http.Header { return r.header }

// WriteHeader records the first status written.
func (r *Recorder) WriteHeader(status int) {
	if r.Status == 0 {
		r.Status = status
	}
}

// Write appends p to the body; the status becomes 200 if none was written.
func (r *Recorder) Write(p []byte) (int, error) {
	if r.Status == 0 {
		r.Status = http.StatusOK
	}
	return r.Body.Write(p)
}

// Replay writes what r recorded to w: its header, status and body.
func (r *Recorder) Replay(w http.ResponseWriter) {
	hdr := w.Header()
	for k, v := range r.header {
		hdr[k] = v
	}
	w.WriteHeader(r.Status)
	_, _ = w.Write(r.Body.Bytes())
}
