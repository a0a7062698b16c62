package worker

import (
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

// replyResults are results as callToolResult and binding build them.
func replyResults(t *testing.T) map[string]*metadata.CallToolResult {
	t.Helper()
	structured := func(r *Result) *metadata.CallToolResult {
		res, err := callToolResult(r)
		require.NoError(t, err)
		metadata.AddTextCopy(res, metadata.TextCopyJSON)
		return res
	}
	return map[string]*metadata.CallToolResult{
		"text":  structured(TextResult("plain <text> & \"quotes\"\n\u2028")),
		"error": metadata.ErrorResult("tool x failed: bad \xff input"),
		"structured": structured(&Result{StructuredContent: map[string]any{
			"city": "Zürich <&>", "temps": []float64{1.5, -2}, "note": "line\nbreak\ttab\\",
		}}),
		"raw structured with spaces": structured(&Result{StructuredContent: json.RawMessage(`{ "a" : [1, 2] ,"b":"x y" }`)}),
		"meta and blocks": structured(&Result{
			Content:           []Content{Text("one"), Image([]byte{1, 2, 3}, "image/png"), json.RawMessage(`{ "type": "text", "text": "two" }`)},
			StructuredContent: map[string]int{"n": 1},
			IsError:           true,
			Meta:              map[string]any{"k": "v"},
		}),
		"no content":  {StructuredContent: json.RawMessage(`{"n":1}`)},
		"nil content": {},
	}
}

// TestRepliesEncodeAsMarshal checks the hand-written replies against
// metadata.Marshal of the same values, the encoding the contract was
// written with: today's reply byte for byte, the direct reply too.
func TestRepliesEncodeAsMarshal(t *testing.T) {
	logs := []string{"first <line>", "second \"quoted\"\nline"}
	for name, res := range replyResults(t) {
		t.Run(name, func(t *testing.T) {
			for _, chk := range []outputCheck{{}, {digest: "abc123"}, {issue: "Output of tool 'x' does not match its output schema: at '' (/type): got string, want object"}} {
				env := envelope(res, chk)
				want := marshalReply(t, logs, env)
				assert.Equal(t, string(want), string(appendInvocationResponse(nil, logs, env)))
				want = marshalReply(t, nil, env)
				assert.Equal(t, string(want), string(appendInvocationResponse(nil, nil, env)))

				direct, err := metadata.Marshal(metadata.DirectReply{Logs: logs, Result: res, Checked: chk.digest, OutputIssue: chk.issue})
				require.NoError(t, err)
				assert.Equal(t, string(direct), string(appendDirectReply(nil, logs, res, chk)))
				var back metadata.DirectReply
				require.NoError(t, json.Unmarshal(appendDirectReply(nil, logs, res, chk), &back))
				assert.Equal(t, chk.digest, back.Checked)
				assert.Equal(t, chk.issue, back.OutputIssue)
			}
		})
	}
}

// marshalReply is today's reply built with metadata.Marshal at every level.
func marshalReply(t *testing.T, logs []string, env *metadata.ToolResult) []byte {
	t.Helper()
	if env.Type == metadata.ResultTypeCallToolResult {
		var res metadata.CallToolResult
		require.NoError(t, json.Unmarshal([]byte(env.Content), &res))
		content, err := metadata.Marshal(res)
		require.NoError(t, err)
		require.Equal(t, string(content), env.Content, "the envelope's content is the result as Marshal encodes it")
	}
	inner, err := metadata.Marshal(env)
	require.NoError(t, err)
	rv, err := metadata.Marshal(string(inner))
	require.NoError(t, err)
	if logs == nil {
		logs = []string{}
	}
	out, err := metadata.Marshal(metadata.InvocationResponse{Outputs: map[string]json.RawMessage{}, Logs: logs, ReturnValue: rv})
	require.NoError(t, err)
	return out
}

// postAccept posts an invocation of fn with an Accept header.
func postAccept(t *testing.T, url, fn, payload, accept string) (string, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url+"/"+fn, strings.NewReader(payload))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, res.StatusCode, "%s", data)
	return res.Header.Get("Content-Type"), data
}

// TestDirectReplyOnlyWhenAsked checks that the worker answers the direct
// reply only to a caller that lists it in Accept, with the same result
// today's reply carries but for the text copy, which the host adds; anyone
// else gets today's reply.
func TestDirectReplyOnlyWhenAsked(t *testing.T) {
	a, _ := testApp(t, io.Discard)
	srv := httptest.NewServer(a.Handler())
	defer srv.Close()
	for _, tc := range []struct{ fn, ctx string }{
		{"greet", `{"name":"greet","arguments":{"name":"Ada","times":2}}`},
		{"structured", `{"name":"structured"}`},
		{"echo", `{"name":"echo","arguments":{"message":"hi"}}`},
		{"greet", `{"name":"greet","arguments":{"name":""}}`},
	} {
		payload := body(t, tc.ctx, 1)
		for _, accept := range []string{"", "application/json", "*/*"} {
			ctype, _ := postAccept(t, srv.URL, tc.fn, payload, accept)
			assert.Equal(t, "application/json", ctype, "Accept %q gets today's reply", accept)
		}
		today := post(t, srv.URL, tc.fn, payload)
		ctype, data := postAccept(t, srv.URL, tc.fn, payload, metadata.MediaTypeDirectResult+", application/json")
		assert.Equal(t, metadata.MediaTypeDirectResult, ctype)
		var direct metadata.DirectReply
		require.NoError(t, json.Unmarshal(data, &direct), "%s", data)
		require.NotNil(t, direct.Result)
		assert.Equal(t, today.resp.Logs, direct.Logs)
		assert.Equal(t, today.env.Checked, direct.Checked)
		if today.env.Type == metadata.ResultTypeCallToolResult {
			// The direct reply leaves the text copy to the host, which
			// adds it as here: the result is then today's.
			for _, block := range direct.Result.Content {
				assert.False(t, metadata.IsTextCopy(block, direct.Result.StructuredContent), "%s: the direct reply carries a text copy: %s", tc.fn, data)
			}
			metadata.AddTextCopy(direct.Result, metadata.TextCopyJSON)
			want, err := json.Marshal(today.result)
			require.NoError(t, err)
			got, err := json.Marshal(direct.Result)
			require.NoError(t, err)
			assert.JSONEq(t, string(want), string(got))
		} else {
			require.Len(t, direct.Result.Content, 1)
			assert.JSONEq(t, today.env.Content, string(direct.Result.Content[0]))
		}
	}
}

// TestReplySizeHoldsTheReply: the buffer sized by replySize takes the whole
// direct reply, logs included, without growing.
func TestReplySizeHoldsTheReply(t *testing.T) {
	structured := []byte(strings.Repeat(`{"date":"2026-03-01","high":-1.3},`, 25) + `{}`)
	structured = append(append([]byte{'['}, structured...), ']')
	res := &metadata.CallToolResult{StructuredContent: structured}
	metadata.AddTextCopy(res, metadata.TextCopyJSON)
	logs := []string{"forecast for Buenos Aires: 7 days from 2026-03-01", `a "quoted" line`}
	buf := make([]byte, 0, replySize(logs, res))
	out := appendDirectReply(buf, logs, res, outputCheck{digest: "sha256-0123456789abcdef"})
	if &out[0] != &buf[:1][0] {
		t.Fatalf("the reply (%d bytes) outgrew its buffer (%d)", len(out), cap(buf))
	}
}
