package host

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/internal/testutil"
)

// BenchmarkElicitationRoundTrip_StubWorker measures what one elicitation
// adds to a tools/call at 2025-11-25: the worker (an httptest custom
// handler, not the worker SDK) asks the client once through the host's
// channel and waits; the client, reading the call's stream over HTTP,
// answers at once with a POST carrying its session. "plain" is the same
// call whose worker asks nothing. Each reports p50 and p99 of the whole
// call, client side; the difference of the p50s is the round trip.
func BenchmarkElicitationRoundTrip_StubWorker(b *testing.B) {
	for _, ask := range []bool{false, true} {
		b.Run(map[bool]string{false: "plain", true: "elicit"}[ask], func(b *testing.B) {
			_, srv, nw := notifyHost(b)
			nw.script = func(t testing.TB, offer http.Header) {
				if !ask {
					return
				}
				status, body := askClient(t, offer, `{"type":"request","key":"elicitation-1","method":"elicitation/create","params":{"message":"Sure?","requestedSchema":{"type":"object","properties":{"ok":{"type":"boolean"}}}}}`)
				if status != http.StatusOK || !strings.Contains(body, `"accept"`) {
					t.Errorf("the request got %d %s", status, body)
				}
			}
			session := initCapsSession(b, srv, `{"elicitation":{}}`)
			var lat []time.Duration
			b.ReportAllocs()
			for b.Loop() {
				start := time.Now()
				elicitCall(b, srv, session)
				lat = append(lat, time.Since(start))
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
		})
	}
}

// initCapsSession initializes a 2025-11-25 session declaring caps.
func initCapsSession(b *testing.B, srv *httptest.Server, caps string) string {
	b.Helper()
	req, err := http.NewRequest(http.MethodPost, srv.URL+MCPPath, strings.NewReader(
		`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":`+caps+`,"clientInfo":{"name":"bench","version":"1"}}}`))
	require.NoError(b, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(b, err)
	resp.Body.Close()
	session := resp.Header.Get("Mcp-Session-Id")
	require.NotEmpty(b, session)
	return session
}

// elicitCall makes one call and answers every request on its stream with
// an accept, until the result.
func elicitCall(b *testing.B, srv *httptest.Server, session string) {
	req, err := http.NewRequest(http.MethodPost, srv.URL+MCPPath, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"work","arguments":{}}}`))
	require.NoError(b, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", session)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(b, err)
	st := testutil.ReadSSE(resp, func() {})
	defer st.Close()
	for {
		ev, err := st.Next(10 * time.Second)
		require.NoError(b, err)
		if ev.Data == "" {
			continue // priming
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		require.NoError(b, json.Unmarshal([]byte(ev.Data), &m))
		if m.Method == "" {
			return // the result
		}
		answer := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"action":"accept","content":{"ok":true}}}`, m.ID)
		a, err := http.NewRequest(http.MethodPost, srv.URL+MCPPath, strings.NewReader(answer))
		require.NoError(b, err)
		a.Header.Set("Content-Type", "application/json")
		a.Header.Set("Accept", "application/json, text/event-stream")
		a.Header.Set("Mcp-Session-Id", session)
		ar, err := http.DefaultClient.Do(a)
		require.NoError(b, err)
		ar.Body.Close()
		require.Equal(b, http.StatusAccepted, ar.StatusCode)
	}
}
