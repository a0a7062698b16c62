package tests

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/internal/testutil"
)

// bearer adds an access token to every request.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// connectWithToken connects the official Go SDK client with a bearer token.
func connectWithToken(t *testing.T, endpoint, token string) (*mcp.ClientSession, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), clientTimeout)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "funcmcp-e2e-oauth-client", Version: "1.0.0"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint:             endpoint,
		HTTPClient:           &http.Client{Transport: bearer{token}},
		DisableStandaloneSSE: true,
		MaxRetries:           -1,
	}, nil)
	if err == nil {
		t.Cleanup(func() { _ = cs.Close() })
	}
	return cs, err
}

// TestOAuthWithFunchost runs funchost as a resource server of an OpenID
// provider on 127.0.0.1 and calls the sample's whoami and caller_claims with
// its tokens through the official Go SDK client.
func TestOAuthWithFunchost(t *testing.T) {
	t.Parallel()
	op := testutil.StartOIDC(t)
	const audience = "api://funcmcp-e2e"
	h := startHostEnv(t, sample(t), []string{
		"FUNCMCP_AUTH_ISSUER=" + op.URL,
		"FUNCMCP_AUTH_AUDIENCE=" + audience,
		"WEBSITE_AUTH_PRM_DEFAULT_WITH_SCOPES=" + audience + "/user_impersonation",
	})
	token := func(sub string, scopes ...string) string {
		c := testutil.Claims(op.URL, audience, sub, scopes...)
		c["preferred_username"] = sub + "@example.com"
		return op.Token(t, c)
	}

	// The metadata, then the challenge without a token.
	resp, err := http.Get(h.base + "/.well-known/oauth-protected-resource/runtime/webhooks/mcp")
	require.NoError(t, err)
	var prm map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&prm))
	_ = resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, h.endpoint, prm["resource"])
	assert.Equal(t, []any{op.URL}, prm["authorization_servers"])
	assert.Equal(t, []any{audience + "/user_impersonation", "Claims.Read"}, prm["scopes_supported"])

	resp, err = http.Post(h.endpoint, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	assert.Contains(t, resp.Header.Get("WWW-Authenticate"), `resource_metadata="`+h.base+`/.well-known/oauth-protected-resource/runtime/webhooks/mcp"`)

	_, err = connectWithToken(t, h.endpoint, op.Token(t, testutil.Claims(op.URL, "api://someone-else", "alice")))
	require.Error(t, err, "a token for another audience is refused")

	// whoami reaches the worker with the caller's identity.
	aliceToken := token("alice", "user_impersonation")
	cs, err := connectWithToken(t, h.endpoint, aliceToken)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(t.Context(), clientTimeout)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "whoami", Arguments: map[string]any{}})
	require.NoError(t, err)
	require.False(t, res.IsError)
	var who struct {
		Authenticated bool     `json:"authenticated"`
		Subject       string   `json:"subject"`
		Name          string   `json:"name"`
		Scopes        []string `json:"scopes"`
	}
	require.NoError(t, json.Unmarshal(toJSON(t, res.StructuredContent), &who))
	assert.True(t, who.Authenticated)
	assert.Equal(t, "alice", who.Subject)
	assert.Equal(t, "alice@example.com", who.Name)
	assert.Equal(t, []string{"user_impersonation"}, who.Scopes)

	// caller_claims needs Claims.Read: 403 for this token…
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "caller_claims", Arguments: map[string]any{}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Forbidden")

	// …and served for a token that grants it.
	adminToken := token("alice", "user_impersonation", "Claims.Read")
	cs2, err := connectWithToken(t, h.endpoint, adminToken)
	require.NoError(t, err)
	res, err = cs2.CallTool(ctx, &mcp.CallToolParams{Name: "caller_claims", Arguments: map[string]any{}})
	require.NoError(t, err)
	require.False(t, res.IsError)
	var claims struct {
		Claims []struct{ Typ, Val string } `json:"claims"`
	}
	require.NoError(t, json.Unmarshal(toJSON(t, res.StructuredContent), &claims))
	assert.Contains(t, claims.Claims, struct{ Typ, Val string }{"sub", "alice"})
	for _, tok := range []string{aliceToken, adminToken} {
		assert.NotContains(t, h.console.String(), tok, "no token in the host's or the worker's output")
	}
}
