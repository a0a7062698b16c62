package mcp

import (
	"context"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/metadata"
)

// TestOfficialGoClient connects the official Go SDK client. With default
// options it probes server/discover and stays on 2026-07-28, stateless;
// pinned to a legacy revision it runs the initialize handshake.
func TestOfficialGoClient(t *testing.T) {
	tests := []struct {
		name      string
		opts      *sdk.ClientSessionOptions
		negotiate string
	}{
		{"default connect", nil, "2026-07-28"},
		{"pinned 2025-11-25", &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"}, "2025-11-25"},
		{"pinned 2025-06-18", &sdk.ClientSessionOptions{ProtocolVersion: "2025-06-18"}, "2025-06-18"},
		{"pinned 2025-03-26", &sdk.ClientSessionOptions{ProtocolVersion: "2025-03-26"}, "2025-03-26"},
		{"pinned 2024-11-05", &sdk.ClientSessionOptions{ProtocolVersion: "2024-11-05"}, "2024-11-05"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := startServer(t, &Options{ServerInfo: Implementation{Name: "funcmcp-test", Version: "3.0.0"}, Instructions: "be nice"})
			ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
			defer cancel()

			client := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "0"}, nil)
			cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{
				Endpoint: s.URL + "/runtime/webhooks/mcp", DisableStandaloneSSE: true, MaxRetries: -1,
			}, tt.opts)
			require.NoError(t, err)
			defer cs.Close()

			init := cs.InitializeResult()
			require.NotNil(t, init)
			assert.Equal(t, tt.negotiate, init.ProtocolVersion)
			require.NotNil(t, init.ServerInfo)
			assert.Equal(t, "funcmcp-test", init.ServerInfo.Name)
			assert.Equal(t, "3.0.0", init.ServerInfo.Version)
			assert.Equal(t, "be nice", init.Instructions)
			modern := IsModern(tt.negotiate)
			if modern {
				assert.Empty(t, cs.ID(), "no session in 2026-07-28")
			} else {
				assert.NotEmpty(t, cs.ID(), "the client keeps the session token")
			}

			lt, err := cs.ListTools(ctx, nil)
			require.NoError(t, err)
			var names []string
			for _, tool := range lt.Tools {
				names = append(names, tool.Name)
			}
			assert.Equal(t, []string{"echo", "add"}, names)
			assert.NotNil(t, lt.Tools[1].OutputSchema)

			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "add", Arguments: map[string]any{"a": 40, "b": 2}})
			require.NoError(t, err)
			assert.False(t, res.IsError)
			assert.Equal(t, map[string]any{"sum": float64(42)}, res.StructuredContent)
			require.Len(t, res.Content, 1)
			text, ok := res.Content[0].(*sdk.TextContent)
			require.True(t, ok, "content is %T", res.Content[0])
			assert.JSONEq(t, `{"sum":42}`, text.Text)

			got := s.tools.lastCall(t)
			assert.Equal(t, tt.negotiate, got.ProtocolVersion)
			assert.Equal(t, &metadata.ClientInfo{Name: "t", Version: "0"}, got.ClientInfo)
			assert.Equal(t, cs.ID(), got.SessionID)
			assert.Equal(t, modern, got.Meta != nil, "a modern call carries its _meta")

			_, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "nope"})
			require.Error(t, err)
			assert.Contains(t, err.Error(), "Unknown tool: 'nope'")

			if modern {
				err := cs.Ping(ctx, nil)
				require.Error(t, err, "ping is not part of 2026-07-28")
				assert.Contains(t, err.Error(), "Method not found")
			} else {
				require.NoError(t, cs.Ping(ctx, nil))
			}
		})
	}
}
