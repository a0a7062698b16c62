package mcp

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/host/internal/caller"
	"github.com/funcmcp/funcmcp/host/internal/owner"
)

// TestLegacySSEStreamBelongsToItsPrincipal: behind the access token check,
// a legacy SSE stream takes messages only from the principal that opened
// it (calls run with the stream's identity), whatever token of theirs.
func TestLegacySSEStreamBelongsToItsPrincipal(t *testing.T) {
	sse, err := NewLegacySSE(NewHandler(serverOf(newFakeTools()), nil), &LegacySSEOptions{InstanceID: "inst1", Sealer: newSealer(t, sseTestKey)})
	require.NoError(t, err)
	mux := http.NewServeMux()
	mux.HandleFunc("/runtime/webhooks/mcp/sse", sse.ServeStream)
	mux.HandleFunc("/runtime/webhooks/mcp/message", sse.ServeMessage)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := r.Header.Get("X-Test-Principal"); p != "" {
			var c *caller.Caller
			r, c = caller.Ensure(r)
			c.SetIdentity(owner.NewPrincipalOwner(p), nil, nil)
		}
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { sse.Close(); srv.Close() })

	st := openStream(t, srv.URL, "", http.Header{"X-Test-Principal": {"oidc|iss|alice"}})
	postAs := func(principal string) int {
		req, err := http.NewRequest(http.MethodPost, st.Endpoint, strings.NewReader(`{"jsonrpc":"2.0","id":"p","method":"ping"}`))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		if principal != "" {
			req.Header.Set("X-Test-Principal", principal)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	assert.Equal(t, http.StatusBadRequest, postAs("oidc|iss|bob"), "another user: as a state that does not open")
	assert.Equal(t, http.StatusBadRequest, postAs(""), "no user")
	assert.Equal(t, http.StatusAccepted, postAs("oidc|iss|alice"))
	assert.JSONEq(t, `"p"`, gjson(t, next(t, st).Data, "id"))

	// Without a principal, streams stay as they were: anyone with the
	// client state may post.
	anon := openStream(t, srv.URL, "", nil)
	req, err := http.NewRequest(http.MethodPost, anon.Endpoint, strings.NewReader(`{"jsonrpc":"2.0","id":"q","method":"ping"}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_ = resp.Body.Close()
	assert.Equal(t, http.StatusAccepted, resp.StatusCode)
}
