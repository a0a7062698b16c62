package tests

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// progressReport is what tests/node/progress-client.mjs prints: every
// notification and the result, in the order the client received them.
type progressReport struct {
	ProtocolVersion string `json:"protocolVersion"`
	Events          []struct {
		Kind     string          `json:"kind"` // progress, log or result
		Progress float64         `json:"progress"`
		Total    *float64        `json:"total"`
		Message  *string         `json:"message"`
		Level    string          `json:"level"`
		Logger   *string         `json:"logger"`
		Data     json.RawMessage `json:"data"`
		Result   json.RawMessage `json:"result"`
	} `json:"events"`
	Error string `json:"error"`
}

// TestLongRunningToolReportsProgressToRealClients calls the sample's
// estimate_pi through funchost with the official TypeScript clients, which
// ask for progress (a progressToken) and log messages (logging/setLevel on
// 2025-11-25, the request's _meta on 2026-07-28): every batch's progress
// notification, and the log messages at or above the level asked for, must
// reach the client before the result.
func TestLongRunningToolReportsProgressToRealClients(t *testing.T) {
	nodeBin(t, "@modelcontextprotocol/sdk", "@modelcontextprotocol/client") // fail fast, before starting anything
	h := startHost(t, sample(t))
	const batches = 6
	args := fmt.Sprintf(`{"samples":300000,"batches":%d}`, batches)
	tests := []struct {
		client, level, version string
		wantLogs               []string // levels of the log messages, in order
	}{
		{"v1", "debug", "2025-11-25", []string{"info", "debug", "debug", "debug", "debug", "debug", "debug"}},
		{"v1", "info", "2025-11-25", []string{"info"}},
		{"v1", "none", "2025-11-25", nil},
		{"v2-auto", "info", "2026-07-28", []string{"info"}},
		{"v2-auto", "none", "2026-07-28", nil},
	}
	for _, tt := range tests {
		t.Run(tt.client+"/"+tt.level, func(t *testing.T) {
			node, dir := nodeBin(t)
			code, stdout, stderr := runNode(t, node, dir, "progress-client.mjs", h.endpoint, "estimate_pi", args, tt.level, tt.client)
			var report progressReport
			require.NoError(t, json.Unmarshal([]byte(stdout), &report), "exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			require.Equal(t, 0, code, "the call failed: %s\nstderr:\n%s", report.Error, stderr)
			assert.Equal(t, tt.version, report.ProtocolVersion)

			require.NotEmpty(t, report.Events)
			last := report.Events[len(report.Events)-1]
			require.Equal(t, "result", last.Kind, "the result comes last: %s", stdout)
			var res struct {
				StructuredContent struct {
					Samples int `json:"samples"`
					Batches int `json:"batches"`
				} `json:"structuredContent"`
				IsError bool `json:"isError"`
			}
			require.NoError(t, json.Unmarshal(last.Result, &res))
			assert.False(t, res.IsError)
			assert.Equal(t, 300000, res.StructuredContent.Samples)

			var progress []float64
			var logs []string
			for i, ev := range report.Events[:len(report.Events)-1] {
				switch ev.Kind {
				case "progress":
					progress = append(progress, ev.Progress)
					require.NotNil(t, ev.Total, "event %d", i)
					assert.EqualValues(t, batches, *ev.Total)
					require.NotNil(t, ev.Message, "event %d", i)
					assert.Contains(t, *ev.Message, fmt.Sprintf("batch %d of %d: π ≈ 3.1", int(ev.Progress), batches))
				case "log":
					logs = append(logs, ev.Level)
					require.NotNil(t, ev.Logger)
					assert.Equal(t, "estimate_pi", *ev.Logger)
				default:
					t.Errorf("event %d before the result is a %q", i, ev.Kind)
				}
			}
			assert.Equal(t, []float64{1, 2, 3, 4, 5, 6}, progress, "one progress notification per batch, in order, before the result")
			assert.Equal(t, tt.wantLogs, logs, "log messages at or above the level asked for, before the result")
		})
	}
}
