package mcp

import (
	"github.com/funcmcp/funcmcp/host/internal/caller"
	"github.com/funcmcp/funcmcp/host/internal/mcp/sessions"
)

// The sealed sessions are package sessions'; these names keep the core's
// spelling.

// session is a parsed token: what a request inherits from its initialize.
type session = sessions.Session

// MaxClientInfoBytes bounds the clientInfo name and version a session
// token keeps (see [sessions.MaxClientInfoBytes]).
const MaxClientInfoBytes = sessions.MaxClientInfoBytes

// MaxCapabilityBytes bounds each capability a session token keeps (see
// [sessions.MaxCapabilityBytes]).
const MaxCapabilityBytes = sessions.MaxCapabilityBytes

func sessionOwner(who *caller.Caller) string { return sessions.OwnerOf(who) }
func newID() string                          { return sessions.NewID() }
