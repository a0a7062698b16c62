package functions

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/host/internal/jsonrpc"
	"github.com/funcmcp/funcmcp/metadata"
)

const (
	legacy = "2025-11-25"
	modern = "2026-07-28"
)

// testServer serves three resources, one template and a prompt, with
// pages of two; logs records what it logs.
func testServer(logs *bytes.Buffer) *Server {
	entries := func(n int, format string) []json.RawMessage {
		out := make([]json.RawMessage, n)
		for i := range out {
			out[i] = json.RawMessage(fmt.Sprintf(format, i))
		}
		return out
	}
	return &Server{
		Functions: &Functions{
			Lists: &FunctionLists{
				Resources: entries(3, `{"name":"r%d"}`),
				Templates: entries(1, `{"name":"t%d"}`),
			},
			ReadResource: func(_ context.Context, req *ReadRequest) (Result[metadata.ReadResourceResult], error) {
				switch req.URI {
				case "test://encoded":
					enc, err := EncodedResult([]byte(`{"contents":[],"_meta":{"k":1}}`), "contents")
					return Result[metadata.ReadResourceResult]{Encoded: enc}, err
				case "test://none":
					return Result[metadata.ReadResourceResult]{}, nil
				case "test://fails":
					return Result[metadata.ReadResourceResult]{}, errors.New("the worker died")
				}
				return Result[metadata.ReadResourceResult]{}, fmt.Errorf("reading: %w", ResourceNotFound(req.ProtocolVersion, req.URI))
			},
			GetPrompt: func(_ context.Context, req *PromptRequest) (Result[metadata.GetPromptResult], error) {
				return Result[metadata.GetPromptResult]{Value: &metadata.GetPromptResult{Description: req.Name, Meta: json.RawMessage(`{"k":2}`)}}, nil
			},
		},
		PageSize: 2,
		Cache:    `"ttlMs":5,"cacheScope":"public"`,
		WithServerInfo: func(meta json.RawMessage) json.RawMessage {
			if meta == nil {
				return json.RawMessage(`{"info":{}}`)
			}
			return append([]byte(`{"info":{},"own":`), append(meta, '}')...)
		},
		CheckArguments: func(raw []byte) *jsonrpc.Error {
			if bytes.Contains(raw, []byte("big")) {
				return &jsonrpc.Error{Code: -32021, Message: "too big"}
			}
			return nil
		},
		Log: slog.New(slog.NewTextHandler(logs, nil)),
	}
}

func request(method, version, params string, cacheable bool) *Request {
	return &Request{Method: method, Params: json.RawMessage(params), Caller: Caller{ProtocolVersion: version}, Cacheable: cacheable}
}

// TestListPages: a list is answered a page at a time, the cursor of the
// next page given while more follow; a cursor this server did not make, or
// one past the end, is -32602; a modern page carries resultType, the cache
// hints and the server's _meta.
func TestListPages(t *testing.T) {
	s := testServer(&bytes.Buffer{})
	call, served, pe := s.Read(request(metadata.MethodResourcesList, legacy, `{}`, false))
	require.True(t, served)
	require.Nil(t, pe)
	assert.Equal(t, `{"resources":[{"name":"r0"},{"name":"r1"}],"nextCursor":"`+makeCursor(2)+`"}`, string(call.Result))

	call, _, pe = s.Read(request(metadata.MethodResourcesList, legacy, `{"cursor":"`+makeCursor(2)+`"}`, false))
	require.Nil(t, pe)
	assert.Equal(t, `{"resources":[{"name":"r2"}]}`, string(call.Result))

	call, _, pe = s.Read(request(metadata.MethodResourcesTemplatesList, modern, `{}`, true))
	require.Nil(t, pe)
	assert.Equal(t, `{"resultType":"complete","ttlMs":5,"cacheScope":"public","resourceTemplates":[{"name":"t0"}],"_meta":{"info":{}}}`, string(call.Result))

	for _, cursor := range []string{`"not-ours"`, `"` + makeCursor(4) + `"`} {
		_, served, pe = s.Read(request(metadata.MethodPromptsList, legacy, `{"cursor":`+cursor+`}`, false))
		assert.True(t, served)
		assert.Equal(t, invalidParams("Invalid params: the cursor is not one this server gave."), pe, cursor)
	}
}

// TestNotServed: without Functions nothing is served, and without
// completions completion/complete is not.
func TestNotServed(t *testing.T) {
	s := &Server{}
	_, served, _ := s.Read(request(metadata.MethodResourcesList, legacy, `{}`, false))
	assert.False(t, served)
	s = testServer(&bytes.Buffer{})
	_, served, _ = s.Read(request(metadata.MethodComplete, legacy, `{}`, false))
	assert.False(t, served)
	_, served, _ = s.Read(request(metadata.MethodToolsCall, legacy, `{}`, false))
	assert.False(t, served)
}

// TestCallAnswers: a function's result is wrapped per revision, an encoded
// one kept as it is; its *jsonrpc.Error is the answer as it is, any other
// error (or no result) -32603 and logged.
func TestCallAnswers(t *testing.T) {
	logs := &bytes.Buffer{}
	s := testServer(logs)
	answer := func(method, version, params string) ([]byte, *jsonrpc.Error) {
		t.Helper()
		call, served, pe := s.Read(request(method, version, params, method == metadata.MethodResourcesRead))
		require.True(t, served)
		require.Nil(t, pe)
		require.Nil(t, call.Result)
		return call.Run(context.Background(), nil).Answer()
	}
	res, pe := answer(metadata.MethodResourcesRead, legacy, `{"uri":"test://encoded"}`)
	require.Nil(t, pe)
	assert.Equal(t, `{"contents":[],"_meta":{"k":1}}`, string(res))
	res, pe = answer(metadata.MethodResourcesRead, modern, `{"uri":"test://encoded"}`)
	require.Nil(t, pe)
	assert.Equal(t, `{"resultType":"complete","ttlMs":5,"cacheScope":"public","contents":[],"_meta":{"info":{},"own":{"k":1}}}`, string(res))

	// A prompt's own _meta is taken out of its value and put last.
	res, pe = answer(metadata.MethodPromptsGet, legacy, `{"name":"p"}`)
	require.Nil(t, pe)
	assert.Equal(t, `{"description":"p","messages":null,"_meta":{"k":2}}`, string(res))

	_, pe = answer(metadata.MethodResourcesRead, modern, `{"uri":"test://a"}`)
	assert.Equal(t, ResourceNotFound(modern, "test://a"), pe)
	assert.Empty(t, logs.String())
	for _, uri := range []string{"test://none", "test://fails"} {
		_, pe = answer(metadata.MethodResourcesRead, legacy, `{"uri":"`+uri+`"}`)
		assert.Equal(t, internalError(), pe, uri)
	}
	assert.Contains(t, logs.String(), "the function returned no result")
	assert.Contains(t, logs.String(), "the worker died")
}

// TestCallParams: the params of a call are read with exact member names,
// the arguments bounded by CheckArguments before they are decoded.
func TestCallParams(t *testing.T) {
	s := testServer(&bytes.Buffer{})
	s.Functions.Lists.Completions = true
	for _, c := range []struct{ method, params, message string }{
		{metadata.MethodResourcesRead, `{"URI":"test://a"}`, "Invalid params: missing required parameter 'uri'."},
		{metadata.MethodPromptsGet, `{"Name":"p"}`, "Invalid params: missing required parameter 'name'."},
		{metadata.MethodPromptsGet, `{"name":"p","arguments":["a"]}`, "Invalid params: 'arguments' must be an object."},
		{metadata.MethodPromptsGet, `{"name":"p","arguments":{"a":"big"}}`, "too big"},
		{metadata.MethodComplete, `{"ref":{"type":"ref/prompt"}}`, "Invalid params: completion/complete needs ref {type, name or uri} and argument {name, value}, each a string."},
		{metadata.MethodComplete, `{"context":{"arguments":{"a":"big"}}}`, "too big"},
	} {
		_, served, pe := s.Read(request(c.method, legacy, c.params, false))
		assert.True(t, served, c.params)
		if assert.NotNil(t, pe, c.params) {
			assert.Equal(t, c.message, pe.Message, c.params)
		}
	}
	call, _, pe := s.Read(request(metadata.MethodPromptsGet, modern, `{"name":"p","arguments":{"a":"x"}}`, false))
	require.Nil(t, pe)
	assert.True(t, call.Prompt)
	assert.Equal(t, "p", call.Name)
	assert.Equal(t, `{"a":"x"}`, string(call.Arguments))
}
