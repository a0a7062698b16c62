package mcp

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/host/internal/caller"
	"github.com/funcmcp/funcmcp/host/internal/owner"
)

// TestSessionBelongsToItsPrincipal: behind the access token check, an
// Mcp-Session-Id serves only the principal whose initialize minted it
// (whatever token of theirs), and anyone else, with a principal or not,
// gets what a session id that does not open gets. The last-token cache
// does not skip the check.
func TestSessionBelongsToItsPrincipal(t *testing.T) {
	tools := newFakeTools()
	h := NewHandler(serverOf(tools), &Options{Sealer: testSealer, Logger: slog.New(slog.DiscardHandler)})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := r.Header.Get("X-Test-Principal"); p != "" {
			var c *caller.Caller
			r, c = caller.Ensure(r)
			c.SetIdentity(owner.NewPrincipalOwner(p), nil, nil)
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	s := &testServer{Server: srv, tools: tools}
	initialize := rpc(0, "initialize", map[string]any{"protocolVersion": "2025-06-18"})
	as := func(principal, session string) map[string]string {
		return map[string]string{"X-Test-Principal": principal, "Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-06-18"}
	}
	ping := rpc(1, "ping", nil)

	r := s.post(t, initialize, map[string]string{"X-Test-Principal": "oidc|iss|alice"})
	require.Equal(t, http.StatusOK, r.status)
	alice := r.header.Get("Mcp-Session-Id")
	require.NotEmpty(t, alice)
	made := s.post(t, ping, as("oidc|iss|bob", "not-a-session"))
	require.Equal(t, http.StatusBadRequest, made.status)
	for range 2 { // the second time through the last-token cache
		assert.Equal(t, http.StatusOK, s.post(t, ping, as("oidc|iss|alice", alice)).status)
		for _, who := range []string{"oidc|iss|bob", ""} {
			r := s.post(t, ping, as(who, alice))
			assert.Equal(t, made.status, r.status, who)
			assert.JSONEq(t, made.data, r.data, who)
		}
	}

	// A session minted without a principal serves no principal.
	r = s.post(t, initialize, nil)
	anon := r.header.Get("Mcp-Session-Id")
	assert.Equal(t, http.StatusOK, s.post(t, ping, as("", anon)).status)
	assert.Equal(t, http.StatusBadRequest, s.post(t, ping, as("oidc|iss|alice", anon)).status)
}
