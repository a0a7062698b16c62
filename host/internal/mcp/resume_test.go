package mcp

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/host/internal/mcp/clientreq"
	"github.com/funcmcp/funcmcp/host/internal/owner"
	"github.com/funcmcp/funcmcp/internal/testutil"
	"github.com/funcmcp/funcmcp/metadata"
)

// getStream GETs the endpoint with Last-Event-ID and returns the status
// and, on 200, the stream.
func (s *testServer) getStream(t *testing.T, session, lastID string) (int, *testutil.SSEStream) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL, nil)
	require.NoError(t, err)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set(headerSessionID, session)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := s.Client().Do(req)
	if err != nil {
		cancel()
		require.NoError(t, err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		cancel()
		return resp.StatusCode, nil
	}
	st := testutil.ReadSSE(resp, cancel)
	t.Cleanup(st.Close)
	return resp.StatusCode, st
}

// drain reads st until it ends and returns its events.
func drain(t *testing.T, st *testutil.SSEStream) []testutil.SSEEvent {
	t.Helper()
	var out []testutil.SSEEvent
	timeout := time.After(20 * time.Second)
	for {
		select {
		case ev, ok := <-st.Events:
			if !ok {
				return out
			}
			if ev.Name != ":" {
				out = append(out, ev)
			}
		case <-timeout:
			t.Fatal("the stream did not end")
		}
	}
}

func callEcho(id int) string {
	return rpc(id, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "hi"}})
}

// TestResumableStreamPriming: a 2025-11-25 session's call stream opens
// with a priming event (an id, a retry, no data) and ids every event;
// earlier revisions and calls without a session get plain streams.
func TestResumableStreamPriming(t *testing.T) {
	s := startServer(t, nil)
	token := initWithCaps(t, s, "2025-11-25", map[string]any{})
	events := drain(t, s.openCall(t, callEcho(1), map[string]string{headerSessionID: token}))
	require.Len(t, events, 2)
	assert.NotEmpty(t, events[0].ID)
	assert.Equal(t, "1000", events[0].Retry)
	assert.Empty(t, events[0].Data)
	stream, n, ok := clientreq.ParseEventID(events[1].ID)
	require.True(t, ok, events[1].ID)
	assert.Equal(t, 1, n)
	assert.Equal(t, events[0].ID, stream+"_0")
	assert.Equal(t, "hi", resultText(t, events[1].Data))

	for _, hdr := range []map[string]string{
		{headerSessionID: initWithCaps(t, s, "2025-06-18", map[string]any{})},
		{headerProtocolVersion: "2025-11-25"},
	} {
		events := drain(t, s.openCall(t, callEcho(1), hdr))
		require.Len(t, events, 1)
		assert.Empty(t, events[0].ID)
	}
}

// TestResumeAfterTheToolClosesTheStream: the tool closes the stream (SSE
// polling); the client resumes with the last id it saw and gets the events
// made meanwhile and the result.
func TestResumeAfterTheToolClosesTheStream(t *testing.T) {
	s := startServer(t, nil)
	proceed := make(chan struct{})
	closeErr := make(chan error, 1)
	s.tools.call = func(ctx context.Context, req *CallRequest) (*metadata.CallToolResult, error) {
		_ = req.Notify.Progress(1, 3, "before")
		closeErr <- req.Notify.CloseStream()
		_ = req.Notify.Progress(2, 3, "while away")
		select {
		case <-proceed:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return &metadata.CallToolResult{Content: []json.RawMessage{metadata.TextContent("done")}}, nil
	}
	token := initWithCaps(t, s, "2025-11-25", map[string]any{})
	body := rpc(1, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{}, "_meta": map[string]any{"progressToken": "p"}})
	first := drain(t, s.openCall(t, body, map[string]string{headerSessionID: token}))
	require.NoError(t, <-closeErr)
	require.Len(t, first, 2, "the priming event and the first progress, then the stream ends")
	assert.Contains(t, first[1].Data, `"message":"before"`)

	close(proceed)
	status, st := s.getStream(t, token, first[1].ID)
	require.Equal(t, http.StatusOK, status)
	rest := drain(t, st)
	require.Len(t, rest, 2, "the events after the last id the client saw")
	assert.Contains(t, rest[0].Data, `"message":"while away"`)
	assert.Equal(t, "done", resultText(t, rest[1].Data))
	assert.Contains(t, rest[1].Data, `"id":1`)

	status, _ = s.getStream(t, token, rest[1].ID)
	assert.Equal(t, http.StatusBadRequest, status, "a stream read to its end is forgotten")
}

// TestResumeAfterTheClientLeft: a client whose connection drops does not
// cancel the call; it resumes and gets the result.
func TestResumeAfterTheClientLeft(t *testing.T) {
	s := startServer(t, nil)
	started, proceed := make(chan struct{}), make(chan struct{})
	cause := make(chan error, 1)
	s.tools.call = func(ctx context.Context, req *CallRequest) (*metadata.CallToolResult, error) {
		close(started)
		select {
		case <-proceed:
			cause <- nil
		case <-ctx.Done():
			cause <- context.Cause(ctx)
		}
		return &metadata.CallToolResult{Content: []json.RawMessage{metadata.TextContent("done")}}, nil
	}
	token := initWithCaps(t, s, "2025-11-25", map[string]any{})
	st := s.openCall(t, callEcho(1), map[string]string{headerSessionID: token})
	prime, err := st.Next(10 * time.Second)
	require.NoError(t, err)
	<-started
	st.Close() // the connection drops
	// Once the server has seen it (a result written before would be taken
	// as read), the call goes on without a reader.
	h := s.Config.Handler.(*Handler).h
	stream, _, _ := clientreq.ParseEventID(prime.ID)
	require.Eventually(t, func() bool {
		return !h.streams.Get(stream).Reading()
	}, 10*time.Second, 5*time.Millisecond)
	close(proceed)
	require.NoError(t, <-cause, "the call was not cancelled")
	status, st := s.getStream(t, token, prime.ID)
	require.Equal(t, http.StatusOK, status)
	rest := drain(t, st)
	require.Len(t, rest, 1)
	assert.Equal(t, "done", resultText(t, rest[0].Data))
}

// TestUnreadCallIsCancelled: a call nobody reads is cancelled after the
// grace period.
func TestUnreadCallIsCancelled(t *testing.T) {
	s := startServer(t, &Options{ResumeGrace: 100 * time.Millisecond})
	cause := make(chan error, 1)
	s.tools.call = func(ctx context.Context, req *CallRequest) (*metadata.CallToolResult, error) {
		_ = req.Notify.CloseStream()
		select {
		case <-ctx.Done():
			cause <- context.Cause(ctx)
		case <-time.After(10 * time.Second):
			cause <- nil
		}
		return nil, ctx.Err()
	}
	token := initWithCaps(t, s, "2025-11-25", map[string]any{})
	drain(t, s.openCall(t, callEcho(1), map[string]string{headerSessionID: token}))
	assert.ErrorIs(t, <-cause, clientreq.ErrReaderGone)
}

// TestResumeRefusals: only the session's own streams resume, on the
// instance that has them; a GET without Last-Event-ID is not served.
func TestResumeRefusals(t *testing.T) {
	s := startServer(t, nil)
	proceed := make(chan struct{})
	s.tools.call = func(ctx context.Context, req *CallRequest) (*metadata.CallToolResult, error) {
		_ = req.Notify.CloseStream()
		select {
		case <-proceed:
		case <-ctx.Done():
		}
		return &metadata.CallToolResult{Content: []json.RawMessage{metadata.TextContent("done")}}, nil
	}
	defer close(proceed)
	mine := initWithCaps(t, s, "2025-11-25", map[string]any{})
	other := initWithCaps(t, s, "2025-11-25", map[string]any{})
	events := drain(t, s.openCall(t, callEcho(1), map[string]string{headerSessionID: mine}))
	require.NotEmpty(t, events)
	id := events[0].ID
	stream, _, _ := clientreq.ParseEventID(id)
	for name, tc := range map[string]struct{ session, last string }{
		"another session":  {other, id},
		"unknown stream":   {mine, "nope~x_0"},
		"malformed id":     {mine, "garbage"},
		"another instance": {mine, "elsewhere~" + strings.TrimPrefix(stream, s.handlerInstance(t)+"~") + "_0"},
	} {
		status, _ := s.getStream(t, tc.session, tc.last)
		assert.Equal(t, http.StatusBadRequest, status, name)
	}
	status, _ := s.getStream(t, mine, "")
	assert.Equal(t, http.StatusMethodNotAllowed, status)
}

// TestResumeFromAnIDNeverGiven (finding 12): a Last-Event-ID past the
// stream's last event, one that overflows, or one not written as the
// server writes ids is refused with 400: no panic, no full replay.
func TestResumeFromAnIDNeverGiven(t *testing.T) {
	s := startServer(t, nil)
	proceed := make(chan struct{})
	s.tools.call = func(ctx context.Context, req *CallRequest) (*metadata.CallToolResult, error) {
		_ = req.Notify.Progress(1, 2, "before")
		_ = req.Notify.CloseStream()
		select {
		case <-proceed:
		case <-ctx.Done():
		}
		return &metadata.CallToolResult{Content: []json.RawMessage{metadata.TextContent("done")}}, nil
	}
	defer close(proceed)
	token := initWithCaps(t, s, "2025-11-25", map[string]any{})
	body := rpc(1, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{}, "_meta": map[string]any{"progressToken": "p"}})
	events := drain(t, s.openCall(t, body, map[string]string{headerSessionID: token}))
	require.Len(t, events, 2)
	stream, _, ok := clientreq.ParseEventID(events[0].ID)
	require.True(t, ok)
	for _, n := range []string{"2", "999999", "9223372036854775807", "9223372036854775808", "18446744073709551617",
		"+1", "-0", "01", "0x1", "", "1_1"} {
		status, _ := s.getStream(t, token, stream+"_"+n)
		assert.Equal(t, http.StatusBadRequest, status, "Last-Event-ID %s_%s", stream, n)
	}
	for _, bad := range []string{"_0", strings.ToUpper(stream) + "_0", stream + "x_0", stream[:len(stream)-1] + "_0"} {
		status, _ := s.getStream(t, token, bad)
		assert.Equal(t, http.StatusBadRequest, status, "Last-Event-ID %s", bad)
	}
	status, st := s.getStream(t, token, stream+"_1")
	require.Equal(t, http.StatusOK, status, "the last id given still resumes")
	st.Close()
}

// TestResumableResultTooLargeToKeep (issue 25, finding 5): a result larger
// than a stream may keep is not kept whole; the client that resumes gets a
// JSON-RPC error for its call that says so, and the stream gives back
// everything it held once read.
func TestResumableResultTooLargeToKeep(t *testing.T) {
	s := startServer(t, nil)
	proceed := make(chan struct{})
	s.tools.call = func(ctx context.Context, req *CallRequest) (*metadata.CallToolResult, error) {
		_ = req.Notify.Progress(1, 2, "before")
		_ = req.Notify.CloseStream()
		select {
		case <-proceed:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return &metadata.CallToolResult{Content: []json.RawMessage{metadata.TextContent(strings.Repeat("x", MaxResumeBytes))}}, nil
	}
	token := initWithCaps(t, s, "2025-11-25", map[string]any{})
	body := rpc(7, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{}, "_meta": map[string]any{"progressToken": "p"}})
	first := drain(t, s.openCall(t, body, map[string]string{headerSessionID: token}))
	require.Len(t, first, 2)
	h := s.Config.Handler.(*Handler).h
	stream, _, _ := clientreq.ParseEventID(first[0].ID)
	rs := h.streams.Get(stream)
	require.NotNil(t, rs)
	close(proceed)
	<-rs.Finished()

	assert.Zero(t, streamBytes(h), "the result, and the events before it, are not kept")
	status, st := s.getStream(t, token, first[1].ID)
	require.Equal(t, http.StatusOK, status)
	rest := drain(t, st)
	require.Len(t, rest, 1, "the result was not kept: its error stands for it")
	assert.Equal(t, stream+"_2", rest[0].ID)
	assert.JSONEq(t, `{"jsonrpc":"2.0","id":7,"error":{"code":-32000,"message":"The result of this call was too large to keep for resuming `+
		`(a stream keeps at most 1024 KiB, within the budgets of its client and of the server); call again."}}`, rest[0].Data)
	require.Eventually(t, func() bool { return h.streams.Get(stream) == nil }, 10*time.Second, 5*time.Millisecond)
	assert.Zero(t, streamBytes(h), "a stream read to its end gives its bytes back")
	assert.Zero(t, streamCount(h))
}

// TestResumableStreamsBoundedPerOwner: a client (owner) keeps at most
// ResumeStreams streams and ResumeBytes bytes of events; a call past the
// stream bound gets a plain stream, and events past the byte budget drop
// the oldest of their stream.
func TestResumableStreamsBoundedPerOwner(t *testing.T) {
	s := startServer(t, &Options{ResumeStreams: owner.Limit{PerOwner: 1}, ResumeBytes: owner.Limit{PerOwner: 2048}})
	proceed := make(chan struct{})
	s.tools.call = func(ctx context.Context, req *CallRequest) (*metadata.CallToolResult, error) {
		for i := range 20 {
			_ = req.Notify.Progress(float64(i), 20, strings.Repeat("p", 200))
		}
		if req.Notify.Resumable() {
			_ = req.Notify.CloseStream()
			select {
			case <-proceed:
			case <-ctx.Done():
			}
		}
		return &metadata.CallToolResult{Content: []json.RawMessage{metadata.TextContent("done")}}, nil
	}
	token := initWithCaps(t, s, "2025-11-25", map[string]any{})
	body := rpc(1, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{}, "_meta": map[string]any{"progressToken": "p"}})
	first := drain(t, s.openCall(t, body, map[string]string{headerSessionID: token}))
	require.Len(t, first, 21, "the priming event and every progress reach the live reader")
	h := s.Config.Handler.(*Handler).h
	assert.LessOrEqual(t, streamBytes(h), int64(2048), "the oldest went first")
	assert.Positive(t, streamBytes(h))

	second := drain(t, s.openCall(t, body, map[string]string{headerSessionID: token}))
	require.Len(t, second, 21, "every progress and the result")
	assert.Empty(t, second[0].ID, "a plain stream: the client keeps as many streams as it may")
	assert.Equal(t, "done", resultText(t, second[20].Data))

	close(proceed)
	stream, _, _ := clientreq.ParseEventID(first[0].ID)
	status, st := s.getStream(t, token, first[20].ID)
	require.Equal(t, http.StatusOK, status)
	rest := drain(t, st)
	require.Len(t, rest, 1)
	assert.Equal(t, "done", resultText(t, rest[0].Data))
	require.Eventually(t, func() bool { return h.streams.Get(stream) == nil }, 10*time.Second, 5*time.Millisecond)
	assert.Zero(t, streamBytes(h))
	assert.Zero(t, streamCount(h))
}

// TestResumableCallEndsItsExchangeAsTheCallDid: a call answered on a
// resumable stream that its client reads to the end ends its exchange
// with the call's own outcome (the middleware, telemetry's SERVER span
// among them, sees an isError result or success, not "streamed").
func TestResumableCallEndsItsExchangeAsTheCallDid(t *testing.T) {
	log := &exchangeLog{}
	s := startServer(t, &Options{Middleware: []Middleware{log.link}})
	token := initWithCaps(t, s, "2025-11-25", map[string]any{})
	hdr := map[string]string{headerSessionID: token}

	n := log.len()
	events := drain(t, s.openCall(t, callEcho(1), hdr))
	require.Len(t, events, 2, "a priming event and the result")
	bad := rpc(2, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": 7}})
	events = drain(t, s.openCall(t, bad, hdr))
	require.Len(t, events, 2)
	assert.Contains(t, events[1].Data, `"isError":true`)

	var outcomes []string
	for _, x := range log.since(n) {
		outcomes = append(outcomes, x.outcome)
	}
	assert.Equal(t, []string{"ok", "isError"}, outcomes)
}

// streamBytes returns the bytes of the resumable streams h keeps.
func streamBytes(h *handler) int64 {
	b, _ := h.streams.Held()
	return b
}

// streamCount returns the resumable streams h keeps.
func streamCount(h *handler) int64 {
	_, n := h.streams.Held()
	return n
}
