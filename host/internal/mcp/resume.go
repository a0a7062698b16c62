package mcp

import (
	"net/http"

	"github.com/funcmcp/funcmcp/host/internal/mcp/clientreq"
	"github.com/funcmcp/funcmcp/host/internal/owner"
)

// Resumable streams (MCP 2025-11-25, SEP-1699) are kept by package
// clientreq; this file decides which calls get one and serves the GET that
// resumes one.

// Resumable stream limits, as package clientreq has them.
const (
	DefaultResumeGrace = clientreq.DefaultResumeGrace
	ResumeRetry        = clientreq.ResumeRetry
	MaxResumeEvents    = clientreq.MaxResumeEvents
	MaxResumeBytes     = clientreq.MaxResumeBytes
)

// Default bounds of the resumable streams (see package clientreq).
var (
	DefaultResumeStreams = clientreq.DefaultResumeStreams
	DefaultResumeBytes   = clientreq.DefaultResumeBytes
)

// ErrNotResumable: the call's stream cannot be closed for the client to
// resume it (it is not a resumable stream).
var ErrNotResumable = clientreq.ErrNotResumable

// resumeFromVersion is the first revision whose clients resume streams.
const resumeFromVersion = "2025-11-25"

// headerLastEventID is the header of a resuming GET.
const headerLastEventID = "Last-Event-Id"

// resumableCall reports whether a tools/call gets a resumable stream.
func (h *handler) resumableCall(req *request, meta *RequestMeta, version string, s *session) bool {
	return meta == nil && req.sse && s != nil && req.scope != "" && version >= resumeFromVersion && !IsModern(version) &&
		req.origin == nil
}

// openResumable starts the resumable stream of a call of id on w (headers
// and the priming event) and returns it and w as its first reader; nil
// when the store keeps as many streams as it may (for id, or in all): the
// call then gets a plain stream.
func (h *handler) openResumable(w http.ResponseWriter, scope string, id owner.ID) (*clientreq.Stream, *clientreq.Live) {
	return h.streams.Open(w, h.instanceID, scope, id, h.resumeGrace)
}

// serveResume serves GET with Last-Event-ID: the rest of a resumable
// stream of the client's session.
func (h *handler) serveResume(w http.ResponseWriter, r *http.Request, lastID string) {
	req := &request{w: w, r: r}
	s, ok := h.session(req)
	if !ok {
		return
	}
	streamID, n, ok := clientreq.ParseEventID(lastID)
	var rs *clientreq.Stream
	if ok {
		rs = h.streams.Get(streamID)
	}
	var l *clientreq.Live
	if rs != nil && rs.Scope() == callScope(req, s) {
		l, ok = rs.Resume(w, n)
	}
	if l == nil || !ok {
		h.refuse(w, http.StatusBadRequest, nil, codeServerError,
			"Bad Request: no stream to resume with this Last-Event-ID here (streams are kept on the instance that served the call, while it runs and "+
				h.resumeGrace.String()+" after); call again.", nil)
		return
	}
	rs.Serve(r.Context(), l)
}

// markLastEvent marks the next Write to w as the call's result when w
// writes a resumable stream (see clientreq.MarkLastEvent).
func markLastEvent(w http.ResponseWriter) { clientreq.MarkLastEvent(w) }
