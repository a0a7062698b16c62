package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
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

// tsOAuthReport is what tests/node/ts-oauth.mjs prints.
type tsOAuthReport struct {
	AuthorizationURL  string   `json:"authorizationUrl"`
	Code              bool     `json:"code"`
	FirstConnectError *tsError `json:"firstConnectError"`
	TokenType         string   `json:"tokenType"`
	Scope             string   `json:"scope"`
	Connected         bool     `json:"connected"`
	Tools             []string `json:"tools"`
	Calls             []struct {
		Name      string          `json:"name"`
		OK        bool            `json:"ok"`
		SteppedUp bool            `json:"steppedUp"`
		Scope     string          `json:"scope"`
		Result    json.RawMessage `json:"result"`
		Error     *tsError        `json:"error"`
	} `json:"calls"`
	Error *tsError `json:"error"`
}

// TestOAuthTypeScriptClientFlow runs the official TypeScript clients
// through the whole MCP authorization flow against funchost and an OpenID
// provider on 127.0.0.1: 401 with the challenge, the protected resource
// metadata, the provider's discovery, an authorization request with PKCE
// (S256) and the resource indicator from a pre-registered public client,
// the code exchanged for a token, then tools/list and tools/call with it;
// a call of a tool that needs another scope goes through step-up (403
// insufficient_scope, a new authorization with that scope) and succeeds.
func TestOAuthTypeScriptClientFlow(t *testing.T) {
	t.Parallel()
	const audience = "api://funcmcp-e2e-ts"
	const clientID, redirect = "funcmcp-e2e-ts-client", "http://127.0.0.1/oauth/callback"
	op := testutil.StartOIDC(t)
	op.RegisterClient(clientID, redirect)
	op.SetAudience(audience) // as Entra ID: aud is the application, whatever resource was asked for
	op.SignIn("ts-user")
	h := startHostEnv(t, sample(t), []string{
		"FUNCMCP_AUTH_ISSUER=" + op.URL,
		"FUNCMCP_AUTH_AUDIENCE=" + audience,
		"WEBSITE_AUTH_PRM_DEFAULT_WITH_SCOPES=" + audience + "/user_impersonation",
	})
	for _, client := range []struct{ arg, pkg string }{{"v1", "@modelcontextprotocol/sdk"}, {"v2", "@modelcontextprotocol/client"}} {
		t.Run(client.arg, func(t *testing.T) {
			node, dir := nodeBin(t, client.pkg)
			before := len(op.AuthorizationRequests())
			calls := `[{"name":"whoami","arguments":{}},{"name":"caller_claims","arguments":{}}]`
			code, stdout, stderr := runNode(t, node, dir, "ts-oauth.mjs", h.endpoint, clientID, redirect, calls, client.arg)
			var rep tsOAuthReport
			require.NoError(t, json.Unmarshal([]byte(stdout), &rep), "exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			require.Equal(t, 0, code, "ts-oauth.mjs failed: %+v\nstderr:\n%s", rep.Error, stderr)

			require.NotNil(t, rep.FirstConnectError, "the first connect is refused for want of a token")
			assert.True(t, rep.Code)
			assert.True(t, strings.HasPrefix(rep.AuthorizationURL, op.URL+"/authorize?"), rep.AuthorizationURL)
			assert.Equal(t, "Bearer", rep.TokenType)
			assert.True(t, rep.Connected)
			assert.Contains(t, rep.Tools, "whoami")

			reqs := op.AuthorizationRequests()[before:]
			require.Len(t, reqs, 2, "one authorization, one step-up")
			for _, r := range reqs {
				assert.Equal(t, clientID, r.ClientID)
				assert.Equal(t, "S256", r.CodeChallengeMethod)
				assert.Equal(t, h.endpoint, r.Resource, "the resource indicator is the metadata's resource")
			}
			assert.Equal(t, audience+"/user_impersonation", reqs[0].Scope, "the challenge's scope")
			assert.ElementsMatch(t, []string{audience + "/user_impersonation", "Claims.Read"}, strings.Fields(reqs[1].Scope), "the step-up's scope")

			require.Len(t, rep.Calls, 2)
			who := rep.Calls[0]
			require.True(t, who.OK, "whoami: %+v", who.Error)
			assert.False(t, who.SteppedUp)
			var res struct {
				StructuredContent struct {
					Authenticated bool     `json:"authenticated"`
					Subject       string   `json:"subject"`
					Scopes        []string `json:"scopes"`
				} `json:"structuredContent"`
			}
			require.NoError(t, json.Unmarshal(who.Result, &res))
			assert.True(t, res.StructuredContent.Authenticated)
			assert.Equal(t, "ts-user", res.StructuredContent.Subject)
			assert.Equal(t, []string{"user_impersonation"}, res.StructuredContent.Scopes)

			claims := rep.Calls[1]
			require.True(t, claims.OK, "caller_claims after step-up: %+v", claims.Error)
			assert.True(t, claims.SteppedUp, "caller_claims needs Claims.Read, which the first token lacks")
		})
	}
}

// TestOAuthGoSDKClientFlow runs the official Go SDK client's own OAuth
// handler (authorization code with PKCE, a pre-registered public client)
// against funchost and the provider, then calls whoami with the token it
// got, and caller_claims through step-up.
func TestOAuthGoSDKClientFlow(t *testing.T) {
	t.Parallel()
	const audience = "api://funcmcp-e2e-go"
	const clientID, redirect = "funcmcp-e2e-go-client", "http://127.0.0.1/oauth/callback"
	op := testutil.StartOIDC(t)
	op.RegisterClient(clientID, redirect)
	op.SetAudience(audience)
	op.SignIn("go-user")
	h := startHostEnv(t, sample(t), []string{
		"FUNCMCP_AUTH_ISSUER=" + op.URL,
		"FUNCMCP_AUTH_AUDIENCE=" + audience,
		"WEBSITE_AUTH_PRM_DEFAULT_WITH_SCOPES=" + audience + "/user_impersonation",
	})
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	handler, err := auth.NewAuthorizationCodeHandler(&auth.AuthorizationCodeHandlerConfig{
		PreregisteredClient: &oauthex.ClientCredentials{ClientID: clientID},
		RedirectURL:         redirect,
		// No browser: the authorization URL is requested here, and the
		// code read from the redirect.
		AuthorizationCodeFetcher: func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, args.URL, nil)
			if err != nil {
				return nil, err
			}
			resp, err := noFollow.Do(req)
			if err != nil {
				return nil, err
			}
			_ = resp.Body.Close()
			loc, err := url.Parse(resp.Header.Get("Location"))
			if resp.StatusCode != http.StatusFound || err != nil || loc.Query().Get("code") == "" {
				return nil, fmt.Errorf("authorization answered %d, redirect %q", resp.StatusCode, resp.Header.Get("Location"))
			}
			q := loc.Query()
			return &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
		},
	})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(t.Context(), clientTimeout)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "funcmcp-e2e-go-oauth", Version: "1.0.0"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: h.endpoint, OAuthHandler: handler,
		DisableStandaloneSSE: true, MaxRetries: -1}, nil)
	require.NoError(t, err)
	defer func() { _ = cs.Close() }()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "whoami", Arguments: map[string]any{}})
	require.NoError(t, err)
	require.False(t, res.IsError)
	assert.Equal(t, "go-user", res.StructuredContent.(map[string]any)["subject"])
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "caller_claims", Arguments: map[string]any{}})
	require.NoError(t, err, "caller_claims through step-up")
	require.False(t, res.IsError)

	reqs := op.AuthorizationRequests()
	require.Len(t, reqs, 2, "one authorization, one step-up")
	for _, r := range reqs {
		assert.Equal(t, "S256", r.CodeChallengeMethod)
		assert.Equal(t, h.endpoint, r.Resource)
	}
	assert.Contains(t, strings.Fields(reqs[1].Scope), "Claims.Read")
}
