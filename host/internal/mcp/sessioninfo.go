package mcp

import (
	"net/http"

	"github.com/funcmcp/funcmcp/host/internal/mcp/sessions"
)

// SessionInfo is what the Mcp-Session-Id of a request says of its session
// (see [sessions.Info]).
type SessionInfo = sessions.Info

// Session reads the Mcp-Session-Id of r; false when r carries none or one
// that does not open. It costs one opening of the token.
func (e *Handler) Session(r *http.Request) (SessionInfo, bool) {
	token := r.Header.Get(headerSessionID)
	if token == "" {
		return SessionInfo{}, false
	}
	return e.h.keeper.Info(token)
}
