package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/host/internal/notify"
	"github.com/funcmcp/funcmcp/host/internal/owner"
	"github.com/funcmcp/funcmcp/metadata"
)

// subscriptionServer is notifyServer with its handler at hand.
func subscriptionServer(t *testing.T, opts *Options) (*testServer, *handler, *notify.Hub) {
	t.Helper()
	f := &fakeFunctions{fakeTools: newFakeTools(), lists: &FunctionLists{Resources: entries(1, `{"name":"r%d","uri":"test://a"}`)}}
	hub := notify.NewHub(notify.Limits{}, nil)
	o := Options{}
	if opts != nil {
		o = *opts
	}
	o.Notify, o.Sealer = hub, testSealer
	hd := NewHandler(serverOf(f), &o)
	srv := httptest.NewServer(checkedKeys(hd))
	t.Cleanup(srv.Close)
	t.Cleanup(hub.Close)
	return &testServer{Server: srv, tools: f.fakeTools}, hd.h, hub
}

// longURI is a resource URI of about 4 KB, the i-th.
func longURI(i int) string { return fmt.Sprintf("test://%d/%s", i, strings.Repeat("x", 4000)) }

// TestSessionSubscriptionsOfOneAddressAreBounded: sessions made one after
// the other by one client address, each subscribing to long URIs, are
// refused once the address's bytes are kept, with an error naming the
// limit; what is kept stays within it.
func TestSessionSubscriptionsOfOneAddressAreBounded(t *testing.T) {
	s, h, _ := subscriptionServer(t, nil)
	var refusal envelope
	sessions := 0
	for sessions < 200 && refusal.Error == nil {
		token := initSession(t, s, "2025-11-25")
		sessions++
		sess := map[string]string{headerSessionID: token, "MCP-Protocol-Version": "2025-11-25"}
		for j := 0; j < 15 && refusal.Error == nil; j++ { // 60 KB: within what one session may follow
			r := s.post(t, rpc(j, methodSubscribe, map[string]any{"uri": longURI(j)}), sess)
			require.NoError(t, json.Unmarshal([]byte(r.data), &refusal))
		}
	}
	require.NotNil(t, refusal.Error, "the subscriptions of %d sessions of one address were all kept", sessions)
	assert.Equal(t, codeServerError, refusal.Error.Code)
	assert.Regexp(t, `^Too many subscriptions: too many bytes of resource subscriptions (for this client|from this client address) \(the limit is \d+\)\.$`,
		refusal.Error.Message)
	assert.LessOrEqual(t, h.sessions.HeldFrom(owner.Address("127.0.0.1:1")), DefaultSubscriptionBytes.PerAddress)
	assert.Less(t, sessions, 100, "4 MiB from one address: about 66 sessions of 60 KB")
}

// TestSessionSubscriptionBytesPerSession: one session's URIs are bounded
// in bytes together, as one listener's are.
func TestSessionSubscriptionBytesPerSession(t *testing.T) {
	s, _, _ := subscriptionServer(t, nil)
	sess := map[string]string{headerSessionID: initSession(t, s, "2025-11-25"), "MCP-Protocol-Version": "2025-11-25"}
	var env envelope
	n := 0
	for ; n < 256 && env.Error == nil; n++ {
		r := s.post(t, rpc(n, methodSubscribe, map[string]any{"uri": longURI(n)}), sess)
		require.NoError(t, json.Unmarshal([]byte(r.data), &env))
	}
	require.NotNil(t, env.Error, "256 URIs of 4 KB kept for one session")
	assert.Equal(t, 17, n, "16 URIs of 4 KB fit in 64 KiB")
	assert.Equal(t, "Too many subscriptions: the URIs and task ids of one listener are too long together (the limit is 65536 bytes).", env.Error.Message)
}

// TestSessionSubscriptionsWithoutStreamExpire: a session that subscribes
// and never opens its stream, or left it, keeps nothing past the grace;
// one whose stream is open keeps its subscriptions.
func TestSessionSubscriptionsWithoutStreamExpire(t *testing.T) {
	s, h, hub := subscriptionServer(t, nil)
	var clock sync.Mutex
	now := time.Now()
	h.sessions.SetClock(func() time.Time {
		clock.Lock()
		defer clock.Unlock()
		return now
	})
	subscribe := func(token string) {
		r := s.post(t, rpc(1, methodSubscribe, map[string]any{"uri": "test://a"}), map[string]string{headerSessionID: token, "MCP-Protocol-Version": "2025-11-25"})
		require.JSONEq(t, `{"jsonrpc":"2.0","id":1,"result":{}}`, r.data)
	}
	streamless, streaming := initSession(t, s, "2025-11-25"), initSession(t, s, "2025-11-25")
	subscribe(streamless)
	subscribe(streaming)
	st := open(t, http.MethodGet, s.URL, "", map[string]string{headerSessionID: streaming, "Accept": "text/event-stream"})
	require.Equal(t, http.StatusOK, st.resp.StatusCode)
	require.Eventually(t, func() bool { return hub.Listeners() == 1 }, 10*time.Second, 5*time.Millisecond)
	require.Equal(t, 2, h.sessions.Size())

	clock.Lock()
	now = now.Add(10 * time.Minute) // within the token's day, past the grace
	clock.Unlock()
	subscribe(initSession(t, s, "2025-11-25")) // any request sweeps
	assert.Equal(t, 2, h.sessions.Size(), "the session without a stream is forgotten; the one streaming, and the new one, are kept")
	hub.Publish(notify.Change{Kind: notify.ResourceUpdated, URI: "test://a"})
	assert.JSONEq(t, `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"test://a"}}`, st.next(t))
}

// TestSessionSubscriptionsExpireWithoutTraffic: the grace ends with no
// request coming: what expired goes by itself.
func TestSessionSubscriptionsExpireWithoutTraffic(t *testing.T) {
	s, h, _ := subscriptionServer(t, &Options{SubscriptionGrace: 20 * time.Millisecond})
	token := initSession(t, s, "2025-11-25")
	r := s.post(t, rpc(1, methodSubscribe, map[string]any{"uri": "test://a"}), map[string]string{headerSessionID: token, "MCP-Protocol-Version": "2025-11-25"})
	require.JSONEq(t, `{"jsonrpc":"2.0","id":1,"result":{}}`, r.data)
	require.Eventually(t, func() bool { return h.sessions.Size() == 0 }, 10*time.Second, 5*time.Millisecond)
	assert.Zero(t, h.sessions.Held())
	assert.Zero(t, h.sessions.URIs())
}

// TestListenersOfOneAddressAreBounded: listen streams from one address,
// each with a function key of its own (a client each, all of one address), are
// refused once the address's bytes, or its number of listeners,
// are reached; another client is served still.
func TestListenersOfOneAddressAreBounded(t *testing.T) {
	s, _, hub := subscriptionServer(t, nil)
	s2, _, hub2 := subscriptionServer(t, nil)
	uris := make([]string, 15)
	for i := range uris {
		uris[i] = longURI(i)
	}
	listenWith := func(s *testServer, i int, filter map[string]any) reply {
		h := modernHeaders(methodListen, "")
		h["X-Functions-Key"] = fmt.Sprintf("key-%d", i)
		ctx, cancel := context.WithCancel(t.Context())
		t.Cleanup(cancel)
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.URL, strings.NewReader(listenBody(i, filter, nil)))
		require.NoError(t, err)
		for k, v := range h {
			req.Header.Set(k, v)
		}
		req.Header.Set("Accept", acceptBoth)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		t.Cleanup(func() { _ = resp.Body.Close() })
		line, err := bufio.NewReader(resp.Body).ReadString('}') // the acknowledgement, or the refusal, begins
		require.NoError(t, err)
		return reply{status: resp.StatusCode, data: line}
	}
	var refusal reply
	streams := 0
	for ; streams < 100; streams++ {
		r := listenWith(s, streams, map[string]any{"resourceSubscriptions": uris})
		if strings.Contains(r.data, `"error"`) {
			refusal = r
			break
		}
	}
	require.Less(t, streams, 100, "100 listeners of 60 KB of URIs each kept for one address")
	assert.Contains(t, refusal.data, `"message":"Too many listeners: too many bytes kept for listeners from this client address (the limit is 4194304)."`)
	assert.LessOrEqual(t, hub.Bytes(), notify.DefaultBytes.PerAddress)

	for streams = 0; streams < 100; streams++ {
		r := listenWith(s2, streams, map[string]any{"toolsListChanged": true})
		if strings.Contains(r.data, `"error"`) {
			refusal = r
			break
		}
	}
	require.Less(t, streams, 100)
	assert.Contains(t, refusal.data, `"message":"Too many listeners: too many listeners from this client address (the limit is 64)."`)
	assert.Equal(t, int64(notify.DefaultListenersPerAddress), hub2.Counted())
}

// TestListenAcknowledgementIsBounded: the acknowledgement repeats only
// what the listener follows, which is bounded in bytes; a listen asking
// more is refused before anything is kept, and a larger request is
// refused whole.
func TestListenAcknowledgementIsBounded(t *testing.T) {
	s, _, hub := subscriptionServer(t, nil)
	uris := func(n int) []string {
		l := make([]string, n)
		for i := range l {
			l[i] = longURI(i)
		}
		return l
	}
	st := open(t, http.MethodPost, s.URL, listenBody("A", map[string]any{"resourceSubscriptions": uris(16)}, nil), modernHeaders(methodListen, ""))
	ack := st.next(t)
	assert.Contains(t, ack, metadata.NotifyAcknowledged)
	assert.LessOrEqual(t, len(ack), notify.DefaultSubscriptionBytes+2<<10, "the acknowledgement of what fits")

	r := s.post(t, listenBody("B", map[string]any{"resourceSubscriptions": uris(20)}, nil), modernHeaders(methodListen, ""))
	assert.Equal(t, http.StatusOK, r.status)
	assert.JSONEq(t, `{"jsonrpc":"2.0","id":"B","error":{"code":-32000,"message":"Too many listeners: the URIs and task ids of one listener are too long together (the limit is 65536 bytes)."}}`, r.data)

	r = s.post(t, listenBody("C", map[string]any{"resourceSubscriptions": uris(255)}, nil), modernHeaders(methodListen, ""))
	assert.Equal(t, http.StatusRequestEntityTooLarge, r.status)
	assert.JSONEq(t, `{"jsonrpc":"2.0","id":"C","error":{"code":-32000,"message":"Request Entity Too Large: a subscriptions/listen request is at most 131072 bytes."}}`, r.data)

	junk := strings.Replace(listenBody("D", map[string]any{"toolsListChanged": true}, nil), `{`, `{"junk":"`+strings.Repeat("j", 200<<10)+`",`, 1)
	r = s.post(t, junk, modernHeaders(methodListen, ""))
	assert.Equal(t, http.StatusRequestEntityTooLarge, r.status, "what a listen stream would keep of its request is bounded, wherever it is")
	assert.Equal(t, 1, hub.Listeners())
}

// TestLegacySSESubscriptionsOfOneAddressAreBounded: legacy SSE streams
// from one address, each with other credentials, count the URIs they
// follow against the address's bytes.
func TestLegacySSESubscriptionsOfOneAddressAreBounded(t *testing.T) {
	f := &fakeFunctions{fakeTools: newFakeTools(), lists: &FunctionLists{Resources: entries(1, `{"name":"r%d","uri":"test://a"}`)}}
	hub := notify.NewHub(notify.Limits{}, nil)
	defer hub.Close()
	sse, err := NewLegacySSE(NewHandler(serverOf(f), &Options{Notify: hub, Sealer: testSealer}), &LegacySSEOptions{InstanceID: "inst1", Sealer: newSealer(t, sseTestKey)})
	require.NoError(t, err)
	mux := http.NewServeMux()
	mux.HandleFunc("/runtime/webhooks/mcp/sse", sse.ServeStream)
	mux.HandleFunc("/runtime/webhooks/mcp/message", sse.ServeMessage)
	srv := httptest.NewServer(checkedKeys(mux))
	t.Cleanup(func() { sse.Close(); srv.Close() })

	var refusal string
	streams := 0
	for ; streams < 100 && refusal == ""; streams++ {
		st := openStream(t, srv.URL, "", http.Header{"X-Functions-Key": {fmt.Sprint("key-", streams)}})
		code, _ := post(t, st.Endpoint, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2024-11-05","clientInfo":{"name":"c","version":"1"}}}`)
		require.Equal(t, http.StatusAccepted, code)
		next(t, st)
		for j := 0; j < 15 && refusal == ""; j++ {
			msg, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": j + 1, "method": methodSubscribe, "params": map[string]any{"uri": longURI(j)}})
			code, _ := post(t, st.Endpoint, string(msg))
			require.Equal(t, http.StatusAccepted, code)
			if ev := next(t, st); strings.Contains(ev.Data, `"error"`) {
				refusal = ev.Data
			}
		}
	}
	require.NotEmpty(t, refusal, "%d legacy SSE streams of one address kept 60 KB of URIs each", streams)
	assert.Contains(t, refusal, `"message":"Too many subscriptions: too many bytes kept for listeners from this client address (the limit is 4194304)."`)
	assert.LessOrEqual(t, hub.Bytes(), notify.DefaultBytes.PerAddress)
}
