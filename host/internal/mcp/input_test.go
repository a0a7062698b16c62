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
	"github.com/funcmcp/funcmcp/metadata"
)

// twoStepTool asks "name" (elicitation), then "model" (sampling), and
// answers with both answers and the answers the call was offered.
func twoStepTool(ctx context.Context, req *CallRequest) (*metadata.CallToolResult, error) {
	var answers []string
	for _, step := range []struct{ key, method, params string }{
		{"name", "elicitation/create", elicitParams},
		{"model", "sampling/createMessage", `{"messages":[],"maxTokens":1}`},
	} {
		reply, err := req.Notify.Request(ctx, step.key, step.method, json.RawMessage(step.params))
		if err != nil {
			return metadata.ErrorResult("error: " + err.Error()), nil
		}
		switch {
		case reply.InputRequired:
			return metadata.ErrorResult("needs input"), nil
		case reply.Error != nil:
			return metadata.ErrorResult(reply.Error.Message), nil
		}
		answers = append(answers, string(reply.Result))
	}
	return &metadata.CallToolResult{Content: []json.RawMessage{
		metadata.TextContent(strings.Join(answers, " | ")),
		metadata.TextContent(string(req.Notify.InputResponses())),
	}}, nil
}

// modernCall is a 2026-07-28 tools/call of echo with the given arguments,
// capabilities and extra params.
func modernCall(args map[string]any, caps map[string]any, extra map[string]any) string {
	meta := modernMeta(ModernVersion)
	meta[MetaClientCapabilities] = caps
	params := map[string]any{"name": "echo", "arguments": args, "_meta": meta}
	for k, v := range extra {
		params[k] = v
	}
	return rpc(1, "tools/call", params)
}

var askingCaps = map[string]any{"elicitation": map[string]any{}, "sampling": map[string]any{}}

// inputRequiredResult is the result of a modern call that needs input.
type inputRequiredResult struct {
	ResultType    string `json:"resultType"`
	InputRequests map[string]struct {
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	} `json:"inputRequests"`
	RequestState string          `json:"requestState"`
	Meta         json.RawMessage `json:"_meta"`
}

func callModern(t *testing.T, s *testServer, body string) (int, inputRequiredResult, string) {
	t.Helper()
	r := s.post(t, body, modernHeaders(methodToolsCall, "echo"))
	var env struct {
		Result inputRequiredResult `json:"result"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.data), &env), r.data)
	return r.status, env.Result, r.data
}

// TestInputRequiredRounds: on 2026-07-28 each round ends with the requests
// not answered yet and a new sealed state; the state carries the earlier
// answers, so the last round gets them all.
func TestInputRequiredRounds(t *testing.T) {
	s := startServer(t, nil)
	s.tools.call = twoStepTool
	args := map[string]any{"x": 1, "y": []any{"a"}}

	status, r1, raw := callModern(t, s, modernCall(args, askingCaps, nil))
	require.Equal(t, http.StatusOK, status, raw)
	assert.Equal(t, "input_required", r1.ResultType)
	require.Contains(t, r1.InputRequests, "name")
	assert.Len(t, r1.InputRequests, 1)
	assert.Equal(t, "elicitation/create", r1.InputRequests["name"].Method)
	assert.JSONEq(t, elicitParams, string(r1.InputRequests["name"].Params))
	assert.NotEmpty(t, r1.RequestState)
	assert.Contains(t, string(r1.Meta), MetaServerInfo)

	// Round 2: the arguments are the same, in another order and spacing.
	answer1 := map[string]any{"action": "accept", "content": map[string]any{"name": "Ada"}}
	_, r2, raw := callModern(t, s, modernCall(map[string]any{"y": []any{"a"}, "x": 1}, askingCaps,
		map[string]any{"inputResponses": map[string]any{"name": answer1}, "requestState": r1.RequestState}))
	assert.Equal(t, "input_required", r2.ResultType, raw)
	assert.Contains(t, r2.InputRequests, "model")
	assert.NotContains(t, r2.InputRequests, "name", "answered")
	assert.NotEqual(t, r1.RequestState, r2.RequestState)

	// Round 3: only the new answer travels; the first comes from the state.
	answer2 := map[string]any{"role": "assistant", "content": map[string]any{"type": "text", "text": "hi"}, "model": "m"}
	r := s.post(t, modernCall(args, askingCaps,
		map[string]any{"inputResponses": map[string]any{"model": answer2}, "requestState": r2.RequestState}), modernHeaders(methodToolsCall, "echo"))
	require.Equal(t, http.StatusOK, r.status)
	var done struct {
		Result struct {
			ResultType string                     `json:"resultType"`
			Content    []struct{ Text string }    `json:"content"`
			Meta       map[string]json.RawMessage `json:"_meta"`
		} `json:"result"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.data), &done), r.data)
	assert.Equal(t, "complete", done.Result.ResultType)
	require.Len(t, done.Result.Content, 2)
	first, second, ok := strings.Cut(done.Result.Content[0].Text, " | ")
	require.True(t, ok, done.Result.Content[0].Text)
	assert.JSONEq(t, `{"action":"accept","content":{"name":"Ada"}}`, first)
	assert.JSONEq(t, `{"role":"assistant","content":{"type":"text","text":"hi"},"model":"m"}`, second)
	assert.JSONEq(t, `{"name":{"action":"accept","content":{"name":"Ada"}},"model":{"role":"assistant","content":{"type":"text","text":"hi"},"model":"m"}}`,
		done.Result.Content[1].Text, "the worker is offered every answer so far")
}

// TestInputRequiredWithoutState: a retry may carry its answers without a
// state; keys nobody asked for are ignored, missing ones asked again.
func TestInputRequiredWithoutState(t *testing.T) {
	s := startServer(t, nil)
	s.tools.call = twoStepTool
	_, r, raw := callModern(t, s, modernCall(nil, askingCaps, map[string]any{"inputResponses": map[string]any{
		"wrong_key": map[string]any{"action": "accept"}}}))
	assert.Equal(t, "input_required", r.ResultType, raw)
	assert.Contains(t, r.InputRequests, "name", "the missing answer is asked again")

	_, r, raw = callModern(t, s, modernCall(nil, askingCaps, map[string]any{"inputResponses": map[string]any{
		"name": map[string]any{"action": "decline"}, "extra": map[string]any{"x": 1}}}))
	assert.Equal(t, "input_required", r.ResultType, raw)
	assert.Contains(t, r.InputRequests, "model")
}

// TestInputRequiredRefusals: a state that does not open, or belongs to
// another call, and malformed answers are -32602; nothing runs.
func TestInputRequiredRefusals(t *testing.T) {
	s := startServer(t, nil)
	s.tools.call = twoStepTool
	_, r1, _ := callModern(t, s, modernCall(map[string]any{"x": 1}, askingCaps, nil))
	require.NotEmpty(t, r1.RequestState)
	expired, err := testSealer.Seal(clientreq.StatePurpose, []byte(`{"m":"tools/call","n":"echo","d":"x"}`), -time.Second)
	require.NoError(t, err)
	otherKey, err := newSealer(t, []byte("another 32-byte key for sealing!")).Seal(clientreq.StatePurpose, []byte(`{"m":"tools/call","n":"echo"}`), time.Hour)
	require.NoError(t, err)
	answers := map[string]any{"name": map[string]any{"action": "accept"}}
	tests := []struct {
		name  string
		args  map[string]any
		extra map[string]any
		want  string
	}{
		{"tampered", map[string]any{"x": 1}, map[string]any{"inputResponses": answers, "requestState": r1.RequestState + "-TAMPERED"}, "integrity"},
		{"another key", map[string]any{"x": 1}, map[string]any{"requestState": otherKey}, "integrity"},
		{"expired", map[string]any{"x": 1}, map[string]any{"requestState": expired}, "expired"},
		{"other arguments", map[string]any{"x": 2}, map[string]any{"requestState": r1.RequestState}, "another request"},
		{"not a string", map[string]any{"x": 1}, map[string]any{"requestState": 5}, "must be a string"},
		{"answers not an object", map[string]any{"x": 1}, map[string]any{"inputResponses": "yes"}, "must be an object"},
		{"an answer not an object", map[string]any{"x": 1}, map[string]any{"inputResponses": map[string]any{"name": 12345}}, "inputResponses['name'] must be an object"},
		{"too large", map[string]any{"x": 1}, map[string]any{"inputResponses": map[string]any{"name": map[string]any{"t": strings.Repeat("x", MaxInputResponseBytes)}}}, "exceed"},
	}
	calls := len(s.tools.calls)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.post(t, modernCall(tt.args, askingCaps, tt.extra), modernHeaders(methodToolsCall, "echo"))
			assert.Equal(t, "-32602", gjson(t, r.data, "error", "code"), r.data)
			assert.Contains(t, gjson(t, r.data, "error", "message"), tt.want)
		})
	}
	assert.Equal(t, calls, len(s.tools.calls), "no refused call reached the tool")

	// A state sealed for echo does not open for another tool.
	r := s.post(t, strings.Replace(modernCall(map[string]any{"x": 1}, askingCaps, map[string]any{"requestState": r1.RequestState}), `"name":"echo"`, `"name":"add"`, 1),
		modernHeaders(methodToolsCall, "add"))
	assert.Contains(t, gjson(t, r.data, "error", "message"), "another request")
}

// TestInputRequiredRespectsCapabilities: a request for a capability the
// client did not declare is answered -32021 to the function, not put in the
// result, also for a client that declares none.
func TestInputRequiredRespectsCapabilities(t *testing.T) {
	s := startServer(t, nil)
	s.tools.call = twoStepTool
	r := s.post(t, modernCall(nil, map[string]any{"sampling": map[string]any{}}, nil), modernHeaders(methodToolsCall, "echo"))
	assert.Equal(t, `"complete"`, gjson(t, r.data, "result", "resultType"), r.data)
	assert.Equal(t, "The client did not declare the 'elicitation' capability.", resultText(t, r.data))

	r = s.post(t, modernCall(nil, map[string]any{}, nil), modernHeaders(methodToolsCall, "echo"))
	assert.Equal(t, "The client did not declare the 'elicitation' capability.", resultText(t, r.data), "a client declaring none is refused alike")
}

// TestMissingCapabilityIsHTTP400: a call failing with -32021 is refused
// with HTTP 400 on 2026-07-28; earlier revisions get the JSON-RPC error.
func TestMissingCapabilityIsHTTP400(t *testing.T) {
	s := startServer(t, nil)
	s.tools.call = func(context.Context, *CallRequest) (*metadata.CallToolResult, error) {
		return nil, &ProtocolError{Code: CodeMissingRequiredClientCapability, Message: "needs sampling",
			Data: json.RawMessage(`{"requiredCapabilities":{"sampling":{}}}`)}
	}
	r := s.post(t, modernCall(nil, map[string]any{}, nil), modernHeaders(methodToolsCall, "echo"))
	assert.Equal(t, http.StatusBadRequest, r.status)
	assert.JSONEq(t, `{"jsonrpc":"2.0","id":1,"error":{"code":-32021,"message":"needs sampling","data":{"requiredCapabilities":{"sampling":{}}}}}`, r.data)

	r = s.post(t, rpc(2, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{}}), nil)
	assert.Equal(t, http.StatusOK, r.status)
	assert.Equal(t, "-32021", gjson(t, r.data, "error", "code"))
}

// TestPromptInputRequired: prompts/get takes part in the flow like a tool.
func TestPromptInputRequired(t *testing.T) {
	s, f := startFunctionServer(t, fullLists(), 0)
	f.prompt = func(ctx context.Context, req *PromptRequest) (*metadata.GetPromptResult, error) {
		reply, err := req.Notify.Request(ctx, "user_context", "elicitation/create", json.RawMessage(elicitParams))
		if err != nil {
			return nil, err
		}
		if reply.InputRequired {
			return nil, &ProtocolError{Code: CodeInternalError, Message: "needs input"}
		}
		return &metadata.GetPromptResult{Messages: []metadata.PromptMessage{{Role: "user", Content: metadata.TextContent(string(reply.Result))}}}, nil
	}
	meta := modernMeta(ModernVersion)
	meta[MetaClientCapabilities] = askingCaps
	hdr := modernHeaders("prompts/get", "greet")
	r := s.post(t, rpc(1, "prompts/get", map[string]any{"name": "greet", "_meta": meta}), hdr)
	require.Equal(t, http.StatusOK, r.status, r.data)
	assert.Equal(t, `"input_required"`, gjson(t, r.data, "result", "resultType"), r.data)
	state := gjson(t, r.data, "result", "requestState")
	require.NotEmpty(t, state)
	var st string
	require.NoError(t, json.Unmarshal([]byte(state), &st))

	r = s.post(t, rpc(2, "prompts/get", map[string]any{"name": "greet", "_meta": meta, "requestState": st,
		"inputResponses": map[string]any{"user_context": map[string]any{"action": "accept", "content": map[string]any{"context": "c"}}}}), hdr)
	require.Equal(t, http.StatusOK, r.status, r.data)
	assert.Equal(t, `"complete"`, gjson(t, r.data, "result", "resultType"))
	assert.Contains(t, r.data, `{\"action\":\"accept\",\"content\":{\"context\":\"c\"}}`)
}
