package host

import (
	"encoding/base64"
	"encoding/json"
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

// TestLegacySSEMessageIsItsPOSTsCaller (issue 40): a message of a legacy
// SSE stream is its POST's: the scopes are checked against the token the
// POST carried, and the worker sees that token's identity, not the token
// that opened the stream. A client that steps up (a new token of the same
// user with the scope it lacked) is served on the stream it has, and one
// whose new token lost a scope is refused.
func TestLegacySSEMessageIsItsPOSTsCaller(t *testing.T) {
	op := testutil.StartOIDC(t)
	fw := newFakeWorker(t)
	h, _ := newTestHost(t, oauthApp(t, op, ""), fw.srv.URL, nil)
	srv := httptest.NewServer(h.Handler())
	defer srv.Close()
	token := func(scopes ...string) http.Header {
		return http.Header{"Authorization": {"Bearer " + op.Token(t, testutil.Claims(op.URL, oauthAudience, "user-7", scopes...))}}
	}
	call := func(stream, post http.Header) string {
		st, err := testutil.OpenSSE(t.Context(), srv.URL+SSEPath, stream)
		require.NoError(t, err)
		defer st.Close()
		req, err := http.NewRequest(http.MethodPost, st.Endpoint, strings.NewReader(callBody(2, "get_weather", `{"city":"Bergen"}`)))
		require.NoError(t, err)
		req.Header = post.Clone()
		req.Header.Set("Content-Type", "application/json")
		r, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		_ = r.Body.Close()
		require.Equal(t, http.StatusAccepted, r.StatusCode)
		ev, err := st.Next(10 * time.Second)
		require.NoError(t, err)
		return ev.Data
	}

	// The stream opened without the scope, the message sent with it.
	assert.Contains(t, call(token("user_impersonation"), token("user_impersonation", "Weather.Admin")), "Bergen")
	reqs := fw.requests()
	require.Len(t, reqs, 1)
	var inv metadata.InvocationRequest
	require.NoError(t, json.Unmarshal(reqs[0].Body, &inv))
	tc, err := metadata.ToolContextFromRequest(&inv, metadata.TriggerBindingName)
	require.NoError(t, err)
	hs := tc.Transport.Properties.Headers.Map()
	assert.Equal(t, "user-7", hs["X-Ms-Client-Principal-Id"])
	raw, err := base64.StdEncoding.DecodeString(hs["X-Ms-Client-Principal"])
	require.NoError(t, err)
	assert.Contains(t, string(raw), `{"typ":"scp","val":"user_impersonation Weather.Admin"}`, "the POST's token's identity")

	// The stream opened with the scope, the message sent without it.
	assert.Contains(t, call(token("user_impersonation", "Weather.Admin"), token("user_impersonation")),
		"lacks a scope this request needs: "+oauthAdmin)
	assert.Len(t, fw.requests(), 1, "refused before the worker")
}

// TestTaskRunIsItsCallersIdentity: a task's run, which outlives its
// request, invokes the worker with the identity of the token that made
// the task (the request's record, CallRequest.Caller), and counts
// against its principal: another token of the same user from the same
// address is the same client, another user is not.
func TestTaskRunIsItsCallersIdentity(t *testing.T) {
	op := testutil.StartOIDC(t)
	fw := newFakeWorker(t)
	root := taskApp(t, `"FUNCMCP_AUTH_ISSUER":`+string(mustJSON(op.URL))+`,"FUNCMCP_AUTH_AUDIENCE":"`+oauthAudience+`"`)
	h, _ := newTestHost(t, root, fw.srv.URL, &Options{MaxRunningTasksPerClient: 1})
	srv := httptest.NewServer(h.Handler())
	defer srv.Close()
	bearer := func(subject string) map[string]string {
		return map[string]string{"Authorization": "Bearer " + op.Token(t, testutil.Claims(op.URL, oauthAudience, subject, "user_impersonation"))}
	}
	require.Empty(t, startTask(t, srv.URL+MCPPath, "get_weather", bearer("user-8")))
	var got *recorded
	for range 500 {
		for _, r := range fw.requests() {
			if r.Function == "get_weather" {
				got = &r
			}
		}
		if got != nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	require.NotNil(t, got, "the task ran")
	var inv metadata.InvocationRequest
	require.NoError(t, json.Unmarshal(got.Body, &inv))
	tc, err := metadata.ToolContextFromRequest(&inv, metadata.TriggerBindingName)
	require.NoError(t, err)
	assert.Equal(t, "user-8", tc.Transport.Properties.Headers.Map()["X-Ms-Client-Principal-Id"])

	require.Empty(t, startTask(t, srv.URL+MCPPath, "slow", bearer("user-9")))
	assert.Contains(t, startTask(t, srv.URL+MCPPath, "slow", bearer("user-9")), "too many running tasks for this client (the limit is 1)",
		"a fresh token of the same user is the same client")
	assert.Empty(t, startTask(t, srv.URL+MCPPath, "slow", bearer("user-10")), "another user is another client")
}
