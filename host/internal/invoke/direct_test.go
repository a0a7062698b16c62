package invoke

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

	"github.com/funcmcp/funcmcp/host/internal/auth"
	"github.com/funcmcp/funcmcp/metadata"
)

// fakeTools is a worker handler in process that runs tool calls itself:
// it keeps the call it was handed and answers with answer; ServeHTTP
// counts the requests it gets the other way.
type fakeTools struct {
	served int
	got    *metadata.LocalToolCall
	answer func(*metadata.LocalToolCall) (*metadata.DirectReply, int, []byte)
}

func (f *fakeTools) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	f.served++
	http.Error(w, "not this way", http.StatusTeapot)
}

func (f *fakeTools) LocalTools() metadata.LocalToolCaller { return f }

func (f *fakeTools) CallToolLocal(_ context.Context, call *metadata.LocalToolCall) (*metadata.DirectReply, int, []byte) {
	f.got = call
	return f.answer(call)
}

// callsOf are tool calls whose contexts test every part Body writes:
// arguments out of order, with spaces, escaped and invalid UTF-8 keys, an
// absent value; the function key left out of the headers, identity
// headers spliced in; client info with and without a title; legacy SSE.
func callsOf() map[string]*Call {
	h := clientHeaders(true)
	h.Set(auth.HeaderFunctionsKey, "secret")
	h.Add("Accept", "text/plain")
	return map[string]*Call{
		"full": {
			Arguments: map[string]json.RawMessage{
				"units": json.RawMessage(`"metric"`), "city": json.RawMessage(` { "name" : "Buenos Aires", "list": [1, 2 ,3] } `),
				"a\"b": json.RawMessage(`true`), "\xff": json.RawMessage(`1`), "none": nil,
			},
			SessionID:  "sess-1",
			ClientInfo: &metadata.ClientInfo{Name: "client", Title: "A client", Version: "1.0"},
			Headers:    h,
			Encoded:    newIdentityEncoder(identityHeaders()),
		},
		"bare":        {},
		"sse":         {Transport: metadata.TransportSSE, ClientInfo: &metadata.ClientInfo{Name: "c", Version: "2"}},
		"secret only": {Headers: http.Header{auth.HeaderFunctionsKey: {"k"}}, Arguments: map[string]json.RawMessage{}},
	}
}

// TestToolRequestIsWhatTheWorkerDecodes: the context a tool call hands a
// worker in process is the one the worker decodes from Body's request:
// name, arguments (each value and the raw object), session, client info,
// transport and its headers.
func TestToolRequestIsWhatTheWorkerDecodes(t *testing.T) {
	f := &Function{Name: "get_weather", DataKey: "context", Tool: "get_weather"}
	inv := NewClient(&Options{HostVersion: "v", MaxCalls: 1, Local: &fakeTools{}})
	for name, call := range callsOf() {
		t.Run(name, func(t *testing.T) {
			body, err := Body(f, call, time.Now())
			require.NoError(t, err)
			var req metadata.InvocationRequest
			require.NoError(t, json.Unmarshal(body, &req))
			want, err := metadata.ToolContextFromRequest(&req, "context")
			require.NoError(t, err)

			in, err := inv.ToolRequest(f, call, time.Now())
			require.NoError(t, err)
			require.Nil(t, in.body, "no body is built for a worker that runs tool calls itself")
			require.NotNil(t, in.local)
			got := in.local.Context
			assert.Equal(t, "get_weather", in.local.Function)
			assert.Equal(t, want.Name, got.Name)
			assert.Equal(t, want.SessionID, got.SessionID)
			assert.Equal(t, want.ClientInfo, got.ClientInfo)
			assert.Equal(t, string(want.RawArguments), string(got.RawArguments))
			assert.Equal(t, len(want.Arguments), len(got.Arguments))
			for k, v := range want.Arguments {
				assert.Equal(t, string(v), string(got.Arguments[k]), "argument %q", k)
			}
			require.NotNil(t, got.Transport)
			assert.Equal(t, want.Transport.Name, got.Transport.Name)
			assert.Equal(t, want.Transport.SessionID, got.Transport.SessionID)
			assert.Equal(t, want.Transport.Properties == nil, got.Transport.Properties == nil)
			if want.Transport.Properties != nil {
				assert.Equal(t, want.Transport.Properties.Headers.Map(), got.Transport.Properties.Headers.Map())
			}
			if call.ClientInfo != nil {
				assert.NotSame(t, call.ClientInfo, got.ClientInfo, "the worker's code gets a copy of the session's client info")
			}
		})
	}
}

// TestLocalToolCall: a tool call to a worker that runs them itself is
// handed over with the hop's headers, canonical, and its reply is taken as
// it is, never going through the handler's ServeHTTP.
func TestLocalToolCall(t *testing.T) {
	f := &Function{Name: "get_weather", DataKey: "context", Tool: "get_weather"}
	result := &metadata.CallToolResult{Content: []json.RawMessage{json.RawMessage(`{"type":"text","text":"sunny"}`)},
		StructuredContent: json.RawMessage(`{"sky":"clear"}`)}
	tools := &fakeTools{answer: func(*metadata.LocalToolCall) (*metadata.DirectReply, int, []byte) {
		return &metadata.DirectReply{Logs: []string{"looked up"}, Result: result, Checked: "digest"}, http.StatusOK, nil
	}}
	inv := NewClient(&Options{HostVersion: "v9", MaxCalls: 1, Local: tools})
	inv.SetWorker("http://in-process.invalid")
	in, err := inv.ToolRequest(f, &Call{Arguments: map[string]json.RawMessage{"city": json.RawMessage(`"Lima"`)}}, time.Now())
	require.NoError(t, err)
	reply, err := inv.Send(t.Context(), f, "id-7", in, nil)
	require.NoError(t, err)
	assert.Zero(t, tools.served)
	require.NotNil(t, tools.got)
	assert.Equal(t, "id-7", tools.got.Header.Get(metadata.HeaderInvocationID))
	assert.Equal(t, []string{"id-7"}, tools.got.Header["X-Azure-Functions-Invocationid"], "keys in their canonical spelling")
	assert.Equal(t, "v9", tools.got.Header.Get(metadata.HeaderHostVersion))
	assert.Equal(t, `{"city":"Lima"}`, string(tools.got.Context.RawArguments))
	assert.Equal(t, []string{"looked up"}, reply.Logs)
	d, err := reply.Result(true)
	require.NoError(t, err)
	assert.Same(t, result, d.Result)
	assert.Equal(t, "digest", d.Checked)
}

// TestLocalToolCallFailures: the answers that are no result are read as
// the same answers over HTTP are, a result is checked as a direct reply's
// is, and a panic fails the call.
func TestLocalToolCallFailures(t *testing.T) {
	f := &Function{Name: "f", DataKey: "context", Tool: "f"}
	send := func(answer func(*metadata.LocalToolCall) (*metadata.DirectReply, int, []byte)) error {
		inv := NewClient(&Options{HostVersion: "v", MaxCalls: 1, Local: &fakeTools{answer: answer}})
		inv.SetWorker("http://in-process.invalid")
		in, err := inv.ToolRequest(f, &Call{}, time.Now())
		require.NoError(t, err)
		_, err = inv.Send(t.Context(), f, "id", in, nil)
		return err
	}
	var ie *Error

	failure := `{"error":"needs elicitation","code":-32021,"Logs":["asked"]}`
	err := send(func(*metadata.LocalToolCall) (*metadata.DirectReply, int, []byte) {
		return nil, http.StatusInternalServerError, []byte(failure)
	})
	require.ErrorAs(t, err, &ie)
	assert.Equal(t, http.StatusInternalServerError, ie.Status)
	assert.Equal(t, failure, string(ie.Body))
	assert.Contains(t, err.Error(), "POST /f: the worker answered 500 Internal Server Error")

	err = send(func(*metadata.LocalToolCall) (*metadata.DirectReply, int, []byte) {
		return nil, http.StatusNotFound, []byte(`{"error":"no function \"f\""}`)
	})
	require.ErrorAs(t, err, &ie)
	assert.Equal(t, http.StatusNotFound, ie.Status)

	err = send(func(*metadata.LocalToolCall) (*metadata.DirectReply, int, []byte) {
		return &metadata.DirectReply{Result: &metadata.CallToolResult{Content: []json.RawMessage{json.RawMessage(`{"type":"text"}`)}}}, http.StatusOK, nil
	})
	require.ErrorAs(t, err, &ie)
	assert.Contains(t, err.Error(), "content block 0 of the direct reply")

	err = send(func(*metadata.LocalToolCall) (*metadata.DirectReply, int, []byte) {
		return &metadata.DirectReply{}, http.StatusOK, nil
	})
	require.ErrorAs(t, err, &ie)
	assert.Contains(t, err.Error(), "the direct reply has no Result")

	big := &metadata.DirectReply{Result: &metadata.CallToolResult{StructuredContent: make(json.RawMessage, maxResponseBytes+1)}}
	err = send(func(*metadata.LocalToolCall) (*metadata.DirectReply, int, []byte) { return big, http.StatusOK, nil })
	require.ErrorAs(t, err, &ie)
	assert.Contains(t, err.Error(), "the answer is larger than")

	err = send(func(*metadata.LocalToolCall) (*metadata.DirectReply, int, []byte) { panic("boom") })
	require.ErrorAs(t, err, &ie)
	assert.True(t, strings.Contains(err.Error(), "panicked: boom"), err.Error())
}

// TestToolRequestWithoutLocalTools: a worker handler in process that
// runs no tool calls itself, and a worker across HTTP, get Body's request.
func TestToolRequestWithoutLocalTools(t *testing.T) {
	f := &Function{Name: "f", DataKey: "context", Tool: "f"}
	call := &Call{Arguments: map[string]json.RawMessage{"x": json.RawMessage(`1`)}}
	want, err := Body(f, call, time.Unix(0, 0))
	require.NoError(t, err)
	for _, local := range []http.Handler{nil, http.NotFoundHandler()} {
		inv := NewClient(&Options{HostVersion: "v", MaxCalls: 1, Local: local})
		in, err := inv.ToolRequest(f, call, time.Unix(0, 0))
		require.NoError(t, err)
		assert.Nil(t, in.local)
		// The body's RandGuid differs from call to call.
		assert.Equal(t, len(want), len(in.body))
		assert.Equal(t, string(want[:strings.Index(string(want), "RandGuid")]), string(in.body[:strings.Index(string(in.body), "RandGuid")]))
	}
}

// TestBodiesHandedInProcessAreHeld: a body served by a handler in this
// process that runs no tool calls itself is not given back.
func TestBodiesHandedInProcessAreHeld(t *testing.T) {
	inv := NewClient(&Options{HostVersion: "v", MaxCalls: 1, Local: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"Outputs":{},"Logs":[],"ReturnValue":"ok"}`)
	})})
	inv.SetWorker("http://in-process.invalid")
	f := &Function{Name: "f", DataKey: "context", Tool: "f"}
	in, err := inv.ToolRequest(f, &Call{}, time.Now())
	require.NoError(t, err)
	require.True(t, in.pooled)
	_, err = inv.Send(t.Context(), f, "id", in, nil)
	require.NoError(t, err)
	assert.True(t, in.held)
}
