package invoke

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/metadata"
)

// TestLocalWorkerServesCalls: with Options.Local every call is served by
// the handler in process, whatever base URL the worker has (none that
// answers here), with the headers the hop sends and the body as sent.
func TestLocalWorkerServesCalls(t *testing.T) {
	var got *http.Request
	var body string
	inv := NewClient(&Options{HostVersion: "v9", MaxCalls: 4, Local: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r
		data, _ := io.ReadAll(r.Body)
		body = string(data)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"Outputs":{},"Logs":[],"ReturnValue":"ok"}`))
	})})
	inv.SetWorker("http://in-process.invalid")
	reply, err := inv.Invoke(t.Context(), &Function{Name: "f", DataKey: "context", Tool: "f", Method: "completion/complete"}, "id-1", []byte(`{"Data":{}}`), nil)
	require.NoError(t, err)
	require.NotNil(t, reply)
	require.NotNil(t, got)
	assert.Equal(t, "/f", got.URL.Path)
	assert.Equal(t, http.MethodPost, got.Method)
	assert.Equal(t, "id-1", got.Header.Get(metadata.HeaderInvocationID))
	assert.Equal(t, "v9", got.Header.Get(metadata.HeaderHostVersion))
	assert.Equal(t, "completion/complete", got.Header.Get(metadata.HeaderMethod))
	assert.Equal(t, `{"Data":{}}`, body)
}

// TestLocalWorkerFailures: a non-2xx answer is a failed call with its
// status, and a handler that panics fails its call rather than the
// process.
func TestLocalWorkerFailures(t *testing.T) {
	f := &Function{Name: "f", DataKey: "context", Tool: "f"}
	inv := NewClient(&Options{HostVersion: "v", MaxCalls: 1, Local: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "no such function", http.StatusNotFound)
	})})
	inv.SetWorker("http://in-process.invalid")
	_, err := inv.Invoke(t.Context(), f, "id", []byte(`{}`), nil)
	var ie *Error
	require.ErrorAs(t, err, &ie)
	assert.Equal(t, http.StatusNotFound, ie.Status)
	assert.Contains(t, string(ie.Body), "no such function")

	inv = NewClient(&Options{HostVersion: "v", MaxCalls: 1, Local: http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		panic("boom")
	})})
	inv.SetWorker("http://in-process.invalid")
	_, err = inv.Invoke(t.Context(), f, "id", []byte(`{}`), nil)
	require.ErrorAs(t, err, &ie)
	assert.True(t, strings.Contains(err.Error(), "panicked: boom"), err.Error())
}

// TestLocalWorkerIsRoutedAfresh: a call made under a request the host's
// chi router routed (a legacy SSE stream's GET) reaches a worker whose
// chi router routes POST /{function}.
func TestLocalWorkerIsRoutedAfresh(t *testing.T) {
	worker := chi.NewRouter()
	worker.Post("/{function}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"Outputs":{},"Logs":[],"ReturnValue":"` + chi.URLParam(r, "function") + `"}`))
	})
	inv := NewClient(&Options{HostVersion: "v", MaxCalls: 1, Local: worker})
	inv.SetWorker("http://in-process.invalid")

	host := chi.NewRouter()
	var reply *Reply
	var err error
	host.Get("/runtime/webhooks/mcp/sse", func(_ http.ResponseWriter, r *http.Request) {
		reply, err = inv.Invoke(r.Context(), &Function{Name: "get_weather", DataKey: "context", Tool: "get_weather"}, "id", []byte(`{}`), nil)
	})
	host.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/runtime/webhooks/mcp/sse", nil))
	require.NoError(t, err)
	require.NotNil(t, reply)
}

// TestLocalWorkerChannelInProcess: a worker served in process reaches the
// call channel back through the transport its request's context carries
// (metadata.Channel), the hub answering as over its listener; the
// listener is closed here, so nothing goes over the network.
func TestLocalWorkerChannelInProcess(t *testing.T) {
	hub := NewHub(discard(), 0)
	t.Cleanup(hub.Close)
	client := &fakeNotifier{progress: true}
	offer, closeChannel := hub.Open("inv-1", client)
	defer closeChannel()
	require.NotNil(t, offer)
	require.NoError(t, hub.srv.Close(), "the hub's listener is gone")

	var status int
	inv := NewClient(&Options{HostVersion: "v", MaxCalls: 1, Local: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rt := metadata.Channel(r.Context())
		require.NotNil(t, rt, "the request carries the in-process channel")
		req, err := http.NewRequestWithContext(r.Context(), http.MethodPost, r.Header.Get(metadata.HeaderNotifyURL),
			strings.NewReader(`{"type":"progress","progress":1,"total":2,"message":"half"}`))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+r.Header.Get(metadata.HeaderNotifyToken))
		resp, err := (&http.Client{Transport: rt}).Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		status = resp.StatusCode
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"Outputs":{},"Logs":[],"ReturnValue":"ok"}`))
	})})
	inv.SetWorker("http://in-process.invalid")
	_, err := inv.Invoke(t.Context(), &Function{Name: "f", DataKey: "context", Tool: "f"}, "inv-1", []byte(`{}`), offer)
	require.NoError(t, err)
	assert.Equal(t, http.StatusNoContent, status)
	assert.Equal(t, []string{"progress half"}, client.received())
}
