package funcmcptest_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/funcmcptest"
	"github.com/funcmcp/funcmcp/worker"
)

// SumInput and SumOutput type the sum tool.
type SumInput struct {
	A int `json:"a"`
	B int `json:"b"`
}

type SumOutput struct {
	Sum int `json:"sum"`
}

// testApp has a typed tool, a tool whose result breaks its output schema,
// and a tool that reports progress.
func testApp() *worker.App {
	app := worker.New(nil)
	worker.AddTool(app, "sum", func(_ context.Context, _ *worker.ToolContext, in SumInput) (*worker.Result, SumOutput, error) {
		return nil, SumOutput{Sum: in.A + in.B}, nil
	}).WithDescription("Add two numbers.")
	app.ConfigureMcpTool("broken").
		WithDescription("Answers a result its output schema refuses.").
		WithOutputSchema(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`).
		Handle(func(context.Context, *worker.ToolContext) (*worker.Result, error) {
			return &worker.Result{StructuredContent: map[string]any{"n": "not a number"}}, nil
		})
	app.ConfigureMcpTool("count").
		WithDescription("Counts to three, reporting progress.").
		Handle(func(_ context.Context, tc *worker.ToolContext) (*worker.Result, error) {
			for i := 1; i <= 3; i++ {
				tc.Progress(float64(i), 3, "counted")
			}
			return worker.TextResult("done"), nil
		})
	return app
}

// connect opens an official Go SDK client session on the server.
func connect(t *testing.T, srv *funcmcptest.Server, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "funcmcptest-test", Version: "1"}, opts)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint: srv.URL, HTTPClient: srv.Client(), DisableStandaloneSSE: true, MaxRetries: -1,
	}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// TestOfficialClientSeesWhatAClientSees drives the app's MCP front with the
// official Go SDK client: the advertised output schema, structuredContent,
// an output-schema failure, progress notifications and a JSON-RPC error.
func TestOfficialClientSeesWhatAClientSees(t *testing.T) {
	srv := funcmcptest.Start(t, testApp(), nil)
	var mu sync.Mutex
	var progress []float64
	cs := connect(t, srv, &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
		mu.Lock()
		defer mu.Unlock()
		progress = append(progress, r.Params.Progress)
	}})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()

	listed, err := cs.ListTools(ctx, nil)
	require.NoError(t, err)
	byName := map[string]*mcp.Tool{}
	for _, tool := range listed.Tools {
		byName[tool.Name] = tool
	}
	require.Contains(t, byName, "sum")
	out, err := json.Marshal(byName["sum"].OutputSchema)
	require.NoError(t, err)
	assert.JSONEq(t, `{"type":"object","required":["sum"],"properties":{"sum":{"type":"integer"}},"additionalProperties":false}`, string(out))

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "sum", Arguments: map[string]any{"a": 2, "b": 3}})
	require.NoError(t, err)
	require.False(t, res.IsError)
	got, err := json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	assert.JSONEq(t, `{"sum":5}`, string(got))

	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "broken", Arguments: map[string]any{}})
	require.NoError(t, err)
	assert.True(t, res.IsError, "a result that breaks the output schema is an error result")
	require.NotEmpty(t, res.Content)
	text, ok := res.Content[0].(*mcp.TextContent)
	require.True(t, ok)
	assert.Contains(t, text.Text, "/n", "the message names the JSON pointer that failed")

	params := &mcp.CallToolParams{Name: "count", Arguments: map[string]any{}}
	params.SetProgressToken("p1")
	res, err = cs.CallTool(ctx, params)
	require.NoError(t, err)
	require.False(t, res.IsError)
	// The SDK runs notification handlers on a goroutine of its own: wait
	// (bounded) until they have seen all three.
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		mu.Lock()
		n := len(progress)
		mu.Unlock()
		if n == 3 {
			break
		}
	}
	mu.Lock()
	assert.Equal(t, []float64{1, 2, 3}, progress, "the tool's progress reached the client")
	mu.Unlock()

	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "no_such_tool", Arguments: map[string]any{}})
	require.Error(t, err, "an unknown tool is a JSON-RPC error")
	assert.Contains(t, err.Error(), "Unknown tool")
}

// TestCallTool calls tools with the package's own small client.
func TestCallTool(t *testing.T) {
	//docs:begin calltool
	srv := funcmcptest.Start(t, testApp(), nil) // host.json of the package folder, if any
	res, err := srv.CallTool(t.Context(), "sum", map[string]any{"a": 40, "b": 2})
	// res.StructuredContent, res.IsError, res.Text(); a JSON-RPC error is a *funcmcptest.Error
	//docs:end calltool
	require.NoError(t, err)
	assert.False(t, res.IsError)
	assert.JSONEq(t, `{"sum":42}`, string(res.StructuredContent))
	assert.JSONEq(t, `{"sum":42}`, res.Text(), "the text copy holds the same JSON")

	res, err = srv.CallTool(t.Context(), "broken", nil)
	require.NoError(t, err)
	assert.True(t, res.IsError)

	_, err = srv.CallTool(t.Context(), "sum", map[string]any{"a": 1})
	var rpcErr *funcmcptest.Error
	require.ErrorAs(t, err, &rpcErr, "a missing required argument is a JSON-RPC error")
	assert.Equal(t, -32602, rpcErr.Code)
}

// TestKeyRequired serves an app whose host.json asks for function keys:
// the server's client sends the key, a client without it is refused.
func TestKeyRequired(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, writeFile(dir+"/host.json", `{"version":"2.0","extensions":{"mcp":{"serverName":"keyed"}}}`))
	srv := funcmcptest.Start(t, testApp(), &funcmcptest.Options{Dir: dir})
	res, err := srv.CallTool(t.Context(), "sum", map[string]any{"a": 1, "b": 1})
	require.NoError(t, err)
	assert.JSONEq(t, `{"sum":2}`, string(res.StructuredContent))
	cs := connect(t, srv, nil)
	assert.Equal(t, "keyed", cs.InitializeResult().ServerInfo.Name)

	client := mcp.NewClient(&mcp.Implementation{Name: "no-key", Version: "1"}, nil)
	_, err = client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: srv.URL, DisableStandaloneSSE: true, MaxRetries: -1}, nil)
	require.Error(t, err, "without the key the endpoint refuses")
}

// TestBrokenAppIsReported returns the app's configuration problems.
func TestBrokenAppIsReported(t *testing.T) {
	app := worker.New(nil)
	app.ConfigureMcpTool("bad").WithOutputSchema(`{"type":`).Handle(func(context.Context, *worker.ToolContext) (*worker.Result, error) {
		return nil, nil
	})
	_, err := funcmcptest.NewServer(app, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "bad")
}
