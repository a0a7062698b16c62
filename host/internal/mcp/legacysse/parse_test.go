package legacysse

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/host/internal/auth"
	"github.com/funcmcp/funcmcp/host/internal/caller"
	"github.com/funcmcp/funcmcp/host/internal/notify"
)

// countingEndpoint answers every request with an empty result and counts
// the messages it decodes for the transport.
type countingEndpoint struct{ routes atomic.Int64 }

// Route reads a message with encoding/json, as the endpoint's decoder
// would, and counts the pass.
func (e *countingEndpoint) Route(msg []byte) Route {
	e.routes.Add(1)
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(msg, &m) != nil {
		return Route{JSON: json.Valid(msg)}
	}
	if m.ID == nil {
		return Route{JSON: true, Cancel: m.Method == "notifications/cancelled"}
	}
	return Route{JSON: true, ID: string(m.ID)}
}

func (e *countingEndpoint) Serve(w http.ResponseWriter, r *http.Request, _ *Origin) {
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	body, _ := io.ReadAll(r.Body)
	if json.Unmarshal(body, &m) != nil || m.ID == nil {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{}}`))
}

func (e *countingEndpoint) Listen(*caller.Caller, func()) (*notify.Listener, error) { return nil, nil }
func (e *countingEndpoint) Change(notify.Change) []byte                             { return nil }

// startTransport serves a transport over e and opens one stream; it
// returns the message endpoint's URL and the stream's reader.
func startTransport(t *testing.T, e Endpoint) (*Transport, string, *bufio.Reader) {
	t.Helper()
	sealer, err := auth.NewSealer([]byte("0123456789abcdef0123456789abcdef"))
	require.NoError(t, err)
	tr, err := New(e, &Options{InstanceID: "inst1", Sealer: sealer})
	require.NoError(t, err)
	mux := http.NewServeMux()
	mux.HandleFunc("/sse", tr.ServeStream)
	mux.HandleFunc("/message", tr.ServeMessage)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	t.Cleanup(tr.Close)
	resp, err := srv.Client().Get(srv.URL + "/sse")
	require.NoError(t, err)
	t.Cleanup(func() { _ = resp.Body.Close() })
	r := bufio.NewReader(resp.Body)
	return tr, srv.URL + "/" + nextData(t, r), r
}

// nextData reads the data of the next event of a stream.
func nextData(t *testing.T, r *bufio.Reader) string {
	t.Helper()
	for range 10 {
		line, err := r.ReadString('\n')
		require.NoError(t, err)
		if data, ok := strings.CutPrefix(line, "data: "); ok {
			return strings.TrimSpace(data)
		}
	}
	t.Fatal("no event")
	return ""
}

func post(t *testing.T, url, body string) (int, string) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

// TestMessageDecodedOnce: a POSTed message is decoded once, where it is
// received; its route travels with it through the inbox to the stream's
// loop, which does not decode it again (the endpoint then reads the
// request it serves).
func TestMessageDecodedOnce(t *testing.T) {
	e := &countingEndpoint{}
	_, url, stream := startTransport(t, e)

	status, _ := post(t, url, `{"jsonrpc":"2.0","id":7,"method":"ping"}`)
	require.Equal(t, http.StatusAccepted, status)
	assert.JSONEq(t, `{"jsonrpc":"2.0","id":7,"result":{}}`, nextData(t, stream))
	assert.EqualValues(t, 1, e.routes.Load(), "a queued request is decoded once")

	status, _ = post(t, url, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`)
	require.Equal(t, http.StatusAccepted, status)
	assert.EqualValues(t, 2, e.routes.Load(), "a cancellation run at once is decoded once")

	// A request sent again is dropped by the route decoded when it came.
	status, _ = post(t, url, `{"jsonrpc":"2.0","id":7,"method":"ping"}`)
	require.Equal(t, http.StatusAccepted, status)
	status, _ = post(t, url, `{"jsonrpc":"2.0","id":8,"method":"ping"}`)
	require.Equal(t, http.StatusAccepted, status)
	assert.JSONEq(t, `{"jsonrpc":"2.0","id":8,"result":{}}`, nextData(t, stream), "id 7 ran already")
	assert.EqualValues(t, 4, e.routes.Load())
}

// TestDeliveredMessageDecodedOnce: a message forwarded from another
// instance is decoded once on the instance of its stream.
func TestDeliveredMessageDecodedOnce(t *testing.T) {
	e := &countingEndpoint{}
	tr, url, stream := startTransport(t, e)
	client, _, _, ok := tr.OpenState(strings.SplitN(url, QueryClientState+"=", 2)[1])
	require.True(t, ok)

	require.Equal(t, Delivered, tr.Deliver(client, []byte(`{"jsonrpc":"2.0","id":"a","method":"ping"}`)))
	assert.JSONEq(t, `{"jsonrpc":"2.0","id":"a","result":{}}`, nextData(t, stream))
	assert.EqualValues(t, 1, e.routes.Load())
}

// TestNotJSONRefusedByTheOneDecoding: a body that is not JSON is refused
// as before, read by the same one decoding that routes the message.
func TestNotJSONRefusedByTheOneDecoding(t *testing.T) {
	e := &countingEndpoint{}
	_, url, _ := startTransport(t, e)

	status, body := post(t, url, `{"jsonrpc":"2.0","id":1,`)
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Equal(t, "Bad Request: the body is not JSON.", body)
	assert.EqualValues(t, 1, e.routes.Load(), "the decoding that routes also checks the body is JSON")
}
