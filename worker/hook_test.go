package worker

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/metadata"
)

// hookRecord records every run a hook sees, with the error it ended with.
type hookRecord struct {
	mu   sync.Mutex
	runs []string
}

func (h *hookRecord) hook(ctx context.Context, inv *Invocation, next func(context.Context) error) error {
	err := next(context.WithValue(ctx, hookKey{}, inv.Kind))
	h.mu.Lock()
	defer h.mu.Unlock()
	h.runs = append(h.runs, string(inv.Kind)+" "+inv.Function+" "+inv.Name+" "+inv.InvocationID+" err="+errText(err))
	return err
}

func (h *hookRecord) take() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := h.runs
	h.runs = nil
	return out
}

func errText(err error) string {
	if err == nil {
		return "-"
	}
	return err.Error()
}

// hookKey is what the hook puts in the handler's context.
type hookKey struct{}

// hookedApp has one function of each kind; every handler checks that it
// runs with the context the hook gave it.
func hookedApp(rec *hookRecord, more ...Hook) *App {
	a := New(&Options{Stdout: io.Discard, Stderr: io.Discard, Hooks: append([]Hook{rec.hook}, more...)})
	fromHook := func(ctx context.Context) error {
		if ctx.Value(hookKey{}) == nil {
			return errors.New("the handler did not get the hook's context")
		}
		return nil
	}
	a.ConfigureMcpTool("plain").Handle(func(ctx context.Context, _ *ToolContext) (*Result, error) {
		return TextResult("ok"), fromHook(ctx)
	})
	a.ConfigureMcpTool("asking").WithTaskSupport(TaskOptional, nil).Handle(func(ctx context.Context, tc *ToolContext) (*Result, error) {
		if _, err := tc.Elicit(ctx, "Go on?", map[string]any{"type": "object"}); err != nil {
			return nil, err
		}
		return TextResult("asked"), fromHook(ctx)
	})
	a.ConfigureMcpResource("test://doc").WithFunctionName("doc").Handle(func(ctx context.Context, _ *ResourceContext) (*ResourceResult, error) {
		return &ResourceResult{Text: "doc"}, fromHook(ctx)
	})
	a.ConfigureMcpPrompt("greet").WithArgument("who", "Who.", Required).
		WithCompletionFunc("who", func(ctx context.Context, cc *CompletionContext) ([]string, error) {
			return []string{cc.Value + "a"}, fromHook(ctx)
		}).
		Handle(func(ctx context.Context, _ *PromptContext) (*PromptResult, error) {
			return TextPromptResult("hi"), fromHook(ctx)
		})
	return a
}

// postInvocation posts an invocation of fn whose trigger value is ctxJSON.
func postInvocation(t *testing.T, url, fn, ctxJSON string, headers map[string]string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url+"/"+fn, strings.NewReader(body(t, ctxJSON, 1)))
	require.NoError(t, err)
	req.Header.Set(metadata.HeaderInvocationID, "inv-"+fn)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

// TestHookSeesEveryKind: an app's hook wraps every handler run — a tool
// call, a tool call running as a task, a request to the client inside it,
// a resource read, a prompt and a completion function — and the handler
// runs with the context the hook passed on.
func TestHookSeesEveryKind(t *testing.T) {
	rec := &hookRecord{}
	srv := httptest.NewServer(hookedApp(rec).Handler())
	t.Cleanup(srv.Close)

	require.Equal(t, http.StatusOK, postInvocation(t, srv.URL, "plain", `{"name":"plain","arguments":{}}`, nil))
	assert.Equal(t, []string{"tool plain plain inv-plain err=-"}, rec.take())

	fc := newFakeClient(t, taskHost(http.StatusOK))
	task := fc.offer(metadata.InputModeStream, `{"elicitation":{}}`, nil)
	task[metadata.HeaderTask] = metadata.TaskStateRunning
	require.Equal(t, http.StatusOK, postInvocation(t, srv.URL, "asking", `{"name":"asking","arguments":{}}`, task))
	assert.Equal(t, []string{
		"client request asking elicitation/create inv-asking err=-",
		"task asking asking inv-asking err=-",
	}, rec.take())

	require.Equal(t, http.StatusOK, postInvocation(t, srv.URL, "doc", `{"uri":"test://doc"}`, nil))
	assert.Equal(t, []string{"resource doc test://doc inv-doc err=-"}, rec.take())

	require.Equal(t, http.StatusOK, postInvocation(t, srv.URL, "greet", `{"name":"greet","arguments":{"who":"x"}}`, nil))
	assert.Equal(t, []string{"prompt greet greet inv-greet err=-"}, rec.take())

	require.Equal(t, http.StatusOK, postInvocation(t, srv.URL, "greet",
		`{"ref":{"type":"ref/prompt","name":"greet"},"argument":{"name":"who","value":"b"}}`,
		map[string]string{metadata.HeaderMethod: metadata.MethodComplete}))
	assert.Equal(t, []string{"completion greet who inv-greet err=-"}, rec.take())
}

// TestHookMayRefuse: a hook that does not call next stops the run; its
// error is the handler's.
func TestHookMayRefuse(t *testing.T) {
	rec := &hookRecord{}
	deny := func(ctx context.Context, inv *Invocation, next func(context.Context) error) error {
		if inv.Kind == KindTool && inv.Name == "plain" {
			return errors.New("not allowed")
		}
		return next(ctx)
	}
	srv := httptest.NewServer(hookedApp(rec, deny).Handler())
	t.Cleanup(srv.Close)
	r := invokeWith(t, srv.URL, "plain", nil)
	text, isErr := resultText(t, r)
	assert.True(t, isErr)
	assert.Equal(t, "not allowed", text)
	assert.Equal(t, []string{"tool plain plain  err=not allowed"}, rec.take(), "the outer hook sees the refusal")
}
