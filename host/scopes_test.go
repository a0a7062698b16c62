package host

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/internal/testutil"
	"github.com/funcmcp/funcmcp/metadata"
)

// scopedApp writes an app without FUNCMCP_AUTH_ISSUER whose get_weather,
// resource template and prompt require oauthAdmin, beside fail500, which
// requires nothing.
func scopedApp(t testing.TB) string {
	t.Helper()
	root := t.TempDir()
	writeFile(t, root, HostFile, `{"version":"2.0"}`)
	writeTool(t, root, "get_weather", &metadata.ToolOptions{ToolName: "get_weather", Description: "Weather.", Properties: cityProperty,
		OutputSchema: weatherSchema, RequiredScopes: []string{oauthAdmin, "Weather.Read"}})
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

// TestScopesFailClosedWithoutOAuth: a host that takes no access tokens
// cannot tell who calls, so what requires a scope is refused to everyone
// (a JSON-RPC error naming the scopes and the setting that enables OAuth),
// before the worker is invoked; it is still listed, and what requires no
// scope is served.
func TestScopesFailClosedWithoutOAuth(t *testing.T) {
	fw := newFakeWorker(t)
	h, _ := newTestHost(t, scopedApp(t), fw.srv.URL, nil)
	srv := httptest.NewServer(h.Handler())
	defer srv.Close()
	url := srv.URL

	for _, tc := range []struct {
		name, body string
		scopes     []string
		what       string
	}{
		{"tool", callBody(2, "get_weather", `{"city":"Oslo"}`), []string{oauthAdmin, "Weather.Read"}, "tool 'get_weather'"},
		{"resource", `{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"test://secret/42"}}`, []string{oauthAdmin},
			"resource template 'test://secret/{id}'"},
		{"prompt", `{"jsonrpc":"2.0","id":4,"method":"prompts/get","params":{"name":"secret_prompt"}}`, []string{oauthAdmin}, "prompt 'secret_prompt'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body := rpc(t, url, "", tc.body)
			require.Equal(t, http.StatusOK, status, "%s", body)
			var reply struct {
				Result json.RawMessage `json:"result"`
				Error  *struct {
					Code    int    `json:"code"`
					Message string `json:"message"`
					Data    struct {
						RequiredScopes []string `json:"requiredScopes"`
					} `json:"data"`
				} `json:"error"`
			}
			require.NoError(t, json.Unmarshal(sseData(body), &reply), "%s", body)
			require.NotNil(t, reply.Error, "refused, not served: %s", body)
			assert.Equal(t, -32600, reply.Error.Code)
			assert.Contains(t, reply.Error.Message, tc.what)
			assert.Contains(t, reply.Error.Message, strings.Join(tc.scopes, " "))
			assert.Contains(t, reply.Error.Message, "authenticates no caller")
			assert.Contains(t, reply.Error.Message, SettingAuthIssuer)
			assert.Equal(t, tc.scopes, reply.Error.Data.RequiredScopes)
		})
	}
	for _, r := range fw.requests() {
		assert.NotContains(t, []string{"get_weather", "secret_resource", "secret_prompt"}, r.Function, "refused before the worker")
	}

	// tools/list still lists the tool; the tool without a scope is served.
	status, body := rpc(t, url, "", listBody)
	require.Equal(t, http.StatusOK, status)
	assert.Contains(t, string(body), `"get_weather"`)
	status, body = rpc(t, url, "", callBody(5, "fail500", `{}`))
	require.Equal(t, http.StatusOK, status)
	res := callResult(t, body)
	assert.True(t, res.IsError, "fail500 reached the worker and failed there: %s", body)
	require.NotEmpty(t, fw.requests())
	assert.Equal(t, "fail500", fw.requests()[len(fw.requests())-1].Function)
}

// TestScopesWarnAtStartWithoutOAuth: a host that takes no access tokens
// says at start, once for each, which tools, resources and prompts it
// will refuse because they require scopes; a host that takes tokens does
// not.
func TestScopesWarnAtStartWithoutOAuth(t *testing.T) {
	fw := newFakeWorker(t)
	_, logs := newTestHost(t, scopedApp(t), fw.srv.URL, nil)
	var warned []string
	for line := range strings.SplitSeq(logs.String(), "\n") {
		if strings.Contains(line, "level=WARN") && strings.Contains(line, "requires scopes") {
			warned = append(warned, line)
		}
	}
	require.Len(t, warned, 3, "%s", logs.String())
	assert.Contains(t, warned[0], "function=get_weather tool=get_weather")
	assert.Contains(t, warned[0], `scopes="`+oauthAdmin+` Weather.Read"`)
	assert.Contains(t, warned[0], SettingAuthIssuer+" is not set")
	assert.Contains(t, warned[1], `function=secret_resource "resource template"=test://secret/{id} scopes=`+oauthAdmin)
	assert.Contains(t, warned[2], "function=secret_prompt prompt=secret_prompt scopes="+oauthAdmin)

	op := testutil.StartOIDC(t)
	_, logs = newTestHost(t, oauthApp(t, op, ""), fw.srv.URL, nil)
	assert.NotContains(t, logs.String(), "requires scopes", "a host that takes tokens checks them")
}
