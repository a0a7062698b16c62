package mcp

import (
	"net/http"

	"github.com/funcmcp/funcmcp/host/internal/mcp/clientreq"
)

// Resumable streams (MCP 2025-11-25, SEP-1699) are kept and served by
// package clientreq (Store.Open, Store.ServeResume); the handler decides
// which calls get one (serveToolsCall, with clientreq.Resumes) and which
// streams a resuming GET may read (those of its callScope).

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

// headerLastEventID is the header of a resuming GET.
const headerLastEventID = "Last-Event-Id"

// markLastEvent marks the next Write to w as the call's result when w
// writes a resumable stream (see clientreq.MarkLastEvent).
func markLastEvent(w http.ResponseWriter) { clientreq.MarkLastEvent(w) }
