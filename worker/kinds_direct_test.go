package worker

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/metadata"
)

// directKindsApp serves a static resource with _meta, a resource that
// returns nothing, a template, a prompt and a dynamic completion.
func directKindsApp() *App {
	a := New(&Options{Stdout: io.Discard, Stderr: io.Discard})
	a.ConfigureMcpResource("test://doc").WithFunctionName("doc").WithMimeType("text/plain").
		Handle(func(_ context.Context, rc *ResourceContext) (*ResourceResult, error) {
			rc.Logf("reading")
			return &ResourceResult{Text: "line 1\nline \"2\"", Meta: map[string]any{"k": "v"}}, nil
		})
	a.ConfigureMcpResource("test://none").WithFunctionName("none").
		Handle(func(context.Context, *ResourceContext) (*ResourceResult, error) { return nil, nil })
	a.ConfigureMcpResource("test://items/{id}").WithFunctionName("item").WithMimeType("application/json").
		Handle(func(_ context.Context, rc *ResourceContext) (*ResourceResult, error) {
			return &ResourceResult{Blob: []byte{0, 1, 2, rc.Variable("id")[0]}}, nil
		})
	a.ConfigureMcpPrompt("greet").WithArgument("who", "Who.", Required).
		WithCompletionFunc("who", func(_ context.Context, cc *CompletionContext) ([]string, error) {
			return []string{cc.Value + "a", cc.Value + "b"}, nil
		}).
		Handle(func(_ context.Context, pc *PromptContext) (*PromptResult, error) {
			who, _ := pc.Argument("who")
			return &PromptResult{Description: "A greeting", Meta: map[string]any{"m": 1},
				Messages: []PromptMessage{UserMessage(Text("hi " + who))}}, nil
		})
	return a
}

// TestKindsDirectReply: a resource read, a prompt and a completion are
// answered with the direct reply (the method's result object as it is,
// one encoding) when Accept lists it, and with today's custom-handler
// reply otherwise; the direct Result is the result the host reads from
// today's envelope.
func TestKindsDirectReply(t *testing.T) {
	srv := httptest.NewServer(directKindsApp().Handler())
	t.Cleanup(srv.Close)
	post := func(fn, ctxJSON string, h http.Header) (string, string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, srv.URL+"/"+fn, strings.NewReader(body(t, ctxJSON, 0)))
		require.NoError(t, err)
		for k, v := range h {
			req.Header[k] = v
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		data, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s", data)
		return resp.Header.Get("Content-Type"), string(data)
	}
	direct := http.Header{"Accept": {metadata.MediaTypeDirectResult + ", application/json"}}
	complete := http.Header{"Accept": direct["Accept"], metadata.HeaderMethod: {metadata.MethodComplete}}
	for _, c := range []struct {
		fn, ctx string
		h       http.Header
		logs    string
		want    string
	}{
		{"doc", `{"uri":"test://doc"}`, direct, `["reading"]`,
			`{"contents":[{"uri":"test://doc","mimeType":"text/plain","text":"line 1\nline \"2\"","_meta":{"k":"v"}}]}`},
		{"none", `{"uri":"test://none"}`, direct, `[]`, `{"contents":[]}`},
		{"item", `{"uri":"test://items/x"}`, direct, `[]`,
			`{"contents":[{"uri":"test://items/x","mimeType":"application/json","blob":"AAECeA=="}]}`},
		{"greet", `{"name":"greet","arguments":{"who":"bo"}}`, direct, `[]`,
			`{"description":"A greeting","messages":[{"role":"user","content":{"type":"text","text":"hi bo"}}],"_meta":{"m":1}}`},
		{"greet", `{"ref":{"type":"ref/prompt","name":"greet"},"argument":{"name":"who","value":"x"}}`, complete, `[]`,
			`{"completion":{"values":["xa","xb"],"total":2,"hasMore":false}}`},
	} {
		ctype, got := post(c.fn, c.ctx, c.h)
		assert.Equal(t, metadata.MediaTypeDirectResult, ctype, c.fn)
		var reply struct {
			Logs   json.RawMessage
			Result json.RawMessage
		}
		require.NoError(t, json.Unmarshal([]byte(got), &reply), got)
		assert.JSONEq(t, c.logs, string(reply.Logs), c.fn)
		assert.JSONEq(t, c.want, string(reply.Result), c.fn)

		// Without the direct reply in Accept: today's reply.
		h := c.h.Clone()
		h.Del("Accept")
		ctype, got = post(c.fn, c.ctx, h)
		assert.Equal(t, "application/json", ctype, c.fn)
		var today metadata.InvocationResponse
		require.NoError(t, json.Unmarshal([]byte(got), &today), got)
	}
}
