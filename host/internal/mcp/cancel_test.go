package mcp

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/metadata"
)

// blockingCalls makes every call wait until its context ends, reporting
// that it started and why it ended.
func blockingCalls(s *testServer) (started <-chan string, ended <-chan error) {
	start, end := make(chan string, 8), make(chan error, 8)
	s.tools.mu.Lock()
	defer s.tools.mu.Unlock()
	s.tools.call = func(ctx context.Context, req *CallRequest) (*metadata.CallToolResult, error) {
		start <- req.Name
		<-ctx.Done()
		end <- context.Cause(ctx)
		return nil, context.Cause(ctx)
	}
	return start, end
}

// sessionHeaders initializes and returns the headers of its later requests.
func (s *testServer) sessionHeaders(t *testing.T) map[string]string {
	t.Helper()
	r := s.post(t, rpc(1, "initialize", map[string]any{"protocolVersion": "2025-06-18"}), nil)
	require.Equal(t, http.StatusOK, r.status, r.body)
	return map[string]string{"Mcp-Session-Id": r.header.Get("Mcp-Session-Id"), "MCP-Protocol-Version": "2025-06-18"}
}

// startCall posts a tools/call of id 1 that runs until it is cancelled or
// its request is closed with the returned function.
func (s *testServer) startCall(t *testing.T, body string, headers map[string]string) (closeRequest func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.URL, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Accept", acceptBoth)
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if resp, err := s.Client().Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	return func() {
		cancel()
		<-done
	}
}

// TestCancellationIsScopedToTheClient: notifications/cancelled reaches only
// calls of the client that sends it. A legacy session's calls are its own;
// 2026-07-28 calls and sessionless legacy calls have no scope another
// client could name, and end only when their request is closed.
func TestCancellationIsScopedToTheClient(t *testing.T) {
	cancel := func(id int) string {
		return rpc(nil, "notifications/cancelled", map[string]any{"requestId": id, "reason": "not yours"})
	}
	legacyCall := rpc(1, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "x"}})

	t.Run("a legacy session's call", func(t *testing.T) {
		s := startServer(t, nil)
		started, ended := blockingCalls(s)
		mine, other := s.sessionHeaders(t), s.sessionHeaders(t)
		closeReq := s.startCall(t, legacyCall, mine)
		<-started
		assert.Equal(t, http.StatusAccepted, s.post(t, cancel(1), other).status)
		assert.Equal(t, http.StatusAccepted, s.post(t, cancel(1), nil).status, "no session: no scope")
		closeReq()
		assert.False(t, errors.Is(<-ended, ErrCancelled), "another client's notifications/cancelled ended the call")

		closeReq = s.startCall(t, legacyCall, mine)
		defer closeReq()
		<-started
		assert.Equal(t, http.StatusAccepted, s.post(t, cancel(1), mine).status)
		assert.ErrorIs(t, <-ended, ErrCancelled, "its own session cancels it")
	})
	for _, tc := range []struct {
		name, body string
		headers    map[string]string
	}{
		{"a sessionless legacy call", legacyCall, nil},
		{"a 2026-07-28 call", rpc(1, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "x"}, "_meta": modernMeta(ModernVersion)}),
			modernHeaders("tools/call", "echo")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startServer(t, nil)
			started, ended := blockingCalls(s)
			closeReq := s.startCall(t, tc.body, tc.headers)
			<-started
			assert.Equal(t, http.StatusAccepted, s.post(t, cancel(1), nil).status)
			assert.Equal(t, http.StatusAccepted, s.post(t, cancel(1), s.sessionHeaders(t)).status)
			closeReq()
			select {
			case cause := <-ended:
				assert.False(t, errors.Is(cause, ErrCancelled), "a stranger's notifications/cancelled ended the call: %v", cause)
			case <-time.After(10 * time.Second):
				t.Fatal("closing the request did not end the call")
			}
		})
	}
}
