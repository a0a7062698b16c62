package host

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/host/internal/ratelimit"
)

// TestRateLimitPerOwner: with FUNCMCP_RATE_PER_OWNER set, a client past
// its burst is refused with 429, a Retry-After in whole seconds and a
// JSON-RPC error naming the limit, while another client is still served;
// FUNCMCP_RATE_PER_TOOL limits one tool of a client, not its others.
func TestRateLimitPerOwner(t *testing.T) {
	root := weatherApp(t, `{"version":"2.0"}`)
	writeFile(t, root, "local.settings.json", `{"IsEncrypted":false,"Values":{`+
		`"`+ratelimit.SettingPerOwner+`":"0.01,3",`+
		`"`+ratelimit.SettingPerTool+`":"0.01,1",`+
		`"`+SettingTrustedProxies+`":"127.0.0.1"}}`)
	fw := newFakeWorker(t)
	h, _ := newTestHost(t, root, fw.srv.URL, nil)
	srv := httptest.NewServer(h.Handler())
	defer srv.Close()
	from := func(addr string) map[string]string { return map[string]string{"X-Forwarded-For": addr} }
	weather := callBody(1, "get_weather", `{"city":"Oslo"}`)

	resp := bearerPost(t, srv.URL+MCPPath, "", weather, from("198.51.100.1"))
	require.Equal(t, http.StatusOK, resp.StatusCode)
	// The tool's own bucket (a burst of 1) is empty; the client's is not.
	resp = bearerPost(t, srv.URL+MCPPath, "", weather, from("198.51.100.1"))
	require.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
	resp = bearerPost(t, srv.URL+MCPPath, "", listBody, from("198.51.100.1"))
	require.Equal(t, http.StatusOK, resp.StatusCode, "the client's other requests are served")
	resp = bearerPost(t, srv.URL+MCPPath, "", listBody, from("198.51.100.1"))
	require.Equal(t, http.StatusOK, resp.StatusCode)

	// Its burst of 3 is spent.
	resp = bearerPost(t, srv.URL+MCPPath, "", listBody, from("198.51.100.1"))
	require.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
	secs, err := strconv.Atoi(resp.Header.Get("Retry-After"))
	require.NoError(t, err, "Retry-After is whole seconds")
	assert.True(t, secs >= 1 && secs <= 100, "Retry-After %d: a token every 100 s", secs)
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var env struct {
		ID    json.RawMessage
		Error struct {
			Code    int
			Message string
			Data    ratelimit.LimitData
		}
	}
	require.NoError(t, json.Unmarshal(raw, &env), string(raw))
	assert.JSONEq(t, `1`, string(env.ID))
	assert.Equal(t, ratelimit.CodeRateLimited, env.Error.Code)
	assert.Contains(t, env.Error.Message, ratelimit.SettingPerOwner)
	assert.Equal(t, ratelimit.LimitData{Limit: ratelimit.ScopeOwner, Setting: ratelimit.SettingPerOwner, RetryAfterSeconds: secs}, env.Error.Data)

	// Another client is served.
	resp = bearerPost(t, srv.URL+MCPPath, "", weather, from("198.51.100.2"))
	require.Equal(t, http.StatusOK, resp.StatusCode)
}

// TestRateLimitBadSettingFailsNew: a rate that cannot be read stops the
// host from starting, naming the setting.
func TestRateLimitBadSettingFailsNew(t *testing.T) {
	root := taskApp(t, `"`+ratelimit.SettingPerOwner+`":"fast"`)
	_, err := New(&Options{ScriptRoot: root, WorkerURL: "http://127.0.0.1:1", Output: io.Discard})
	require.Error(t, err)
	assert.Contains(t, err.Error(), ratelimit.SettingPerOwner)
}
