package invoke

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/metadata"
)

func TestArgumentText(t *testing.T) {
	tests := []struct{ in, want string }{
		{`"Oslo"`, "Oslo"},
		{`"a \"q\""`, `a "q"`},
		{`3.50`, `3.50`},
		{`true`, `true`},
		{`null`, `null`},
		{`{"a":[1, 2]}`, `{"a":[1, 2]}`},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, argumentText(json.RawMessage(tc.in)), tc.in)
	}
}

// TestConnectionsSizedToCalls checks that the client keeps as many idle
// connections as calls may run at once: under full load no call dials the
// worker again.
func TestConnectionsSizedToCalls(t *testing.T) {
	for _, maxCalls := range []int{1, 3, 1000} {
		c := NewClient(&Options{HostVersion: "v", MaxCalls: maxCalls})
		tr, ok := c.client.Transport.(*http.Transport)
		require.True(t, ok)
		assert.Equal(t, maxCalls, tr.MaxIdleConnsPerHost)
		assert.Equal(t, maxCalls, tr.MaxIdleConns)
		assert.Nil(t, tr.Proxy, "the worker is local: no proxy")
		assert.Equal(t, maxCalls, c.hop.maxIdle)
	}
}

func TestBody(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	body, err := Body(&Function{Name: "get_weather", DataKey: "ctx", Tool: "weather"}, &Call{
		Arguments: map[string]json.RawMessage{"city": json.RawMessage(`"Oslo"`)},
		SessionID: "s-1",
		Headers:   http.Header{"Accept": {"application/json", "text/event-stream"}, "X-Functions-Key": {"secret"}},
	}, now)
	require.NoError(t, err)
	var got struct {
		Data     map[string]json.RawMessage
		Metadata struct {
			Mcptoolargs  map[string]string `json:"mcptoolargs"`
			Mcpsessionid string            `json:"mcpsessionid"`
			Sys          struct{ MethodName, UtcNow, RandGuid string }
		}
	}
	require.NoError(t, json.Unmarshal(body, &got))
	assert.NotContains(t, string(body), "secret", "the function key never leaves the host")
	assert.JSONEq(t, `{"name":"weather","arguments":{"city":"Oslo"},"sessionid":"s-1",
		"transport":{"name":"http-streamable","sessionId":"s-1","properties":{"headers":{"Accept":"application/json,text/event-stream"}}}}`, string(got.Data["ctx"]))
	assert.Equal(t, map[string]string{"city": "Oslo"}, got.Metadata.Mcptoolargs)
	assert.Equal(t, "s-1", got.Metadata.Mcpsessionid)
	assert.Equal(t, "get_weather", got.Metadata.Sys.MethodName)
	assert.Equal(t, "2026-01-02T03:04:05.000000006Z", got.Metadata.Sys.UtcNow)
	assert.Len(t, got.Metadata.Sys.RandGuid, 36)

	var req metadata.InvocationRequest
	require.NoError(t, json.Unmarshal(body, &req))
	tc, err := metadata.ToolContextFromRequest(&req, "ctx")
	require.NoError(t, err, "the worker SDK reads what the host sends")
	assert.Equal(t, "weather", tc.Name)
}

// TestCallsWaitForTheExpectedWorker: while a worker is expected and none
// is ready, calls wait for it and go to it once it is named; a worker that
// turns unhealthy meanwhile fails them at once; with no worker expected,
// a call fails at once.
func TestCallsWaitForTheExpectedWorker(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"Outputs":{},"Logs":["ran"],"ReturnValue":"ok"}`))
	}))
	defer srv.Close()
	f := &Function{Name: "f", DataKey: "context", Tool: "f"}

	inv := NewClient(&Options{HostVersion: "v", MaxCalls: 4, RestartWait: time.Minute})
	_, err := inv.Invoke(t.Context(), f, "id0", []byte(`{}`), nil)
	require.EqualError(t, err, "the worker is not started")

	inv.ExpectWorker()
	assert.True(t, inv.Restarting())
	const n = 8
	errs := make(chan error, n)
	for i := range n {
		go func() {
			reply, err := inv.Invoke(t.Context(), f, fmt.Sprint("id", i), []byte(`{}`), nil)
			if err == nil && (len(reply.Logs) != 1 || reply.Logs[0] != "ran") {
				err = fmt.Errorf("unexpected reply %+v", reply)
			}
			errs <- err
		}()
	}
	inv.SetWorker(srv.URL + "/")
	for range n {
		assert.NoError(t, <-errs)
	}

	var reason atomic.Pointer[string]
	sick := NewClient(&Options{HostVersion: "v", MaxCalls: 4, RestartWait: time.Minute, Unhealthy: func() string {
		if r := reason.Load(); r != nil {
			return *r
		}
		return ""
	}})
	sick.ExpectWorker()
	go func() {
		_, err := sick.Invoke(t.Context(), f, "id", []byte(`{}`), nil)
		errs <- err
	}()
	r := "it keeps failing"
	reason.Store(&r)
	sick.Wake()
	require.EqualError(t, <-errs, "the worker is unhealthy: it keeps failing")

	short := NewClient(&Options{HostVersion: "v", MaxCalls: 1, RestartWait: time.Minute, Timeout: 20 * time.Millisecond})
	short.ExpectWorker()
	_, err = short.Invoke(t.Context(), f, "id", []byte(`{}`), nil)
	require.EqualError(t, err, "no worker was ready within the call timeout (20ms)", "the wait is bounded by the call timeout")
}
