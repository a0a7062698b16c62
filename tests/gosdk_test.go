package tests

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// connectGoSDK connects the official Go SDK client to the host's endpoint.
func connectGoSDK(t *testing.T, endpoint, protocolVersion string) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), clientTimeout)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "funcmcp-e2e-go-client", Version: "1.0.0"}, nil)
	var opts *mcp.ClientSessionOptions
	if protocolVersion != "" {
		opts = &mcp.ClientSessionOptions{ProtocolVersion: protocolVersion}
	}
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint:             endpoint,
		DisableStandaloneSSE: true,
		MaxRetries:           -1,
	}, opts)
	require.NoError(t, err, "connecting to %s", endpoint)
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// toJSON re-encodes a value the SDK decoded into `any`.
func toJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	data, err := json.Marshal(v)
	require.NoError(t, err)
	return data
}

func TestGoSDKClient(t *testing.T) {
	t.Parallel()
	testGoSDKClient(t, false)
}

// TestGoSDKClientServe is TestGoSDKClient against the sample serving
// itself in one process (`handler serve`).
func TestGoSDKClientServe(t *testing.T) {
	t.Parallel()
	testGoSDKClient(t, true)
}

// testGoSDKClient drives the sample with the Go SDK client at every
// revision, served by funchost or by itself (serve).
func testGoSDKClient(t *testing.T, serve bool) {
	app := sample(t)
	h := startSampleHost(t, app, serve)
	legacySchemas, naturalSchemas := readOutputSchemas(t, app), readNaturalOutputSchemas(t, app)

	weatherSource, err := os.ReadFile(filepath.Join("..", "function-app-sample", "weather.schema.json"))
	require.NoError(t, err)

	// The default Connect probes server/discover and stays on 2026-07-28;
	// pinned to a legacy revision it runs initialize.
	for _, version := range []string{"", "2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"} {
		t.Run("protocol "+cmpOr(version, "default"), func(t *testing.T) {
			cs := connectGoSDK(t, h.endpoint, version)
			ctx, cancel := context.WithTimeout(t.Context(), clientTimeout)
			defer cancel()
			init := cs.InitializeResult()
			require.NotNil(t, init)
			assert.Equal(t, cmpOr(version, "2026-07-28"), init.ProtocolVersion)
			modern := init.ProtocolVersion == "2026-07-28"
			declared := legacySchemas
			if modern {
				declared = naturalSchemas
			}
			assert.Equal(t, "funcmcp sample", init.ServerInfo.Name)
			assert.Equal(t, "1.0.0", init.ServerInfo.Version)
			assert.NotEmpty(t, init.Instructions)

			listed, err := cs.ListTools(ctx, nil)
			require.NoError(t, err)
			advertised := map[string]*mcp.Tool{}
			for _, tool := range listed.Tools {
				advertised[tool.Name] = tool
			}
			var names []string
			for _, st := range sampleTools {
				names = append(names, st.name)
			}
			got := make([]string, 0, len(advertised))
			for name := range advertised {
				got = append(got, name)
			}
			assert.ElementsMatch(t, names, got)

			// tools/list carries each output schema exactly as function.json declares it.
			for _, st := range sampleTools {
				tool := advertised[st.name]
				require.NotNil(t, tool, st.name)
				assert.NotEmpty(t, tool.Description, st.name)
				assert.Equal(t, "object", tool.InputSchema.(map[string]any)["type"], st.name)
				if !st.hasOutputSchema {
					assert.Nil(t, tool.OutputSchema, "%s has no output schema", st.name)
					assert.NotContains(t, declared, st.name)
					continue
				}
				require.NotNil(t, tool.OutputSchema, st.name)
				require.Contains(t, declared, st.name)
				assert.JSONEq(t, declared[st.name], string(toJSON(t, tool.OutputSchema)), st.name)
			}
			// get_weather's schema is the sample's hand-written file, verbatim.
			assert.JSONEq(t, string(weatherSource), string(toJSON(t, advertised["get_weather"].OutputSchema)))
			// Slice outputs are wrapped in an object for legacy clients.
			for _, st := range sampleTools {
				if st.outputField == "" {
					continue
				}
				if modern {
					assertArraySchema(t, advertised[st.name].OutputSchema)
				} else {
					assertWrapped(t, advertised[st.name].OutputSchema, st.outputField)
				}
			}
			t.Logf("Go SDK client at %s: fibonacci outputSchema %s", init.ProtocolVersion, toJSON(t, advertised["fibonacci"].OutputSchema))
			assert.Equal(t, "Weather forecast", advertised["get_weather"].Title)
			// Declared content kinds are advertised in _meta, beside the metadata.
			assert.Equal(t, []any{"image/png", "text/plain"}, advertised["bar_chart"].Meta["funcmcp/contentKinds"])
			assert.Equal(t, "weather", advertised["get_weather"].Meta["category"])

			for _, st := range sampleTools {
				t.Run(st.name, func(t *testing.T) {
					res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: st.name, Arguments: st.args})
					if st.refused != "" {
						var wire *jsonrpc.Error
						require.True(t, errors.As(err, &wire), "a JSON-RPC error: %v", err)
						assert.EqualValues(t, -32600, wire.Code, "%v", err)
						assert.Contains(t, wire.Message, st.refused)
						return
					}
					require.NoError(t, err)
					checkSampleResult(t, st, declared[st.name], toJSON(t, res))
					if st.name == "fibonacci" {
						t.Logf("Go SDK client at %s: fibonacci structuredContent %s", init.ProtocolVersion, toJSON(t, res.StructuredContent))
					}
				})
			}
		})
	}

	t.Run("bad calls", func(t *testing.T) {
		cs := connectGoSDK(t, h.endpoint, "")
		ctx, cancel := context.WithTimeout(t.Context(), clientTimeout)
		defer cancel()

		// An unknown tool is a JSON-RPC invalid-params error.
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "no_such_tool", Arguments: map[string]any{}})
		require.Error(t, err)
		var wire *jsonrpc.Error
		require.True(t, errors.As(err, &wire), "a JSON-RPC error: %v", err)
		assert.EqualValues(t, -32602, wire.Code, "%v", err)

		// A missing required argument: a protocol error or an isError result,
		// either way naming the argument.
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "get_weather", Arguments: map[string]any{"units": "metric"}})
		if err != nil {
			assert.ErrorContains(t, err, "city")
		} else {
			assert.True(t, res.IsError, "missing city: %s", toJSON(t, res))
			assert.Contains(t, string(toJSON(t, res.Content)), "city")
		}

		// The tool itself refuses bad values: an isError result saying why.
		for _, c := range []struct {
			name string
			args map[string]any
			want string
		}{
			{name: "mortgage_payment", args: map[string]any{"principal": 1000, "annual_rate_percent": 5, "years": 0}, want: "years must be between 1 and 50"},
			{name: "to_roman", args: map[string]any{"number": 0}, want: "between 1 and 3999"},
			{name: "list_holidays", args: map[string]any{"country": "FR", "year": 2026}, want: `not supported`},
			{name: "get_weather", args: map[string]any{"city": "Oslo", "days": 9}, want: "days must be between 1 and 7"},
		} {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.name, Arguments: c.args})
			require.NoError(t, err, c.name)
			assert.True(t, res.IsError, "%s: %s", c.name, toJSON(t, res))
			assert.Nil(t, res.StructuredContent, c.name)
			assert.Contains(t, string(toJSON(t, res.Content)), c.want, c.name)
		}
	})
}

// assertArraySchema checks that a natural output schema's type is array.
func assertArraySchema(t *testing.T, schema any) {
	t.Helper()
	m, ok := schema.(map[string]any)
	require.True(t, ok, "schema is an object: %v", schema)
	switch typ := m["type"].(type) {
	case string:
		assert.Equal(t, "array", typ)
	case []any:
		assert.Contains(t, typ, "array")
	default:
		t.Errorf("no array type: %v", schema)
	}
}

// assertWrapped checks that a slice result's output schema is an object
// with one required array property, field.
func assertWrapped(t *testing.T, schema any, field string) {
	t.Helper()
	m, ok := schema.(map[string]any)
	require.True(t, ok, "schema is an object: %v", schema)
	assert.Equal(t, "object", m["type"])
	assert.Equal(t, []any{field}, m["required"])
	props, _ := m["properties"].(map[string]any)
	assert.Len(t, props, 1)
	assertArraySchema(t, props[field])
}

func cmpOr(s, fallback string) string {
	if s == "" {
		return fallback
	}
	return s
}
