package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/metadata"
)

// TestArgumentLimitsComeFirst (issue 25, finding 11): the arguments of
// tools/call and prompts/get and completion's context.arguments are given
// to Options.CheckArguments as sent, and a refusal is the answer: nothing
// runs. A plain error is -32602 with its text.
func TestArgumentLimitsComeFirst(t *testing.T) {
	var ran, checked atomic.Int32
	f := &fakeFunctions{fakeTools: newFakeTools(), lists: &FunctionLists{Prompts: []json.RawMessage{json.RawMessage(`{"name":"greet"}`)}, Completions: true}}
	f.prompt = func(context.Context, *PromptRequest) (*metadata.GetPromptResult, error) {
		ran.Add(1)
		return &metadata.GetPromptResult{}, nil
	}
	f.call = func(context.Context, *CallRequest) (*metadata.CallToolResult, error) {
		ran.Add(1)
		return &metadata.CallToolResult{}, nil
	}
	check := func(raw json.RawMessage) error {
		checked.Add(1)
		if !json.Valid(raw) || raw[0] != '{' {
			return errors.New("not the object as sent")
		}
		if len(raw) > 64 {
			return &ProtocolError{Code: CodeInvalidParams, Message: "Invalid params: the arguments exceed 64 bytes."}
		}
		if strings.Contains(string(raw), "plain") {
			return errors.New("a plain refusal.")
		}
		return nil
	}
	srv := httptest.NewServer(NewHandler(serverOf(f), &Options{Logger: slog.New(slog.DiscardHandler), Sealer: testSealer, CheckArguments: check}))
	t.Cleanup(srv.Close)
	s := &testServer{Server: srv, tools: f.fakeTools}

	big := map[string]any{"who": strings.Repeat("x", 100)}
	hdr := map[string]string{headerProtocolVersion: "2025-06-18", "Accept": "application/json"}
	for _, body := range []string{
		rpc(1, "tools/call", map[string]any{"name": "echo", "arguments": big}),
		rpc(1, "prompts/get", map[string]any{"name": "greet", "arguments": big}),
		rpc(1, "completion/complete", map[string]any{"ref": map[string]any{"type": "ref/prompt", "name": "greet"},
			"argument": map[string]any{"name": "who", "value": "a"}, "context": map[string]any{"arguments": big}}),
	} {
		r := s.post(t, body, hdr)
		assert.JSONEq(t, errorBody("1", CodeInvalidParams, "Invalid params: the arguments exceed 64 bytes."), r.data, body[:60])
	}
	r := s.post(t, rpc(1, "prompts/get", map[string]any{"name": "greet", "arguments": map[string]any{"plain": "1"}}), hdr)
	assert.JSONEq(t, errorBody("1", CodeInvalidParams, "Invalid params: a plain refusal."), r.data)
	assert.Zero(t, ran.Load(), "nothing ran")

	r = s.post(t, rpc(2, "prompts/get", map[string]any{"name": "greet", "arguments": map[string]any{"who": "me"}}), hdr)
	require.Contains(t, r.data, `"result"`)
	assert.Equal(t, int32(1), ran.Load())
	assert.Equal(t, int32(5), checked.Load())
}
