package tests

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/internal/testutil"
)

// TestOAuthBindsToThePrincipal: with access tokens, everything a client
// leaves behind belongs to the token's user, not to the token: a session,
// a resumable stream, a legacy SSE stream, a task and an input-required
// state made with alice's token serve alice's refreshed token (same user,
// new token), and bob's token gets the answer a made-up session, stream,
// client state, task id or request state gets: nothing tells him that
// alice's exists.
func TestOAuthBindsToThePrincipal(t *testing.T) {
	t.Parallel()
	op := testutil.StartOIDC(t)
	const audience = "api://funcmcp-e2e-bind"
	h := startHostEnv(t, sample(t), []string{
		"FUNCMCP_AUTH_ISSUER=" + op.URL,
		"FUNCMCP_AUTH_AUDIENCE=" + audience,
		"WEBSITE_AUTH_PRM_DEFAULT_WITH_SCOPES=" + audience + "/user_impersonation",
	})
	token := func(sub string, iat time.Time) string {
		c := testutil.Claims(op.URL, audience, sub, "user_impersonation")
		c["iat"], c["nbf"] = iat.Unix(), iat.Unix()
		return "Bearer " + op.Token(t, c)
	}
	now := time.Now()
	alice, aliceRefreshed, bob := token("alice", now.Add(-time.Minute)), token("alice", now), token("bob", now)
	require.NotEqual(t, alice, aliceRefreshed)
	ctx, cancel := context.WithTimeout(t.Context(), 2*clientTimeout)
	defer cancel()
	post := func(auth, body string, headers map[string]string) exchange {
		t.Helper()
		hdr := map[string]string{"Authorization": auth}
		for k, v := range headers {
			hdr[k] = v
		}
		ex, err := send(ctx, h.endpoint, body, hdr)
		require.NoError(t, err)
		return ex
	}
	initializeWith := func(auth, caps string) string {
		t.Helper()
		ex := post(auth, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25",`+
			`"capabilities":`+caps+`,"clientInfo":{"name":"bind","version":"1"}}}`, nil)
		require.Equal(t, http.StatusOK, ex.status, "%s", ex.body)
		s := ex.header.Get("Mcp-Session-Id")
		require.NotEmpty(t, s)
		return s
	}
	initialize := func(auth string) string { return initializeWith(auth, "{}") }
	onSession := func(s string) map[string]string {
		return map[string]string{"Mcp-Session-Id": s, "MCP-Protocol-Version": "2025-11-25"}
	}
	whoami := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"whoami","arguments":{}}}`
	// A session id that opens nowhere: what a stranger's is worth.
	const madeUp = "made-up-session-id"

	t.Run("session", func(t *testing.T) {
		s := initialize(alice)
		ex := post(aliceRefreshed, whoami, onSession(s))
		require.Equal(t, http.StatusOK, ex.status, "%s", ex.body)
		assert.Equal(t, "alice", structured(t, ex.body)["subject"])

		stranger := post(bob, whoami, onSession(madeUp))
		ex = post(bob, whoami, onSession(s))
		assert.Equal(t, stranger.status, ex.status, "%s", ex.body)
		assert.Equal(t, string(stranger.body), string(ex.body), "bob learns nothing of alice's session")
		assert.NotEqual(t, http.StatusOK, ex.status)
	})

	t.Run("resumable stream", func(t *testing.T) {
		s := initialize(alice)
		// A call whose client leaves after the priming event: its events
		// are kept for the client to resume.
		call := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"simulate_epidemic","arguments":{"duration_seconds":1,"seed":1}}}`
		st := openAuthedCall(t, ctx, h.endpoint, alice, s, call)
		prime, err := st.Next(10 * time.Second)
		require.NoError(t, err)
		require.NotEmpty(t, prime.ID, "the priming event has an id")
		st.Close()

		resume := func(auth, session, lastID string) (int, string, *testutil.SSEStream) {
			t.Helper()
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, h.endpoint, nil)
			require.NoError(t, err)
			req.Header.Set("Accept", "text/event-stream")
			req.Header.Set("Authorization", auth)
			req.Header.Set("Mcp-Session-Id", session)
			req.Header.Set("MCP-Protocol-Version", "2025-11-25")
			req.Header.Set("Last-Event-ID", lastID)
			rctx, rcancel := context.WithCancel(ctx)
			resp, err := http.DefaultClient.Do(req.WithContext(rctx))
			require.NoError(t, err)
			if resp.StatusCode == http.StatusOK {
				return resp.StatusCode, "", testutil.ReadSSE(resp, rcancel)
			}
			defer rcancel()
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			return resp.StatusCode, string(body), nil
		}
		// bob with alice's session: as with a made-up one.
		wantStatus, wantBody, _ := resume(bob, madeUp, prime.ID)
		status, body, _ := resume(bob, s, prime.ID)
		assert.Equal(t, wantStatus, status)
		assert.Equal(t, wantBody, body)
		assert.NotEqual(t, http.StatusOK, status)
		// bob with his own session: as with a made-up event id.
		bobs := initialize(bob)
		wantStatus, wantBody, _ = resume(bob, bobs, "nowhere~aaaaaaaaaaaaaaaa_0")
		status, body, _ = resume(bob, bobs, prime.ID)
		assert.Equal(t, wantStatus, status)
		assert.Equal(t, wantBody, body)
		assert.NotEqual(t, http.StatusOK, status)

		// alice, with her refreshed token, gets the rest and the result.
		status, body, rs := resume(aliceRefreshed, s, prime.ID)
		require.Equal(t, http.StatusOK, status, body)
		defer rs.Close()
		for {
			ev, err := rs.Next(30 * time.Second)
			require.NoError(t, err)
			if strings.Contains(ev.Data, `"id":7`) {
				assert.Contains(t, ev.Data, `"peak_day"`)
				break
			}
		}
	})

	t.Run("client request", func(t *testing.T) {
		s := initializeWith(alice, `{"elicitation":{}}`)
		call := `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"book_days_off","arguments":` + bookArgs("") + `}}`
		st := openAuthedCall(t, ctx, h.endpoint, alice, s, call)
		defer st.Close()
		var asked struct {
			ID     string `json:"id"`
			Method string `json:"method"`
		}
		for asked.Method != "elicitation/create" {
			ev, err := st.Next(30 * time.Second)
			require.NoError(t, err)
			if ev.Data != "" {
				require.NoError(t, json.Unmarshal([]byte(ev.Data), &asked), ev.Data)
			}
		}
		answer := func(action string) string {
			return `{"jsonrpc":"2.0","id":"` + asked.ID + `","result":{"action":"` + action + `","content":{"confirm":true}}}`
		}
		// bob answers in alice's place: on her session, refused as a
		// made-up session is; on his own, it reaches nothing.
		stranger := post(bob, answer("decline"), onSession(madeUp))
		ex := post(bob, answer("decline"), onSession(s))
		assert.Equal(t, stranger.status, ex.status)
		assert.Equal(t, string(stranger.body), string(ex.body))
		assert.NotEqual(t, http.StatusAccepted, ex.status)
		post(bob, answer("decline"), onSession(initialize(bob)))

		ex = post(aliceRefreshed, answer("accept"), onSession(s))
		require.Equal(t, http.StatusAccepted, ex.status, "%s", ex.body)
		for {
			ev, err := st.Next(30 * time.Second)
			require.NoError(t, err)
			if strings.Contains(ev.Data, `"id":9`) {
				assert.Contains(t, ev.Data, `\"status\":\"booked\"`, "alice's answer, not bob's, reached the call")
				break
			}
		}
	})

	t.Run("legacy SSE stream", func(t *testing.T) {
		st, err := testutil.OpenSSE(ctx, h.base+"/runtime/webhooks/mcp/sse", http.Header{"Authorization": {alice}})
		require.NoError(t, err)
		defer st.Close()
		endpoint := testutil.OnHost(st.Endpoint, h.base)
		ping := `{"jsonrpc":"2.0","id":"p","method":"ping"}`
		postTo := func(url, auth string, message ...string) (int, string) {
			t.Helper()
			msg := ping
			if len(message) > 0 {
				msg = message[0]
			}
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(msg))
			require.NoError(t, err)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", auth)
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			return resp.StatusCode, string(body)
		}
		forged := h.base + "/runtime/webhooks/mcp/message?azmcpcs=" + strings.Repeat("A", 80)
		wantStatus, wantBody := postTo(forged, bob)
		status, body := postTo(endpoint, bob)
		assert.Equal(t, wantStatus, status)
		assert.Equal(t, wantBody, body, "bob learns nothing of alice's stream")
		assert.NotEqual(t, http.StatusAccepted, status)

		status, body = postTo(endpoint, aliceRefreshed)
		require.Equal(t, http.StatusAccepted, status, body)
		ev, err := st.Next(10 * time.Second)
		require.NoError(t, err)
		assert.Contains(t, ev.Data, `"id":"p"`)

		// The session its initialize makes serves the stream's calls.
		status, body = postTo(endpoint, aliceRefreshed, `{"jsonrpc":"2.0","id":"i","method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"bind","version":"1"}}}`)
		require.Equal(t, http.StatusAccepted, status, body)
		ev, err = st.Next(10 * time.Second)
		require.NoError(t, err)
		assert.Contains(t, ev.Data, `"protocolVersion":"2024-11-05"`)
		status, body = postTo(endpoint, alice, `{"jsonrpc":"2.0","id":"w","method":"tools/call","params":{"name":"whoami","arguments":{}}}`)
		require.Equal(t, http.StatusAccepted, status, body)
		ev, err = st.Next(10 * time.Second)
		require.NoError(t, err)
		assert.Contains(t, ev.Data, `"subject":"alice"`)
	})

	t.Run("task", func(t *testing.T) {
		id := taskClient{endpoint: h.endpoint, auth: alice}.create(t, "simulate_epidemic", map[string]any{"duration_seconds": 1, "seed": 2})
		stranger := taskClient{endpoint: h.endpoint, auth: bob}.get(t, "no-such-task-0000000000000000")
		r := taskClient{endpoint: h.endpoint, auth: bob}.get(t, id)
		require.NotNil(t, r.Error)
		require.NotNil(t, stranger.Error)
		assert.Equal(t, stranger.Error.Code, r.Error.Code)
		assert.Equal(t, strings.ReplaceAll(stranger.Error.Message, "no-such-task-0000000000000000", id), r.Error.Message)
		taskClient{endpoint: h.endpoint, auth: aliceRefreshed}.await(t, id, "completed")
	})

	t.Run("input-required state", func(t *testing.T) {
		ex, err := bookDaysOff(ctx, h.endpoint, 1, bookArgs(""), "", map[string]string{"Authorization": alice})
		require.NoError(t, err)
		state := readInputRequired(t, ex).Result.RequestState
		require.NotEmpty(t, state, "%s", ex.body)
		answer := `,"inputResponses":{"confirm_days_off":{"action":"accept","content":{"confirm":true}}},"requestState":"` + state + `"`
		ex, err = bookDaysOff(ctx, h.endpoint, 2, bookArgs(""), answer, map[string]string{"Authorization": bob})
		require.NoError(t, err)
		r := readInputRequired(t, ex)
		require.NotNil(t, r.Error, "bob cannot use alice's state: %s", ex.body)
		assert.Equal(t, -32602, r.Error.Code)
		ex, err = bookDaysOff(ctx, h.endpoint, 3, bookArgs(""), answer, map[string]string{"Authorization": aliceRefreshed})
		require.NoError(t, err)
		assert.Equal(t, "booked", structured(t, ex.body)["status"], "%s", ex.body)
	})
}

// openAuthedCall POSTs a tools/call on a 2025-11-25 session with an
// Authorization header and returns its response stream.
func openAuthedCall(t *testing.T, ctx context.Context, url, auth, session, body string) *testutil.SSEStream {
	t.Helper()
	ctx, cancel := context.WithCancel(ctx)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", auth)
	req.Header.Set("Mcp-Session-Id", session)
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		cancel()
		t.Fatalf("POST: %s %s", resp.Status, b)
	}
	return testutil.ReadSSE(resp, cancel)
}
