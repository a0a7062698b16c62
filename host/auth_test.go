package host

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// post sends a JSON-RPC body to url with extra headers.
func post(t *testing.T, url, body string, headers map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(data)
}

const listBody = `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`

func TestFunctionKeys(t *testing.T) {
	fw := newFakeWorker(t)
	root := weatherApp(t, `{"version":"2.0"}`) // webhookAuthorizationLevel defaults to System
	h, logs := newTestHost(t, root, fw.srv.URL, &Options{SystemKey: "the-system-key", MasterKey: "the-master-key"})
	srv := httptest.NewServer(h.Handler())
	defer srv.Close()
	tests := []struct {
		name   string
		path   string
		header string
		want   int
	}{
		{"no key", MCPPath, "", http.StatusUnauthorized},
		{"wrong key", MCPPath, "the-system-keY", http.StatusUnauthorized},
		{"empty code", MCPPath + "?code=", "", http.StatusUnauthorized},
		{"wrong code", MCPPath + "?code=nope", "", http.StatusUnauthorized},
		{"system key in header", MCPPath, "the-system-key", http.StatusOK},
		{"master key in header", MCPPath, "the-master-key", http.StatusOK},
		{"system key in code", MCPPath + "?code=the-system-key", "", http.StatusOK},
		{"master key in code", MCPPath + "?code=the-master-key", "", http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hdr := map[string]string{}
			if tt.header != "" {
				hdr["X-Functions-Key"] = tt.header
			}
			status, body := post(t, srv.URL+tt.path, listBody, hdr)
			assert.Equal(t, tt.want, status)
			if tt.want == http.StatusUnauthorized {
				assert.Empty(t, body, "401 says nothing more")
			}
		})
	}
	t.Run("status needs a key", func(t *testing.T) {
		resp, err := http.Get(srv.URL + StatusPath)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
		resp, err = getWithKey(srv.URL+StatusPath, "the-master-key")
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusOK, resp.StatusCode)
	})
	t.Run("a call with a key forwards no key", func(t *testing.T) {
		status, _ := post(t, srv.URL+MCPPath+"?code=the-system-key", callBody(3, "get_weather", `{"city":"Oslo"}`), nil)
		require.Equal(t, http.StatusOK, status)
		reqs := fw.requests()
		require.NotEmpty(t, reqs)
		last := reqs[len(reqs)-1]
		assert.NotContains(t, string(last.Body), "the-system-key")
		assert.Empty(t, last.Header.Get("X-Functions-Key"))
		assert.NotContains(t, last.Header, "X-Functions-Key")
	})
	t.Run("a call with the key in its header forwards no key", func(t *testing.T) {
		// Client headers travel to the worker in transport.properties.headers:
		// the key's header must not be among them.
		status, _ := post(t, srv.URL+MCPPath, callBody(4, "get_weather", `{"city":"Oslo"}`),
			map[string]string{"X-Functions-Key": "the-master-key", "X-Other": "kept"})
		require.Equal(t, http.StatusOK, status)
		reqs := fw.requests()
		require.NotEmpty(t, reqs)
		last := reqs[len(reqs)-1]
		require.Contains(t, string(last.Body), "kept", "client headers are forwarded")
		assert.NotContains(t, string(last.Body), "the-master-key")
		assert.NotContains(t, last.Header, "X-Functions-Key")
	})
	assert.NotContains(t, logs.String(), "the-system-key", "keys are never logged")
	assert.NotContains(t, logs.String(), "the-master-key", "keys are never logged")
}

func TestAnonymousNeedsNoKey(t *testing.T) {
	fw := newFakeWorker(t)
	root := weatherApp(t, `{"version":"2.0","extensions":{"mcp":{"system":{"webhookAuthorizationLevel":"Anonymous"}}}}`)
	h, _ := newTestHost(t, root, fw.srv.URL, nil)
	srv := httptest.NewServer(h.Handler())
	defer srv.Close()
	status, _ := post(t, srv.URL+MCPPath, listBody, nil)
	assert.Equal(t, http.StatusOK, status)
	assert.NoFileExists(t, filepath.Join(root, KeysFile))
}

func TestKeysFromEnvironment(t *testing.T) {
	t.Setenv(EnvSystemKey, "env-system-key")
	root := weatherApp(t, `{"version":"2.0"}`)
	h, err := New(&Options{ScriptRoot: root, WorkerURL: "http://127.0.0.1:1", Logger: newLogger(io.Discard), Output: io.Discard})
	require.NoError(t, err)
	srv := httptest.NewServer(h.Handler())
	defer srv.Close()
	status, _ := post(t, srv.URL+MCPPath, listBody, map[string]string{"X-Functions-Key": "env-system-key"})
	assert.Equal(t, http.StatusOK, status)
	status, _ = post(t, srv.URL+MCPPath, listBody, nil)
	assert.Equal(t, http.StatusUnauthorized, status)
	assert.Equal(t, "environment "+EnvSystemKey, h.secrets.Where)
	assert.NoFileExists(t, filepath.Join(root, KeysFile))
}

func TestGeneratedKeysAreKeptAndPrinted(t *testing.T) {
	root := weatherApp(t, `{"version":"2.0"}`)
	h, err := New(&Options{ScriptRoot: root, WorkerURL: "http://127.0.0.1:1", Logger: newLogger(io.Discard), Output: io.Discard})
	require.NoError(t, err)
	file := filepath.Join(root, KeysFile)
	st, err := os.Stat(file)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	var stored struct {
		MasterKey  string            `json:"masterKey"`
		SystemKeys map[string]string `json:"systemKeys"`
	}
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &stored))
	require.Len(t, stored.SystemKeys["mcp_extension"], 64)
	require.Len(t, stored.MasterKey, 64)

	srv := httptest.NewServer(h.Handler())
	defer srv.Close()
	status, _ := post(t, srv.URL+MCPPath, listBody, map[string]string{"X-Functions-Key": stored.SystemKeys["mcp_extension"]})
	assert.Equal(t, http.StatusOK, status)
	assert.Equal(t, file, h.secrets.Where, "the console line names the file, never the key")

	// A second start reuses the stored keys.
	h2, err := New(&Options{ScriptRoot: root, WorkerURL: "http://127.0.0.1:1", Logger: newLogger(io.Discard), Output: io.Discard})
	require.NoError(t, err)
	srv2 := httptest.NewServer(h2.Handler())
	defer srv2.Close()
	status, _ = post(t, srv2.URL+MCPPath, listBody, map[string]string{"X-Functions-Key": stored.MasterKey})
	assert.Equal(t, http.StatusOK, status)
}

func TestSessionsSharedThroughTheSessionKey(t *testing.T) {
	t.Setenv(EnvSessionKey, strings.Repeat("0f", 32))
	fw := newFakeWorker(t)
	root := weatherApp(t, `{"version":"2.0"}`)
	a, _ := newTestHost(t, root, fw.srv.URL, nil)
	b, _ := newTestHost(t, root, fw.srv.URL, nil)
	sa := httptest.NewServer(a.Handler())
	defer sa.Close()
	sb := httptest.NewServer(b.Handler())
	defer sb.Close()
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"probe","version":"0.1"}}}`
	token := initSession(t, sa.URL, init)
	status, body := rpcSession(t, sb.URL, token, listBody)
	assert.Equal(t, http.StatusOK, status, string(body))

	t.Setenv(EnvSessionKey, strings.Repeat("1e", 32))
	c, _ := newTestHost(t, root, fw.srv.URL, nil)
	sc := httptest.NewServer(c.Handler())
	defer sc.Close()
	status, _ = rpcSession(t, sc.URL, token, listBody)
	assert.Equal(t, http.StatusBadRequest, status, "another key: the token is refused")

	t.Setenv(EnvSessionKey, "not a key")
	_, err := New(&Options{ScriptRoot: root, WorkerURL: fw.srv.URL, Output: io.Discard})
	require.ErrorContains(t, err, "reading the session key from environment WEBSITE_AUTH_ENCRYPTION_KEY")
	assert.NotContains(t, err.Error(), "not a key", "the key text is not echoed")
}

// The health probe takes no key and no Host check (a probe names the
// instance's address), and says only whether the host takes calls: 200
// while it runs, 503 while it stops.
func TestPingIsTheHealthProbe(t *testing.T) {
	fw := newFakeWorker(t)
	root := weatherApp(t, `{"version":"2.0"}`) // keys required for everything else
	h, _ := newTestHost(t, root, fw.srv.URL, &Options{SystemKey: "the-system-key", MasterKey: "the-master-key"})
	srv := httptest.NewServer(h.Handler())
	defer srv.Close()
	ping := func(host string) (int, string) {
		req, err := http.NewRequest(http.MethodGet, srv.URL+PingPath, nil)
		require.NoError(t, err)
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, string(body)
	}
	code, body := ping("10.1.2.3:8080")
	assert.Equal(t, http.StatusOK, code, body)
	assert.Equal(t, "Running\n", body)

	h.board.Set(StateStopping)
	code, body = ping("localhost")
	assert.Equal(t, http.StatusServiceUnavailable, code, body)
	assert.Equal(t, "Stopping\n", body)
}
