package host

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/funcmcp/funcmcp/internal/testutil"
	"github.com/funcmcp/funcmcp/metadata"
)

// BenchmarkToolsCallOAuth_StubWorker measures funchost's side of a
// tools/call (the MCP endpoint, the invocation, a worker stub answering a
// canned result) without authorization and as a resource server called
// with a valid token (keys and validation cached): the difference is what
// tokens cost the host per call. The real calls, through the processes and
// the sample worker, are tests/bench BenchmarkToolsCallWithToken.
func BenchmarkToolsCallOAuth_StubWorker(b *testing.B) {
	structured := `{"city":"Oslo","temp":21.5}`
	reply, _ := json.Marshal(metadata.InvocationResponse{Outputs: map[string]json.RawMessage{}, Logs: []string{}, ReturnValue: envelopeReturn(structured)})
	worker := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(reply)
	}))
	defer worker.Close()
	op := testutil.StartOIDC(b)
	token := "Bearer " + op.Token(b, testutil.Claims(op.URL, oauthAudience, "user-7", "user_impersonation", "Weather.Admin"))
	plain, _ := newTestHost(b, weatherApp(b, `{"version":"2.0","extensions":{"mcp":{"system":{"webhookAuthorizationLevel":"Anonymous"}}}}`), worker.URL, nil)
	authed, _ := newTestHost(b, oauthApp(b, op, ""), worker.URL, nil)
	body := callBody(1, "get_weather", `{"city":"Oslo"}`)
	for _, bc := range []struct {
		name, auth string
		h          http.Handler
	}{{"no-auth", "", plain.Handler()}, {"token", token, authed.Handler()}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:7071"+MCPPath, strings.NewReader(body))
				r.Header.Set("Content-Type", "application/json")
				r.Header.Set("Accept", "application/json, text/event-stream")
				r.Header.Set("MCP-Protocol-Version", "2025-06-18")
				if bc.auth != "" {
					r.Header.Set("Authorization", bc.auth)
				}
				w := httptest.NewRecorder()
				bc.h.ServeHTTP(w, r)
				if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), "21.5") {
					b.Fatalf("status %d: %s", w.Code, w.Body)
				}
			}
		})
	}
}
