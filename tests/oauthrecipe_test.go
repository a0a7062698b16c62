package tests

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/internal/testutil"
)

// npmProvider is tests/node/oauth2-provider.mjs running: the npm package
// oauth2-mock-server as the OpenID provider of docs/security.md's local
// recipe.
type npmProvider struct {
	issuer string
	mu     sync.Mutex
	log    []providerEvent
	stderr *syncBuffer
}

// providerEvent is one line oauth2-provider.mjs prints per authorization
// or token request.
type providerEvent struct {
	Event               string  `json:"event"`
	ClientID            string  `json:"clientId"`
	GrantType           string  `json:"grantType"`
	Scope               string  `json:"scope"`
	Resource            string  `json:"resource"`
	CodeChallengeMethod string  `json:"codeChallengeMethod"`
	RefreshToken        bool    `json:"refreshToken"`
	Error               *string `json:"error"`
}

// startNpmProvider starts oauth2-provider.mjs on a free loopback port with
// args and waits for its issuer line. It stops when the test ends (its
// standard input closes).
func startNpmProvider(t *testing.T, node, dir string, args ...string) *npmProvider {
	t.Helper()
	cmd := exec.Command(node, append([]string{"oauth2-provider.mjs", "--exit-with-stdin"}, args...)...)
	cmd.Dir = dir
	p := &npmProvider{stderr: &syncBuffer{}}
	cmd.Stderr = p.stderr
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	exited := make(chan struct{})
	issuer := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			var first struct{ Issuer string }
			if json.Unmarshal(sc.Bytes(), &first) == nil && first.Issuer != "" {
				issuer <- first.Issuer
				continue
			}
			var e providerEvent
			if json.Unmarshal(sc.Bytes(), &e) == nil {
				p.mu.Lock()
				p.log = append(p.log, e)
				p.mu.Unlock()
			}
		}
		_ = cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		_ = stdin.Close()
		select {
		case <-exited:
		case <-time.After(stopTimeout):
			t.Errorf("oauth2-provider.mjs did not exit within %s of its input closing; killing it", stopTimeout)
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	select {
	case p.issuer = <-issuer:
	case <-exited:
		t.Fatalf("oauth2-provider.mjs exited before printing its issuer:\n%s", p.stderr.String())
	case <-time.After(startTimeout):
		t.Fatalf("oauth2-provider.mjs printed no issuer within %s:\n%s", startTimeout, p.stderr.String())
	}
	return p
}

// events returns the provider's requests from the from-th on, once at
// least n of them have been read: the provider prints each line before it
// answers, but this side reads them in its own time.
func (p *npmProvider) events(t *testing.T, from, n int) []providerEvent {
	t.Helper()
	var got []providerEvent
	require.Eventually(t, func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		got = append([]providerEvent(nil), p.log[from:]...)
		return len(got) >= n
	}, startTimeout, 10*time.Millisecond, "the provider logged fewer than %d requests", n)
	return got
}

// count returns how many requests the provider has logged.
func (p *npmProvider) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.log)
}

// authorize gets an access token for clientID with scope the way an MCP
// client does (authorization code, PKCE S256, the resource indicator).
func (p *npmProvider) authorize(t *testing.T, clientID, redirect, scope, resource string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), clientTimeout)
	defer cancel()
	verifier := base64.RawURLEncoding.EncodeToString([]byte(strings.Repeat("recipe-verifier-", 3)))
	sum := sha256.Sum256([]byte(verifier))
	q := url.Values{"response_type": {"code"}, "client_id": {clientID}, "redirect_uri": {redirect}, "scope": {scope},
		"resource": {resource}, "state": {"s"}, "code_challenge_method": {"S256"},
		"code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.issuer+"/authorize?"+q.Encode(), nil)
	require.NoError(t, err)
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Do(req)
	require.NoError(t, err)
	_ = resp.Body.Close()
	loc, err := url.Parse(resp.Header.Get("Location"))
	require.NoError(t, err)
	code := loc.Query().Get("code")
	require.NotEmpty(t, code, "authorization redirect %q", resp.Header.Get("Location"))

	form := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "client_id": {clientID},
		"redirect_uri": {redirect}, "code_verifier": {verifier}, "resource": {resource}}
	req, err = http.NewRequestWithContext(ctx, http.MethodPost, p.issuer+"/token", strings.NewReader(form.Encode()))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "token: %s", body)
	require.NoError(t, json.Unmarshal(body, &tok))
	return tok.AccessToken
}

// TestOAuthRecipeNpmProvider follows docs/security.md's "With any OpenID
// provider, locally": an OpenID provider from npm (oauth2-mock-server, by
// tests/node/oauth2-provider.mjs) with pre-registered clients, and funchost
// with the recipe's three settings, FUNCMCP_AUTH_AUDIENCE being the MCP
// endpoint's URL (the resource the TypeScript client asks for). The
// official TypeScript SDK 1.x goes through the whole flow (401, protected
// resource metadata, the provider's discovery, authorization code with
// PKCE, token, whoami as the signed-in user), and caller_claims, which
// needs Claims.Read, gets a 403 step-up: a client without refresh tokens
// authorizes again with the scope and is served; a client with refresh
// tokens hits the recipe's caveat (SDK 1.x refreshes, keeping the old
// scopes, then fails; the 2.x client authorizes again); a server that asks for every scope at first
// authorization spares that client the step-up.
func TestOAuthRecipeNpmProvider(t *testing.T) {
	t.Parallel()
	node, dir := nodeBin(t, "@modelcontextprotocol/sdk", "@modelcontextprotocol/client", "oauth2-mock-server")
	port, port2 := testutil.FreePort(t), testutil.FreePort(t)
	endpoint := fmt.Sprintf("http://127.0.0.1:%d%s", port, endpointPath)
	endpoint2 := fmt.Sprintf("http://127.0.0.1:%d%s", port2, endpointPath)
	const redirect = "http://127.0.0.1:3000/callback"
	op := startNpmProvider(t, node, dir, "--resource", endpoint, "--resource", endpoint2,
		"--client", "my-client="+redirect, "--refreshing-client", "my-refreshing-client="+redirect)
	recipe := func(endpoint, scopes string) []string {
		return []string{
			"FUNCMCP_AUTH_ISSUER=" + op.issuer,
			"FUNCMCP_AUTH_AUDIENCE=" + endpoint,
			"WEBSITE_AUTH_PRM_DEFAULT_WITH_SCOPES=" + scopes,
		}
	}
	h, found := launchHost(t, sample(t), recipe(endpoint, "user_impersonation"), "--port", strconv.Itoa(port))
	h.awaitEndpoint(t, found)
	require.Equal(t, endpoint, h.endpoint)

	// The protected resource metadata names the endpoint and the provider;
	// a request without a token gets the challenge.
	resp, err := http.Get(h.base + "/.well-known/oauth-protected-resource/runtime/webhooks/mcp")
	require.NoError(t, err)
	var prm struct {
		Resource             string   `json:"resource"`
		AuthorizationServers []string `json:"authorization_servers"`
		ScopesSupported      []string `json:"scopes_supported"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&prm))
	_ = resp.Body.Close()
	assert.Equal(t, endpoint, prm.Resource)
	assert.Equal(t, []string{op.issuer}, prm.AuthorizationServers)
	assert.Equal(t, []string{"user_impersonation", "Claims.Read"}, prm.ScopesSupported)

	call := func(token, tool string) *http.Response {
		t.Helper()
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + tool + `","arguments":{}}}`
		req, err := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		return resp
	}
	resp = call("", "whoami")
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	assert.Equal(t, `Bearer resource_metadata="`+h.base+`/.well-known/oauth-protected-resource/runtime/webhooks/mcp", scope="user_impersonation"`,
		resp.Header.Get("WWW-Authenticate"))

	// A token of the provider is accepted; a scoped tool answers 403 with
	// the scopes to ask for.
	token := op.authorize(t, "my-client", redirect, "user_impersonation", endpoint)
	assert.Equal(t, http.StatusOK, call(token, "whoami").StatusCode)
	resp = call(token, "caller_claims")
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)
	assert.Equal(t, `Bearer error="insufficient_scope", error_description="The access token lacks a scope this request needs.", `+
		`resource_metadata="`+h.base+`/.well-known/oauth-protected-resource/runtime/webhooks/mcp", scope="user_impersonation Claims.Read"`,
		resp.Header.Get("WWW-Authenticate"))

	ts := func(t *testing.T, h *host, clientID, sdk string) tsOAuthReport {
		t.Helper()
		calls := `[{"name":"whoami","arguments":{}},{"name":"caller_claims","arguments":{}}]`
		code, stdout, stderr := runNode(t, node, dir, "ts-oauth.mjs", h.endpoint, clientID, redirect, calls, sdk)
		var rep tsOAuthReport
		require.NoError(t, json.Unmarshal([]byte(stdout), &rep), "exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
		require.Equal(t, 0, code, "ts-oauth.mjs failed: %+v\nstderr:\n%s\nfunchost:\n%s", rep.Error, stderr, h.console.String())
		require.NotNil(t, rep.FirstConnectError, "the first connect is refused for want of a token")
		assert.True(t, strings.HasPrefix(rep.AuthorizationURL, op.issuer+"/authorize?"), rep.AuthorizationURL)
		assert.True(t, rep.Connected)
		require.Len(t, rep.Calls, 2)
		who := rep.Calls[0]
		require.True(t, who.OK, "whoami: %+v", who.Error)
		var res struct {
			StructuredContent struct {
				Authenticated bool   `json:"authenticated"`
				Subject       string `json:"subject"`
			} `json:"structuredContent"`
		}
		require.NoError(t, json.Unmarshal(who.Result, &res))
		assert.True(t, res.StructuredContent.Authenticated)
		assert.Equal(t, "johndoe", res.StructuredContent.Subject, "the provider's user")
		return rep
	}
	grants := func(t *testing.T, events []providerEvent, endpoint, kind string) (scopes []string) {
		for _, e := range events {
			if e.Error != nil {
				t.Errorf("the provider refused a request: %+v", e)
			}
			switch {
			case kind == "authorize" && e.Event == "authorize":
				assert.Equal(t, "S256", e.CodeChallengeMethod)
				assert.Equal(t, endpoint, e.Resource, "the resource indicator is the endpoint")
				scopes = append(scopes, e.Scope)
			case e.Event == "token" && e.GrantType == kind:
				scopes = append(scopes, e.Scope)
			}
		}
		return scopes
	}

	t.Run("step-up", func(t *testing.T) {
		before := op.count()
		rep := ts(t, h, "my-client", "v1")
		claims := rep.Calls[1]
		assert.True(t, claims.OK, "caller_claims after step-up: %+v", claims.Error)
		assert.True(t, claims.SteppedUp, "caller_claims needs Claims.Read, which the first token lacks")
		events := op.events(t, before, 4)
		assert.Equal(t, []string{"user_impersonation", "user_impersonation Claims.Read"}, grants(t, events, endpoint, "authorize"),
			"one authorization with the challenge's scope, one with the 403's")
		assert.Len(t, grants(t, events, endpoint, "authorization_code"), 2)
		assert.Empty(t, grants(t, events, endpoint, "refresh_token"))
	})

	t.Run("refresh tokens", func(t *testing.T) {
		before := op.count()
		rep := ts(t, h, "my-refreshing-client", "v1")
		claims := rep.Calls[1]
		assert.False(t, claims.OK, "SDK 1.x refreshes instead of authorizing again")
		assert.False(t, claims.SteppedUp)
		require.NotNil(t, claims.Error)
		assert.Contains(t, claims.Error.Message, "Server returned 403 after trying upscoping")
		events := op.events(t, before, 3)
		assert.Equal(t, []string{"user_impersonation"}, grants(t, events, endpoint, "authorize"))
		assert.Equal(t, []string{"user_impersonation"}, grants(t, events, endpoint, "refresh_token"), "the refresh keeps the old scopes")
	})

	t.Run("refresh tokens v2", func(t *testing.T) {
		// The TypeScript client 2.x authorizes again on a 403 step-up,
		// refresh token or not.
		before := op.count()
		rep := ts(t, h, "my-refreshing-client", "v2")
		claims := rep.Calls[1]
		assert.True(t, claims.OK, "caller_claims after step-up: %+v", claims.Error)
		assert.True(t, claims.SteppedUp)
		events := op.events(t, before, 4)
		assert.Equal(t, []string{"user_impersonation", "user_impersonation Claims.Read"}, grants(t, events, endpoint, "authorize"))
		assert.Empty(t, grants(t, events, endpoint, "refresh_token"))
	})

	t.Run("every scope first", func(t *testing.T) {
		// A funchost that asks for every scope in its 401: the first token
		// has them all, and no refresh happens.
		all, found := launchHost(t, sample(t), recipe(endpoint2, "user_impersonation,Claims.Read"), "--port", strconv.Itoa(port2))
		all.awaitEndpoint(t, found)
		require.Equal(t, endpoint2, all.endpoint)
		before := op.count()
		rep := ts(t, all, "my-refreshing-client", "v1")
		claims := rep.Calls[1]
		assert.True(t, claims.OK, "caller_claims: %+v", claims.Error)
		assert.False(t, claims.SteppedUp)
		events := op.events(t, before, 2)
		assert.Equal(t, []string{"user_impersonation Claims.Read"}, grants(t, events, endpoint2, "authorize"))
		assert.Empty(t, grants(t, events, endpoint2, "refresh_token"))
	})
}
