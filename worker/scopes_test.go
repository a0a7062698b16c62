package worker

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/metadata"
)

// scopedApp serves a tool, a resource and a prompt that each require
// api://app/Secrets.Read, counting the handler runs.
func scopedApp(t *testing.T, runs *atomic.Int32) string {
	t.Helper()
	a := New(&Options{Stderr: io.Discard, Stdout: io.Discard, ScriptRoot: t.TempDir()})
	a.ConfigureMcpTool("secret_tool").WithRequiredScopes("api://app/Secrets.Read").
		WithProperty("n", Integer, "A number.", Required).
		Handle(func(context.Context, *ToolContext) (*Result, error) {
			runs.Add(1)
			return TextResult("the secret"), nil
		})
	a.ConfigureMcpResource("test://secret").WithName("secret").WithFunctionName("secret_resource").
		WithRequiredScopes("api://app/Secrets.Read").
		Handle(func(context.Context, *ResourceContext) (*ResourceResult, error) {
			runs.Add(1)
			return TextResource("the secret"), nil
		})
	a.ConfigureMcpPrompt("secret_prompt").WithRequiredScopes("api://app/Secrets.Read").
		Handle(func(context.Context, *PromptContext) (*PromptResult, error) {
			runs.Add(1)
			return TextPromptResult("the secret"), nil
		})
	require.NoError(t, a.Build())
	srv := httptest.NewServer(a.Handler())
	t.Cleanup(srv.Close)
	return srv.URL
}

// principalHeaders are the identity headers App Service authentication
// (or funchost, from a validated token) passes for a token whose claims
// are those given.
func principalHeaders(claims ...string) string {
	var cs []string
	for i := 0; i+1 < len(claims); i += 2 {
		cs = append(cs, `{"typ":`+string(mustMarshal(claims[i]))+`,"val":`+string(mustMarshal(claims[i+1]))+`}`)
	}
	p := base64.StdEncoding.EncodeToString([]byte(`{"auth_typ":"aad","claims":[` + strings.Join(cs, ",") + `],"name_typ":"name","role_typ":"roles"}`))
	return `,"X-MS-CLIENT-PRINCIPAL":"` + p + `","X-MS-CLIENT-PRINCIPAL-ID":"oid-1","X-MS-CLIENT-PRINCIPAL-IDP":"aad"`
}

func mustMarshal(v any) []byte {
	data, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return data
}

// scopeCases are the callers each scoped function meets.
var scopeCases = []struct {
	name    string
	headers string // identity headers, after the others ("" for none)
	granted bool
	missing string // the refusal names it
}{
	{name: "no principal", missing: "the host authenticates no caller"},
	{name: "principal without the scope", headers: principalHeaders("scp", "user_impersonation Secrets.Write"),
		missing: "lacks a scope"},
	{name: "principal id only", headers: `,"X-MS-CLIENT-PRINCIPAL-ID":"oid-1"`, missing: "lacks a scope"},
	{name: "unreadable principal", headers: `,"X-MS-CLIENT-PRINCIPAL":"%%%"`, missing: "the host authenticates no caller"},
	{name: "scope by its short name", headers: principalHeaders("scp", "user_impersonation Secrets.Read"), granted: true},
	{name: "scope by App Service's claim type", headers: principalHeaders("http://schemas.microsoft.com/identity/claims/scope", "Secrets.Read"),
		granted: true},
	{name: "application role", headers: principalHeaders("roles", "Secrets.Read"), granted: true},
}

// TestWorkerEnforcesRequiredScopes: the worker itself refuses a call of a
// tool that requires scopes when the identity headers do not grant them
// (or there are none), as the Azure Functions host, which ignores
// requiredScopes, would let it through: an isError result, without the
// handler running and before the arguments are checked.
func TestWorkerEnforcesRequiredScopes(t *testing.T) {
	var runs atomic.Int32
	url := scopedApp(t, &runs)
	for _, tc := range scopeCases {
		t.Run(tc.name, func(t *testing.T) {
			before := runs.Load()
			ctx := `{"name":"secret_tool","arguments":{"n":"not a number"},"transport":{"name":"http-streamable","properties":{"headers":{"Accept":"*/*"` +
				tc.headers + `}}}}`
			r := post(t, url, "secret_tool", body(t, ctx, 1))
			require.Equal(t, http.StatusOK, r.status, r.body)
			if tc.granted {
				// Past the scope check, the bad argument is what is refused.
				assert.True(t, r.result.IsError, r.body)
				assert.NotContains(t, textOf(t, r), "forbidden")
				ok := `{"name":"secret_tool","arguments":{"n":1},"transport":{"name":"http-streamable","properties":{"headers":{"Accept":"*/*"` +
					tc.headers + `}}}}`
				r = post(t, url, "secret_tool", body(t, ok, 1))
				require.Equal(t, http.StatusOK, r.status, r.body)
				assert.Contains(t, r.env.Content, "the secret")
				assert.False(t, r.result.IsError, r.body)
				assert.Equal(t, before+1, runs.Load())
				return
			}
			assert.True(t, r.result.IsError, r.body)
			text := textOf(t, r)
			assert.Contains(t, text, "forbidden")
			assert.Contains(t, text, "tool 'secret_tool'")
			assert.Contains(t, text, "api://app/Secrets.Read")
			assert.Contains(t, text, tc.missing)
			assert.Equal(t, before, runs.Load(), "the handler did not run")
		})
	}
}

// TestWorkerEnforcesRequiredScopesOfResourcesAndPrompts: a resource or
// prompt that requires scopes is refused as its bad requests are (a
// failure reply), with -32600 and the required scopes in data.
func TestWorkerEnforcesRequiredScopesOfResourcesAndPrompts(t *testing.T) {
	var runs atomic.Int32
	url := scopedApp(t, &runs)
	for _, fn := range []struct{ function, context, what string }{
		{"secret_resource", `{"uri":"test://secret"`, "resource 'test://secret'"},
		{"secret_prompt", `{"name":"secret_prompt","arguments":{}`, "prompt 'secret_prompt'"},
	} {
		for _, tc := range scopeCases {
			t.Run(fn.function+"/"+tc.name, func(t *testing.T) {
				before := runs.Load()
				ctx := fn.context + `,"transport":{"name":"http-streamable","properties":{"headers":{"Accept":"*/*"` + tc.headers + `}}}}`
				req, err := http.NewRequest(http.MethodPost, url+"/"+fn.function, strings.NewReader(body(t, ctx, 1)))
				require.NoError(t, err)
				req.Header.Set("Content-Type", "application/json")
				resp, err := http.DefaultClient.Do(req)
				require.NoError(t, err)
				defer resp.Body.Close()
				data, err := io.ReadAll(resp.Body)
				require.NoError(t, err)
				if tc.granted {
					require.Equal(t, http.StatusOK, resp.StatusCode, "%s", data)
					assert.Contains(t, string(data), "the secret")
					assert.Equal(t, before+1, runs.Load())
					return
				}
				require.Equal(t, http.StatusInternalServerError, resp.StatusCode, "%s", data)
				var fail metadata.FailureReply
				require.NoError(t, json.Unmarshal(data, &fail), "%s", data)
				assert.Equal(t, metadata.CodeInvalidRequest, fail.Code)
				assert.Contains(t, fail.Error, fn.what)
				assert.Contains(t, fail.Error, tc.missing)
				assert.JSONEq(t, `{"requiredScopes":["api://app/Secrets.Read"]}`, string(fail.Data))
				assert.Equal(t, before, runs.Load(), "the handler did not run")
			})
		}
	}
}
