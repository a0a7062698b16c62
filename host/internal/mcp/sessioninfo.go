package mcp

import (
	"errors"
	"net/http"
	"time"

	"github.com/funcmcp/funcmcp/host/internal/mcp/sessions"
)

// SessionInfo is what the Mcp-Session-Id of a request says of its session,
// for the session duration metric: the revision, when it began (its
// token's expiry less the session lifetime) and when it expires.
type SessionInfo struct {
	Version string
	Began   time.Time
	Expires time.Time
	// Expired: the token is genuine but past its lifetime (the request
	// is answered 404 and the client initializes again).
	Expired bool
}

// Session reads the Mcp-Session-Id of r; false when r carries none or one
// that does not open. It costs one opening of the token.
func (e *Handler) Session(r *http.Request) (SessionInfo, bool) {
	token := r.Header.Get(headerSessionID)
	if token == "" {
		return SessionInfo{}, false
	}
	s, exp, err := sessions.Open(e.h.sealer, token, e.h.versions)
	switch {
	case errors.Is(err, sessions.ErrExpiredToken):
		return SessionInfo{Began: exp.Add(-e.h.lifetime), Expires: exp, Expired: true}, true
	case err != nil:
		return SessionInfo{}, false
	}
	return SessionInfo{Version: s.Version, Began: exp.Add(-e.h.lifetime), Expires: exp}, true
}
