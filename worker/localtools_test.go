package worker

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/metadata"
)

// TestCallToolLocalIsTheDirectReply: a tool call handed to the app's
// handler in process (metadata.LocalTools) is answered with what the
// handler's direct reply over HTTP holds, and its tool sees the same call:
// results, tool errors, panics, bad results, a missing capability's
// failure and a function it does not serve.
func TestCallToolLocalIsTheDirectReply(t *testing.T) {
	a, s := testApp(t, io.Discard)
	a.ConfigureMcpTool("needs").Handle(func(context.Context, *ToolContext) (*Result, error) {
		return nil, &CapabilityError{Capability: "sampling"}
	})
	h := a.Handler()
	tools := metadata.LocalTools(h)
	require.NotNil(t, tools, "an app's handler that nothing wraps runs tool calls itself")
	srv := httptest.NewServer(h)
	defer srv.Close()

	const full = `{"name":"greet","arguments":{"name":"Ada","times":2},"sessionid":"s1","clientinfo":{"name":"cli","version":"1.0"},` +
		`"transport":{"name":"http-streamable","sessionId":"s1","properties":{"headers":{"X-Test":"yes"}}}}`
	for _, c := range []struct{ fn, ctx string }{
		{"greet", full},
		{"greet", `{"name":"greet","arguments":{"name":""}}`},
		{"list_items", `{"name":"list"}`},
		{"structured", `{"name":"structured"}`},
		{"nothing", `{"name":"nothing"}`},
		{"badblock", `{"name":"badblock"}`},
		{"boom", `{"name":"boom"}`},
		{"echo", `{"name":"echo","arguments":{"message":7}}`},
		{"needs", `{"name":"needs"}`},
		{"nope", `{"name":"nope"}`},
	} {
		header := http.Header{}
		header.Set(metadata.HeaderInvocationID, "inv-9")
		header.Set("Accept", metadata.MediaTypeDirectResult+", application/json")

		req, err := http.NewRequest(http.MethodPost, srv.URL+"/"+c.fn, strings.NewReader(body(t, c.ctx, 0)))
		require.NoError(t, err)
		req.Header = header.Clone()
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		want, err := io.ReadAll(res.Body)
		res.Body.Close()
		require.NoError(t, err)
		overHTTP := s.get()

		ic, err := metadata.DecodeToolInvocationContext([]byte(c.ctx))
		require.NoError(t, err)
		d, status, data := tools.CallToolLocal(t.Context(), &metadata.LocalToolCall{Function: c.fn, Context: ic, Header: header})
		assert.Equal(t, res.StatusCode, status, c.fn)
		if res.StatusCode != http.StatusOK {
			assert.Nil(t, d, c.fn)
			assert.Equal(t, string(want), string(data), c.fn)
			continue
		}
		require.NotNil(t, d, c.fn)
		assert.Equal(t, string(want), string(appendDirectReply(nil, d.Logs, d.Result, outputCheck{digest: d.Checked, issue: d.OutputIssue})), c.fn)
		if c.ctx == full {
			local := s.get()
			require.NotSame(t, overHTTP, local)
			assert.Equal(t, overHTTP.Arguments, local.Arguments)
			assert.Equal(t, string(overHTTP.rawArgs), string(local.rawArgs))
			assert.Equal(t, overHTTP.SessionID, local.SessionID)
			assert.Equal(t, overHTTP.ClientInfo, local.ClientInfo)
			assert.Equal(t, overHTTP.InvocationID, local.InvocationID)
			assert.Equal(t, overHTTP.FunctionName, local.FunctionName)
			v, _ := local.Transport.Header("X-Test")
			assert.Equal(t, "yes", v)
		}
	}
}

// TestWrappedHandlerRunsNoLocalTools: the handler of an app whose
// telemetry wraps it takes every call through the wrap, which makes the
// worker's span: it runs no tool calls itself.
func TestWrappedHandlerRunsNoLocalTools(t *testing.T) {
	a, _ := testApp(t, io.Discard)
	wrapped := 0
	a.wrap = func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			wrapped++
			h.ServeHTTP(w, r)
		})
	}
	h := a.Handler()
	assert.Nil(t, metadata.LocalTools(h))
	srv := httptest.NewServer(h)
	defer srv.Close()
	r := post(t, srv.URL, "echo", body(t, `{"name":"echo","arguments":{"message":"hi"}}`, 0))
	assert.Equal(t, http.StatusOK, r.status)
	assert.Equal(t, 1, wrapped)
	assert.Contains(t, r.env.Content, `"text":"hi"`)
}
