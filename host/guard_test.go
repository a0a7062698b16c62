package host

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHostileRequests is a table of requests a hostile or careless client
// sends, each with the status, JSON-RPC code and message it must get.
func TestHostileRequests(t *testing.T) {
	fw := newFakeWorker(t)
	root := brokenApp(t)
	h, _ := newTestHost(t, root, fw.srv.URL, &Options{
		SystemKey:      testKey,
		AllowedHosts:   []string{"mcp.example"},
		AllowedOrigins: []string{"https://app.example"},
	})
	srv := httptest.NewServer(h.Handler())
	defer srv.Close()
	type req struct {
		method, path, host, origin, contentType, key, body string
	}
	tests := []struct {
		name     string
		req      req
		status   int
		wantBody string // JSONEq; "" means do not check; "-" means empty
	}{
		{"dns rebinding: foreign Host and Origin", req{host: "evil.example:7071", origin: "http://evil.example:7071"}, 403,
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Forbidden: Host not allowed"}}`},
		{"foreign Host without Origin", req{host: "evil.example"}, 403,
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Forbidden: Host not allowed"}}`},
		{"loopback Host, foreign Origin", req{origin: "http://evil.example"}, 403,
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Forbidden: Origin not allowed"}}`},
		{"Origin null", req{origin: "null"}, 403,
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Forbidden: Origin not allowed"}}`},
		{"Origin with a loopback name as a subdomain", req{origin: "http://localhost.evil.example"}, 403, ""},
		{"file Origin", req{origin: "file://localhost"}, 403, ""},
		{"admin from a foreign Host", req{method: "GET", path: StatusPath, host: "evil.example"}, 403, ""},
		{"admin from a foreign Origin", req{method: "GET", path: StatusPath, origin: "http://evil.example"}, 403, ""},
		{"admin without a key", req{method: "GET", path: StatusPath, key: "-"}, 401, "-"},
		{"no key", req{key: "-"}, 401, "-"},
		{"text/plain body", req{contentType: "text/plain"}, 415,
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Unsupported Media Type: the body must be application/json"}}`},
		{"form body", req{contentType: "application/x-www-form-urlencoded"}, 415, ""},
		{"no content type", req{contentType: "-"}, 415, ""},
		{"sse stream from a foreign Host", req{method: "GET", path: SSEPath, host: "evil.example"}, 403, ""},
		{"sse stream from a foreign Origin", req{method: "GET", path: SSEPath, origin: "http://evil.example"}, 403, ""},
		{"sse stream without a key", req{method: "GET", path: SSEPath, key: "-"}, 401, "-"},
		{"sse message from a foreign Host", req{path: MessagePath, host: "evil.example"}, 403, ""},
		{"sse message from a foreign Origin", req{path: MessagePath, origin: "http://evil.example"}, 403, ""},
		{"sse message without a key", req{path: MessagePath, key: "-"}, 401, "-"},
		{"sse message with a text/plain body", req{path: MessagePath, contentType: "text/plain"}, 415,
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Unsupported Media Type: the body must be application/json"}}`},
		{"json with charset", req{contentType: "application/json; charset=utf-8"}, 200, ""},
		{"allowed host name", req{host: "MCP.example:443"}, 200, ""},
		{"allowed origin", req{origin: "https://app.example"}, 200, ""},
		{"loopback origin", req{origin: "http://localhost:6274"}, 200, ""},
		{"ipv6 loopback host", req{host: "[::1]:7071"}, 200, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.req
			if r.method == "" {
				r.method = http.MethodPost
			}
			if r.path == "" {
				r.path = MCPPath
			}
			if r.body == "" && r.method == http.MethodPost {
				r.body = listBody
			}
			hr, err := http.NewRequest(r.method, srv.URL+r.path, strings.NewReader(r.body))
			require.NoError(t, err)
			if r.host != "" {
				hr.Host = r.host
			}
			if r.origin != "" {
				hr.Header.Set("Origin", r.origin)
			}
			switch r.contentType {
			case "":
				hr.Header.Set("Content-Type", "application/json")
			case "-":
			default:
				hr.Header.Set("Content-Type", r.contentType)
			}
			if r.key != "-" {
				hr.Header.Set("X-Functions-Key", testKey)
			}
			hr.Header.Set("Accept", "application/json")
			resp, err := http.DefaultClient.Do(hr)
			require.NoError(t, err)
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			assert.Equal(t, tt.status, resp.StatusCode, string(body))
			switch tt.wantBody {
			case "":
			case "-":
				assert.Empty(t, body)
			default:
				assert.JSONEq(t, tt.wantBody, string(body))
			}
		})
	}
}

func TestStatusLeaksNoAbsolutePath(t *testing.T) {
	root := brokenApp(t)
	h, _ := newTestHost(t, root, "http://127.0.0.1:1", nil)
	srv := httptest.NewServer(h.Handler())
	defer srv.Close()
	resp, err := getWithKey(srv.URL+StatusPath, testKey)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, string(body), `a_broken/function.json`, "files are named relative to the script root")
	assert.NotContains(t, string(body), root)
}

func TestInvalidUTF8IsNeverEchoed(t *testing.T) {
	fw := newFakeWorker(t)
	root := weatherApp(t, `{"version":"2.0"}`)
	h, _ := newTestHost(t, root, fw.srv.URL, nil)
	srv := httptest.NewServer(h.Handler())
	defer srv.Close()
	bodies := []string{
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"get\xff\xfeweather\",\"arguments\":{}}}",
		"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/\xc3\x28call\"}",
		"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"" + strings.Repeat("\xff", 5000) + "\"}}",
		"{\"jsonrpc\":\"2.0\",\"id\":\"\xff\",\"method\":\"ping\"}",
		"\xff\xfe{}",
	}
	for i, body := range bodies {
		_, got := rpc(t, srv.URL, "2025-06-18", body)
		assert.True(t, utf8.Valid(got), "reply %d is valid UTF-8", i)
		assert.NotContains(t, string(got), "\xff", "reply %d", i)
		assert.Less(t, len(got), 1000, "reply %d does not echo a long name", i)
	}
}
