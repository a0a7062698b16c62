// Package sessions holds the sealed sessions of the legacy revisions: the
// Mcp-Session-Id an initialize mints ([Mint]) is a token sealed with the
// host's key that carries the client's protocol state (its id, revision,
// client info, the capabilities a call may use and the owner it serves),
// and a later request opens it ([Open]) instead of looking anything up, so
// no session map is kept and hosts sharing the key accept each other's
// sessions. The core (package mcp) decides when a request needs one.
package sessions
