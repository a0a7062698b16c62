package host

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/internal/testutil"
	"github.com/funcmcp/funcmcp/metadata"
)

const (
	oauthAudience = "api://funcmcp-host-test"
	oauthDefault  = "api://funcmcp-host-test/user_impersonation"
	oauthAdmin    = "api://funcmcp-host-test/Weather.Admin"
)

// oauthApp writes an app whose get_weather needs oauthAdmin, and whose
// settings make the host a resource server of op.
func oauthApp(t testing.TB, op *testutil.OIDC, extra string) string {
	t.Helper()
	root := t.TempDir()
	writeFile(t, root, HostFile, `{"version":"2.0","extensions":{"mcp":{"system":{"webhookAuthorizationLevel":"Anonymous"}}}}`)
	writeFile(t, root, "local.settings.json", `{"IsEncrypted":false,"Values":{`+
		`"FUNCMCP_AUTH_ISSUER":`+string(mustJSON(op.URL))+`,`+
		`"FUNCMCP_AUTH_AUDIENCE":"`+oauthAudience+`",`+
		`"WEBSITE_AUTH_PRM_DEFAULT_WITH_SCOPES":"`+oauthDefault+`,offline_access"`+extra+`}}`)
	writeTool(t, root, "get_weather", &metadata.ToolOptions{ToolName: "get_weather", Description: "Weather.", Properties: cityProperty,
		OutputSchema: weatherSchema, RequiredScopes: []string{oauthAdmin}})
	writeTool(t, root, "fail500", &metadata.ToolOptions{ToolName: "fail500", Description: "Fails.", Properties: []metadata.ToolProperty{}})
	res, err := metadata.NewResourceFunction("secret_resource", &metadata.ResourceOptions{URI: "test://secret/{id}", Name: "secret",
		RequiredScopes: []string{oauthAdmin}})
	require.NoError(t, err)
	require.NoError(t, metadata.WriteFunction(root, res))
	pr, err := metadata.NewPromptFunction("secret_prompt", &metadata.PromptOptions{Name: "secret_prompt", RequiredScopes: []string{oauthAdmin}})
	require.NoError(t, err)
	require.NoError(t, metadata.WriteFunction(root, pr))
	return root
}

func bearerPost(t *testing.T, url, token, body string, headers map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { _ = resp.Body.Close() })
	return resp
}

func TestOAuthResourceServer(t *testing.T) {
	op := testutil.StartOIDC(t)
	fw := newFakeWorker(t)
	h, _ := newTestHost(t, oauthApp(t, op, ""), fw.srv.URL, nil)
	srv := httptest.NewServer(h.Handler())
	defer srv.Close()
	token := func(scopes ...string) string {
		return op.Token(t, testutil.Claims(op.URL, oauthAudience, "user-7", scopes...))
	}

	// The metadata: path-inserted and at the root, no token, any origin.
	for _, p := range []string{"/.well-known/oauth-protected-resource" + MCPPath, "/.well-known/oauth-protected-resource"} {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+p, nil)
		req.Header.Set("Origin", "https://browser-client.example")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		var doc map[string]any
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&doc))
		_ = resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode, p)
		assert.Equal(t, "*", resp.Header.Get("Access-Control-Allow-Origin"))
		assert.Equal(t, srv.URL+MCPPath, doc["resource"])
		assert.Equal(t, []any{op.URL}, doc["authorization_servers"])
		assert.Equal(t, []any{oauthDefault, oauthAdmin}, doc["scopes_supported"], "offline_access is never advertised")
	}

	// No token: 401 and the challenge.
	resp := bearerPost(t, srv.URL+MCPPath, "", listBody, nil)
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	assert.Equal(t, `Bearer resource_metadata="`+srv.URL+`/.well-known/oauth-protected-resource`+MCPPath+`", scope="`+oauthDefault+`"`,
		resp.Header.Get("WWW-Authenticate"))
	// The legacy SSE endpoints too.
	resp = bearerPost(t, srv.URL+MessagePath, "", listBody, nil)
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)

	// A token of another audience: invalid_token.
	resp = bearerPost(t, srv.URL+MCPPath, op.Token(t, testutil.Claims(op.URL, "api://other", "user-7")), listBody, nil)
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	assert.Contains(t, resp.Header.Get("WWW-Authenticate"), `error="invalid_token"`)

	// A valid token lists the tools and calls the one without a scope.
	resp = bearerPost(t, srv.URL+MCPPath, token("user_impersonation"), listBody, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	resp = bearerPost(t, srv.URL+MCPPath, token("user_impersonation"), callBody(2, "fail500", `{}`), nil)
	require.Equal(t, http.StatusOK, resp.StatusCode)

	// get_weather needs Weather.Admin: 403 and step-up.
	resp = bearerPost(t, srv.URL+MCPPath, token("user_impersonation"), callBody(3, "get_weather", `{"city":"Oslo"}`), nil)
	require.Equal(t, http.StatusForbidden, resp.StatusCode)
	assert.Contains(t, resp.Header.Get("WWW-Authenticate"), `error="insufficient_scope"`)
	assert.Contains(t, resp.Header.Get("WWW-Authenticate"), `scope="`+oauthDefault+` `+oauthAdmin+`"`)
	// So do the resource (through its template) and the prompt, and the
	// tool named with escapes or the prompt in another case (the guard
	// passes unscanned only the bodies that cannot name them).
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":5,"method":"resources/read","params":{"uri":"test://secret/42"}}`,
		`{"jsonrpc":"2.0","id":6,"method":"prompts/get","params":{"name":"secret_prompt"}}`,
		`{"jsonrpc":"2.0","id":7,"method":"prompts/get","params":{"name":"SECRET_PROMPT"}}`,
		`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"get_w\u0065ather","arguments":{"city":"Oslo"}}}`,
	} {
		resp = bearerPost(t, srv.URL+MCPPath, token("user_impersonation"), body, nil)
		require.Equal(t, http.StatusForbidden, resp.StatusCode, body)
		assert.Contains(t, resp.Header.Get("WWW-Authenticate"), `scope="`+oauthDefault+` `+oauthAdmin+`"`)
	}
	for _, r := range fw.requests() {
		assert.NotContains(t, []string{"get_weather", "secret_resource", "secret_prompt"}, r.Function, "refused before the worker")
	}

	// With it, the call reaches the worker with the caller's identity, a
	// forged identity header replaced, and without the token.
	tok := token("user_impersonation", "Weather.Admin")
	resp = bearerPost(t, srv.URL+MCPPath, tok, callBody(4, "get_weather", `{"city":"Oslo"}`),
		map[string]string{"X-MS-CLIENT-PRINCIPAL-ID": "forged", "X-MS-CLIENT-PRINCIPAL-ROLES": "Admin"})
	body, _ := io.ReadAll(resp.Body)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	assert.False(t, callResult(t, sseData(body)).IsError, string(body))
	var got *recorded
	for _, r := range fw.requests() {
		if r.Function == "get_weather" {
			got = &r
		}
	}
	require.NotNil(t, got)
	assert.NotContains(t, string(got.Body), tok, "the token is not passed to the worker")
	assert.Empty(t, got.Header.Get("Authorization"))
	var req metadata.InvocationRequest
	require.NoError(t, json.Unmarshal(got.Body, &req))
	tc, err := metadata.ToolContextFromRequest(&req, metadata.TriggerBindingName)
	require.NoError(t, err)
	hs := tc.Transport.Properties.Headers.Map()
	assert.Equal(t, "user-7", hs["X-Ms-Client-Principal-Id"])
	assert.Equal(t, "oidc", hs["X-Ms-Client-Principal-Idp"])
	assert.NotContains(t, hs, "X-Ms-Client-Principal-Roles")
	assert.NotContains(t, hs, "Authorization")
	raw, err := base64.StdEncoding.DecodeString(hs["X-Ms-Client-Principal"])
	require.NoError(t, err)
	assert.Contains(t, string(raw), `{"typ":"scp","val":"user_impersonation Weather.Admin"}`)
}

func TestOAuthOffServesNoMetadata(t *testing.T) {
	fw := newFakeWorker(t)
	h, _ := newTestHost(t, weatherApp(t, `{"version":"2.0"}`), fw.srv.URL, nil)
	srv := httptest.NewServer(h.Handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/.well-known/oauth-protected-resource" + MCPPath)
	require.NoError(t, err)
	_ = resp.Body.Close()
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
}

func TestOAuthBadSettingFailsNew(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, HostFile, `{"version":"2.0"}`)
	writeFile(t, root, "local.settings.json", `{"Values":{"FUNCMCP_AUTH_ISSUER":"http://idp.example.com","FUNCMCP_AUTH_AUDIENCE":"x"}}`)
	_, err := New(&Options{ScriptRoot: root, WorkerURL: "http://127.0.0.1:1", Output: io.Discard})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "FUNCMCP_AUTH_ISSUER")
	assert.Contains(t, err.Error(), "loopback")
}

// TestOAuthScopesCheckedOnceOverLegacySSE: the scopes are checked once,
// on the request as the endpoint read it, whatever carries it: a legacy
// SSE message (whose POST the OAuth guard lets through without reading
// it) lacking a scope gets the refusal on its stream, and the worker is
// not invoked; with the scope the call is served.
func TestOAuthScopesCheckedOnceOverLegacySSE(t *testing.T) {
	op := testutil.StartOIDC(t)
	fw := newFakeWorker(t)
	h, _ := newTestHost(t, oauthApp(t, op, ""), fw.srv.URL, nil)
	srv := httptest.NewServer(h.Handler())
	defer srv.Close()
	call := func(scopes ...string) string {
		hdr := http.Header{"Authorization": {"Bearer " + op.Token(t, testutil.Claims(op.URL, oauthAudience, "user-7", scopes...))}}
		st, err := testutil.OpenSSE(t.Context(), srv.URL+SSEPath, hdr)
		require.NoError(t, err)
		defer st.Close()
		req, err := http.NewRequest(http.MethodPost, st.Endpoint, strings.NewReader(callBody(2, "get_weather", `{"city":"Bergen"}`)))
		require.NoError(t, err)
		req.Header = hdr.Clone()
		req.Header.Set("Content-Type", "application/json")
		r, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		_ = r.Body.Close()
		require.Equal(t, http.StatusAccepted, r.StatusCode)
		ev, err := st.Next(10 * time.Second)
		require.NoError(t, err)
		return ev.Data
	}
	assert.Contains(t, call("user_impersonation"), "lacks a scope this request needs: "+oauthAdmin)
	assert.Empty(t, fw.requests(), "refused before the worker")
	assert.Contains(t, call("user_impersonation", "Weather.Admin"), "Bergen")
	assert.Len(t, fw.requests(), 1)
}

// TestOAuthScopesPerBatchElement: each element of a batch (2025-03-26) is
// a request of its own, checked on its own: the element whose tool needs a
// scope the token lacks gets the refusal in its place, and the other is
// served.
func TestOAuthScopesPerBatchElement(t *testing.T) {
	op := testutil.StartOIDC(t)
	fw := newFakeWorker(t)
	h, _ := newTestHost(t, oauthApp(t, op, ""), fw.srv.URL, nil)
	srv := httptest.NewServer(h.Handler())
	defer srv.Close()
	token := op.Token(t, testutil.Claims(op.URL, oauthAudience, "user-7", "user_impersonation"))
	batch := "[" + listBody + "," + callBody(2, "get_weather", `{"city":"Oslo"}`) + "]"
	resp := bearerPost(t, srv.URL+MCPPath, token, batch, map[string]string{"MCP-Protocol-Version": "2025-03-26", "Accept": "application/json"})
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(raw))
	var replies []struct {
		ID     int             `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
			Data    struct {
				RequiredScopes []string `json:"requiredScopes"`
			} `json:"data"`
		} `json:"error"`
	}
	require.NoError(t, json.Unmarshal(raw, &replies), string(raw))
	require.Len(t, replies, 2)
	assert.Nil(t, replies[0].Error, "tools/list is served")
	require.NotNil(t, replies[1].Error)
	assert.Equal(t, -32600, replies[1].Error.Code)
	assert.Contains(t, replies[1].Error.Message, "lacks a scope this request needs: "+oauthAdmin)
	assert.Equal(t, []string{oauthAdmin}, replies[1].Error.Data.RequiredScopes)
	assert.Empty(t, fw.requests(), "the refused call reached no worker")
}
