package listen

import (
	"bufio"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/host/internal/notify"
	"github.com/funcmcp/funcmcp/host/internal/owner"
)

// testServer is a Server that serves everything, without tasks.
func testServer() *Server {
	return &Server{KeepAlive: time.Hour, WriteTimeout: time.Minute, Log: slog.New(slog.DiscardHandler),
		Offer:         func() Offer { return Offer{Prompts: true, Resources: true} },
		ServerInfo:    []byte(`"info":{}`),
		TasksRequired: json.RawMessage(`{"required":true}`)}
}

// TestListenRefusals: what is refused before the stream opens comes back
// as a Refusal, in the order the checks are made; nothing is written.
func TestListenRefusals(t *testing.T) {
	hub := notify.NewHub(notify.Limits{}, nil)
	t.Cleanup(hub.Close)
	sv := testServer()
	ok := Request{ID: []byte(`1`), Params: []byte(`{"notifications":{"toolsListChanged":true}}`),
		HTTP: httptest.NewRequest(http.MethodPost, "/", nil), Owner: "o", Address: "a", Alone: true, SSE: true}
	for _, c := range []struct {
		name string
		edit func(r *Request)
		want Refusal
	}{
		{"no notifications", func(r *Request) { r.Params = []byte(`{}`) },
			Refusal{Code: -32602, Message: "Invalid params: notifications must be an object."}},
		{"not a boolean", func(r *Request) { r.Params = []byte(`{"notifications":{"toolsListChanged":1}}`) },
			Refusal{Code: -32602, Message: "Invalid params: notifications.toolsListChanged must be a boolean."}},
		{"task ids without the extension", func(r *Request) { r.Params = []byte(`{"notifications":{"taskIds":["t"]}}`) },
			Refusal{Status: 400, Code: -32021, Outcome: "error -32021", Data: json.RawMessage(`{"required":true}`),
				Message: "Missing required client capability: taskIds needs the io.modelcontextprotocol/tasks extension in _meta.io.modelcontextprotocol/clientCapabilities.extensions."}},
		{"in a batch", func(r *Request) { r.Alone = false },
			Refusal{Code: -32600, Message: "Invalid Request: subscriptions/listen needs a Streamable HTTP request of its own."}},
		{"no event stream", func(r *Request) { r.SSE = false },
			Refusal{Status: 406, Code: -32000, Outcome: "refused 406",
				Message: "Not Acceptable: subscriptions/listen answers with an event stream; accept text/event-stream."}},
	} {
		t.Run(c.name, func(t *testing.T) {
			req := ok
			c.edit(&req)
			rec := httptest.NewRecorder()
			got := sv.Listen(rec, hub, req)
			require.NotNil(t, got)
			assert.Equal(t, c.want, *got)
			assert.Zero(t, rec.Body.Len())
		})
	}

	closed := notify.NewHub(notify.Limits{}, nil)
	closed.Close()
	got := sv.Listen(httptest.NewRecorder(), closed, ok)
	require.NotNil(t, got)
	assert.Equal(t, Refusal{Code: -32000, Message: "The server is stopping: listen again later."}, *got)
}

// TestListenStream: an accepted listen writes its acknowledgement, what it
// asked for and, when the hub closes, the result that ends it.
func TestListenStream(t *testing.T) {
	hub := notify.NewHub(notify.Limits{}, nil)
	sv := testServer()
	sv.Offer = func() Offer { return Offer{} } // prompts are not served: not honoured
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		assert.Nil(t, sv.Listen(w, hub, Request{ID: []byte(`"L"`), Params: []byte(`{"notifications":{"toolsListChanged":true,"promptsListChanged":true}}`),
			HTTP: r, Owner: "o", Address: "a", Alone: true, SSE: true}))
	}))
	t.Cleanup(srv.Close)
	resp, err := http.Get(srv.URL)
	require.NoError(t, err)
	defer resp.Body.Close()
	assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	events := readEvents(resp)
	assert.Equal(t, `{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"notifications":{"toolsListChanged":true},"_meta":{"io.modelcontextprotocol/subscriptionId":"L"}}}`, <-events)
	hub.Publish(notify.Change{Kind: notify.PromptsListChanged})
	hub.Publish(notify.Change{Kind: notify.ToolsListChanged})
	assert.Equal(t, `{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"L"}}}`, <-events)
	hub.Close()
	assert.Equal(t, `{"jsonrpc":"2.0","id":"L","result":{"resultType":"complete","_meta":{"io.modelcontextprotocol/subscriptionId":"L","info":{}}}}`, <-events)
}

// readEvents sends the data of each event of resp's stream.
func readEvents(resp *http.Response) <-chan string {
	out := make(chan string, 16)
	go func() {
		defer close(out)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				out <- data
			}
		}
	}()
	return out
}

// TestServeSessionRefusals: a GET without a session is not allowed, one
// that does not accept an event stream is not acceptable.
func TestServeSessionRefusals(t *testing.T) {
	hub := notify.NewHub(notify.Limits{}, nil)
	t.Cleanup(hub.Close)
	table := NewSessions(hub, owner.Limit{}, owner.BudgetLimit{}, 0, time.Hour)
	sv := testServer()
	r := httptest.NewRequest(http.MethodGet, "/", nil)

	rec := httptest.NewRecorder()
	sv.ServeSession(rec, r, table, nil, true, "o", "a")
	assert.Equal(t, http.StatusMethodNotAllowed, rec.Code)
	assert.Equal(t, []string{"POST"}, rec.Header()["Allow"])
	assert.Equal(t, `{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Method not allowed"}}`, rec.Body.String())

	rec = httptest.NewRecorder()
	sv.ServeSession(rec, r, table, &Session{ID: "s"}, false, "o", "a")
	assert.Equal(t, http.StatusNotAcceptable, rec.Code)
	assert.Contains(t, rec.Body.String(), "accept text/event-stream.")

	hub.Close()
	rec = httptest.NewRecorder()
	sv.ServeSession(rec, r, table, &Session{ID: "s"}, true, "o", "a")
	assert.Equal(t, http.StatusServiceUnavailable, rec.Code)
	assert.Contains(t, rec.Body.String(), "Service Unavailable: the server is stopping.")
	assert.Zero(t, table.Size(), "nothing kept of a session refused")
}

// TestFollow: resources/subscribe and unsubscribe reach the legacy SSE
// stream's listener, else the session's subscriptions; without either, or
// with a bad uri, they are refused.
func TestFollow(t *testing.T) {
	hub := notify.NewHub(notify.Limits{}, nil)
	t.Cleanup(hub.Close)
	table := NewSessions(hub, owner.Limit{}, owner.BudgetLimit{}, 0, time.Hour)
	sub := Subscription{Method: "resources/subscribe", Params: []byte(`{"uri":"test://a"}`), Owner: "o", Address: "a"}

	f := table.Follow(sub)
	require.NotNil(t, f)
	assert.Equal(t, Refusal{Code: -32600, Message: "Invalid Request: resources/subscribe needs a session (initialize first) or a legacy SSE stream to deliver the updates on."}, *f)

	bad := sub
	bad.Params = []byte(`{"uri":""}`)
	bad.Session = &Session{ID: "s"}
	f = table.Follow(bad)
	require.NotNil(t, f)
	assert.Equal(t, -32602, f.Code)

	sub.Session = &Session{ID: "s"}
	assert.Nil(t, table.Follow(sub))
	assert.Equal(t, 1, table.URIs())
	sub.Method = "resources/unsubscribe"
	assert.Nil(t, table.Follow(sub))
	assert.Zero(t, table.URIs())
	assert.Zero(t, table.Size())

	l, err := hub.Listen(notify.ListenerOptions{Owner: "o", Address: "a", Uncounted: true, Wake: func() {}}, notify.Filter{})
	require.NoError(t, err)
	defer l.End(nil)
	sub.Method, sub.Stream = "resources/subscribe", l
	assert.Nil(t, table.Follow(sub))
	assert.Zero(t, table.Size(), "the stream's listener follows it, not the session")
	hub.Publish(notify.Change{Kind: notify.ResourceUpdated, URI: "test://a"})
	require.Eventually(t, func() bool {
		c, ok := l.Next()
		return ok && c.URI == "test://a"
	}, 5*time.Second, 5*time.Millisecond)
}
