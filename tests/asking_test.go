package tests

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tsAskingReport is ts-asking.mjs's report.
type tsAskingReport struct {
	ProtocolVersion string `json:"protocolVersion"`
	Asked           []struct {
		Method  string `json:"method"`
		Message string `json:"message"`
	} `json:"asked"`
	Book         json.RawMessage `json:"book"`
	Trip         json.RawMessage `json:"trip"`
	Pi           json.RawMessage `json:"pi"`
	Progress     []float64       `json:"progress"`
	Logs         []string        `json:"logs"`
	Wire         []string        `json:"wire"`
	ConnectError *tsError        `json:"connectError"`
}

// toolOutput decodes a tools/call result's structuredContent, requiring
// the call to have succeeded.
func toolOutput(t *testing.T, raw json.RawMessage) map[string]any {
	t.Helper()
	var res struct {
		StructuredContent map[string]any `json:"structuredContent"`
		IsError           bool           `json:"isError"`
		Error             *tsError       `json:"error"`
	}
	require.NoError(t, json.Unmarshal(raw, &res), "%s", raw)
	require.Nil(t, res.Error, "%s", raw)
	require.False(t, res.IsError, "%s", raw)
	return res.StructuredContent
}

// TestTypeScriptClientsAnswerTheTools: the official TypeScript clients,
// with elicitation and sampling handlers, drive the sample's tools that ask
// the client to completion — the 1.x SDK at 2025-11-25 (requests on the
// call's stream), the 2.x client at 2026-07-28 (input-required rounds) and
// the 1.x SDK over legacy SSE — and receive estimate_pi's progress and log
// messages on each.
func TestTypeScriptClientsAnswerTheTools(t *testing.T) {
	t.Parallel()
	testTypeScriptClientsAnswerTheTools(t, false)
}

// TestTypeScriptClientsAnswerTheToolsServe is TestTypeScriptClientsAnswerTheTools against the sample serving itself in one
// process (`handler serve`).
func TestTypeScriptClientsAnswerTheToolsServe(t *testing.T) {
	t.Parallel()
	testTypeScriptClientsAnswerTheTools(t, true)
}

// testTypeScriptClientsAnswerTheTools runs the test against the sample served by funchost, or by itself
// in one process (serve).
func testTypeScriptClientsAnswerTheTools(t *testing.T, serve bool) {
	nodeBin(t, tsClientPackages[tsClientV1], tsClientPackages[tsClientV2Auto])
	h := startSampleHost(t, sample(t), serve)
	for mode, version := range map[string]string{"v1": "2025-11-25", "v2-auto": "2026-07-28", "v1-sse": ""} {
		t.Run(mode, func(t *testing.T) {
			node, dir := nodeBin(t, tsClientPackages[tsClientV1])
			code, stdout, stderr := runNode(t, node, dir, "ts-asking.mjs", h.endpoint, mode)
			var r tsAskingReport
			require.NoError(t, json.Unmarshal([]byte(stdout), &r), "exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			require.Equal(t, 0, code, "%s\n%s", stdout, stderr)
			if version != "" {
				assert.Equal(t, version, r.ProtocolVersion)
			}
			book := toolOutput(t, r.Book)
			assert.Equal(t, "booked", book["status"], "the user confirmed")
			assert.Equal(t, "booked from "+mode, book["note"])
			trip := toolOutput(t, r.Trip)
			assert.Equal(t, "model", trip["source"])
			assert.Equal(t, "Walk the fjords ("+mode+").", trip["suggestion"])
			require.Len(t, r.Asked, 2, "one question to the user, one to the model")
			assert.Equal(t, "elicitation/create", r.Asked[0].Method)
			assert.Contains(t, r.Asked[0].Message, "Book 1 days of leave")
			assert.Equal(t, "sampling/createMessage", r.Asked[1].Method)

			pi := toolOutput(t, r.Pi)
			assert.EqualValues(t, 4, pi["batches"])
			// On the wire: the log message and one progress per batch, then the
			// result, on every transport.
			require.GreaterOrEqual(t, len(r.Wire), 6)
			assert.Equal(t, []string{"notifications/message", "notifications/progress", "notifications/progress", "notifications/progress",
				"notifications/progress", "result"}, r.Wire[len(r.Wire)-6:])
			// The 1.x SDK dispatches notifications a step later than responses:
			// over legacy SSE, where the burst arrives in one chunk, the result
			// can retire the progress handler before the notifications reach
			// it (the wire above is what the server sent). Elsewhere the
			// handler sees each one.
			if mode != "v1-sse" {
				assert.Equal(t, []float64{1, 2, 3, 4}, r.Progress, "one progress per batch")
			}
			assert.Contains(t, r.Logs, "info")
		})
	}
}

// TestGoSDKClientAnswersTheTools is the same with the official Go SDK
// client, pinned to 2025-11-25 and negotiating 2026-07-28, and over legacy
// SSE.
func TestGoSDKClientAnswersTheTools(t *testing.T) {
	t.Parallel()
	testGoSDKClientAnswersTheTools(t, false)
}

// TestGoSDKClientAnswersTheToolsServe is TestGoSDKClientAnswersTheTools against the sample serving itself in one
// process (`handler serve`).
func TestGoSDKClientAnswersTheToolsServe(t *testing.T) {
	t.Parallel()
	testGoSDKClientAnswersTheTools(t, true)
}

// testGoSDKClientAnswersTheTools runs the test against the sample served by funchost, or by itself
// in one process (serve).
func testGoSDKClientAnswersTheTools(t *testing.T, serve bool) {
	h := startSampleHost(t, sample(t), serve)
	for _, tc := range []struct{ name, version string }{{"2025-11-25", "2025-11-25"}, {"default", ""}, {"legacy SSE", "sse"}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), clientTimeout)
			defer cancel()
			var mu sync.Mutex
			var asked, logs []string
			var progress []float64
			client := mcp.NewClient(&mcp.Implementation{Name: "funcmcp-e2e-asking", Version: "1.0.0"}, &mcp.ClientOptions{
				ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					mu.Lock()
					asked = append(asked, req.Params.Message)
					mu.Unlock()
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true, "note": "from go"}}, nil
				},
				CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
					mu.Lock()
					asked = append(asked, "sampling")
					mu.Unlock()
					return &mcp.CreateMessageResult{Role: "assistant", Content: &mcp.TextContent{Text: "Ski in the north."}, Model: "go-model"}, nil
				},
				ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
					mu.Lock()
					progress = append(progress, req.Params.Progress)
					mu.Unlock()
				},
				LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
					mu.Lock()
					logs = append(logs, string(req.Params.Level))
					mu.Unlock()
				},
			})
			var transport mcp.Transport = &mcp.StreamableClientTransport{Endpoint: h.endpoint, DisableStandaloneSSE: true, MaxRetries: -1}
			var opts *mcp.ClientSessionOptions
			switch tc.version {
			case "sse":
				transport = &mcp.SSEClientTransport{Endpoint: h.endpoint + "/sse", HTTPClient: http.DefaultClient}
			case "":
			default:
				opts = &mcp.ClientSessionOptions{ProtocolVersion: tc.version}
			}
			cs, err := client.Connect(ctx, transport, opts)
			require.NoError(t, err)
			t.Cleanup(func() { _ = cs.Close() })
			modern := cs.InitializeResult().ProtocolVersion == "2026-07-28"
			assert.Equal(t, tc.version == "", modern)

			book, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "book_days_off", Arguments: map[string]any{"country": "US", "from": "2026-07-03", "to": "2026-07-05"}})
			require.NoError(t, err)
			require.False(t, book.IsError, "%v", book.Content)
			sc, _ := book.StructuredContent.(map[string]any)
			assert.Equal(t, "booked", sc["status"])
			assert.Equal(t, "from go", sc["note"])

			trip, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "suggest_trip", Arguments: map[string]any{"country": "NO", "year": 2026}})
			require.NoError(t, err)
			require.False(t, trip.IsError, "%v", trip.Content)
			sc, _ = trip.StructuredContent.(map[string]any)
			assert.Equal(t, "model", sc["source"])
			assert.Equal(t, "Ski in the north.", sc["suggestion"])
			assert.Equal(t, "go-model", sc["model"])

			params := &mcp.CallToolParams{Name: "estimate_pi", Arguments: map[string]any{"samples": 100000, "batches": 4}}
			params.SetProgressToken("go")
			if modern {
				params.Meta[mcp.MetaKeyLogLevel] = "info"
			} else {
				require.NoError(t, cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}))
			}
			pi, err := cs.CallTool(ctx, params)
			require.NoError(t, err)
			require.False(t, pi.IsError)

			// The SDK hands notifications to their handlers on goroutines of
			// their own: the last ones may land after the result.
			assert.EventuallyWithT(t, func(c *assert.CollectT) {
				mu.Lock()
				defer mu.Unlock()
				assert.Equal(c, []float64{1, 2, 3, 4}, progress)
				assert.Contains(c, logs, "info")
			}, 10*time.Second, 20*time.Millisecond)
			mu.Lock()
			defer mu.Unlock()
			require.Len(t, asked, 2)
			assert.Contains(t, asked[0], "Book 1 days of leave")
			assert.Equal(t, "sampling", asked[1])
		})
	}
}
