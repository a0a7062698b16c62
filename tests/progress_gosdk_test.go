package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sseTap is an http.RoundTripper that records, for every SSE response, the
// kind of each event in the order the client reads it: the method of a
// notification, or "result".
type sseTap struct {
	mu      sync.Mutex
	streams [][]string
}

func (tap *sseTap) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil || resp.Header.Get("Content-Type") != "text/event-stream" {
		return resp, err
	}
	tap.mu.Lock()
	tap.streams = append(tap.streams, nil)
	idx := len(tap.streams) - 1
	tap.mu.Unlock()
	resp.Body = &tappedBody{ReadCloser: resp.Body, tap: tap, idx: idx}
	return resp, nil
}

// events returns the recorded streams.
func (tap *sseTap) events() [][]string {
	tap.mu.Lock()
	defer tap.mu.Unlock()
	out := make([][]string, len(tap.streams))
	for i, s := range tap.streams {
		out[i] = append([]string(nil), s...)
	}
	return out
}

type tappedBody struct {
	io.ReadCloser
	tap     *sseTap
	idx     int
	pending []byte
}

func (b *tappedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.pending = append(b.pending, p[:n]...)
	for {
		line, rest, ok := bytes.Cut(b.pending, []byte("\n"))
		if !ok {
			break
		}
		b.pending = rest
		data, isData := bytes.CutPrefix(line, []byte("data: "))
		if !isData || len(data) == 0 {
			continue // not data, or the priming event of a resumable stream
		}
		var msg struct {
			Method string `json:"method"`
		}
		kind := "unreadable"
		if json.Unmarshal(data, &msg) == nil {
			kind = cmpOr(msg.Method, "result")
		}
		b.tap.mu.Lock()
		b.tap.streams[b.idx] = append(b.tap.streams[b.idx], kind)
		b.tap.mu.Unlock()
	}
	return n, err
}

// TestGoSDKClientReceivesProgress calls the sample's long-running
// estimate_pi with the official Go SDK client, pinned to 2025-11-25
// (logging/setLevel) and negotiating 2026-07-28 (the level in _meta), with
// a progressToken. On the wire, every progress notification and the log
// messages come on the call's stream before the result; and the client's
// handlers receive them all.
func TestGoSDKClientReceivesProgress(t *testing.T) {
	t.Parallel()
	testGoSDKClientReceivesProgress(t, false)
}

// TestGoSDKClientReceivesProgressServe is TestGoSDKClientReceivesProgress against the sample serving itself in one
// process (`handler serve`).
func TestGoSDKClientReceivesProgressServe(t *testing.T) {
	t.Parallel()
	testGoSDKClientReceivesProgress(t, true)
}

// testGoSDKClientReceivesProgress runs the test against the sample served by funchost, or by itself
// in one process (serve).
func testGoSDKClientReceivesProgress(t *testing.T, serve bool) {
	h := startSampleHost(t, sample(t), serve)
	const batches = 5
	for _, version := range []string{"2025-11-25", ""} {
		t.Run("protocol "+cmpOr(version, "default"), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), clientTimeout)
			defer cancel()
			var mu sync.Mutex
			var progress []float64
			var logs []string
			client := mcp.NewClient(&mcp.Implementation{Name: "funcmcp-e2e-progress", Version: "1.0.0"}, &mcp.ClientOptions{
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
			var opts *mcp.ClientSessionOptions
			if version != "" {
				opts = &mcp.ClientSessionOptions{ProtocolVersion: version}
			}
			tap := &sseTap{}
			cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{
				Endpoint: h.endpoint, DisableStandaloneSSE: true, MaxRetries: -1,
				HTTPClient: &http.Client{Transport: tap},
			}, opts)
			require.NoError(t, err)
			t.Cleanup(func() { _ = cs.Close() })
			modern := cs.InitializeResult().ProtocolVersion == "2026-07-28"
			assert.Equal(t, cmpOr(version, "2026-07-28"), cs.InitializeResult().ProtocolVersion)

			params := &mcp.CallToolParams{Name: "estimate_pi", Arguments: map[string]any{"samples": 250000, "batches": batches}}
			params.SetProgressToken("go-progress")
			if modern {
				params.Meta[mcp.MetaKeyLogLevel] = "info"
			} else {
				require.NoError(t, cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}))
			}
			res, err := cs.CallTool(ctx, params)
			require.NoError(t, err)
			require.False(t, res.IsError)

			var call []string
			for _, stream := range tap.events() {
				if len(stream) > 1 {
					require.Nil(t, call, "one stream carries notifications: %v", tap.events())
					call = stream
				}
			}
			assert.Equal(t, []string{"notifications/message",
				"notifications/progress", "notifications/progress", "notifications/progress", "notifications/progress", "notifications/progress",
				"result"}, call, "the info log, one progress per batch, then the result, on the call's stream")

			// The SDK runs notification handlers on a goroutine of its own:
			// wait (bounded) until they have seen everything.
			deadline := time.Now().Add(clientTimeout)
			for {
				mu.Lock()
				got := len(progress)
				mu.Unlock()
				if got == batches || time.Now().After(deadline) {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			mu.Lock()
			defer mu.Unlock()
			assert.Equal(t, []float64{1, 2, 3, 4, 5}, progress)
			assert.Equal(t, []string{"info"}, logs)
		})
	}
}
