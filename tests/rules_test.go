package tests

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/binding"
	mcphost "github.com/funcmcp/funcmcp/host"
	"github.com/funcmcp/funcmcp/metadata"
	"github.com/funcmcp/funcmcp/worker"
)

// TestWorkerRefusesWhatTheHostRefuses builds, for each rule funchost applies
// when it loads a tool, an app whose tool breaks it. Build() must refuse the
// tool, and funchost, given the function.json the worker would have written,
// must refuse it with the same reason: the worker can never emit what the
// host will not serve.
func TestWorkerRefusesWhatTheHostRefuses(t *testing.T) {
	deep := `{"type":"object","properties":{"x":` + strings.Repeat(`{"type":"array","items":`, 70) + `{}` + strings.Repeat("}", 70) + `}}`
	handler := func(context.Context, *worker.ToolContext) (*worker.Result, error) { return nil, nil }
	bigSchema := `{"type":"object","description":"` + strings.Repeat("x", binding.DefaultMaxSchemaBytes) + `"}`
	badRef := `{"type":"object","properties":{"a":{"$ref":"#/$defs/missing"}}}`
	noAnchor := `{"type":"object","properties":{"a":{"$ref":"#nowhere"}}}`
	cycle := `{"type":"object","$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}},"properties":{"x":{"$ref":"#/$defs/a"}}}`
	wordy := strings.Repeat("word ", metadata.DefaultMaxFunctionFileBytes/5+1)
	// Each case configures the tool through the worker SDK, and gives the
	// same tool as plain options: what the worker would have written
	// without its checks.
	for _, tc := range []struct {
		name      string
		function  string
		configure func(app *worker.App) *worker.ToolBuilder
		opts      metadata.ToolOptions
	}{
		{"tool name with a space", "get_weather", func(app *worker.App) *worker.ToolBuilder {
			return app.ConfigureMcpTool("get weather!").WithFunctionName("get_weather")
		}, metadata.ToolOptions{ToolName: "get weather!"}},
		{"tool name too long", "long", func(app *worker.App) *worker.ToolBuilder {
			return app.ConfigureMcpTool(strings.Repeat("t", 129)).WithFunctionName("long")
		}, metadata.ToolOptions{ToolName: strings.Repeat("t", 129)}},
		{"output schema too large", "big", func(app *worker.App) *worker.ToolBuilder {
			return app.ConfigureMcpTool("big").WithOutputSchema(bigSchema)
		}, metadata.ToolOptions{ToolName: "big", OutputSchema: bigSchema}},
		{"input schema too deep", "deep", func(app *worker.App) *worker.ToolBuilder {
			return app.ConfigureMcpTool("deep").WithInputSchema(deep)
		}, metadata.ToolOptions{ToolName: "deep", InputSchema: deep}},
		{"unresolvable $ref", "badref", func(app *worker.App) *worker.ToolBuilder {
			return app.ConfigureMcpTool("badref").WithOutputSchema(badRef)
		}, metadata.ToolOptions{ToolName: "badref", OutputSchema: badRef}},
		{"$ref to no anchor", "badanchor", func(app *worker.App) *worker.ToolBuilder {
			return app.ConfigureMcpTool("badanchor").WithOutputSchema(noAnchor)
		}, metadata.ToolOptions{ToolName: "badanchor", OutputSchema: noAnchor}},
		{"$ref cycle", "refcycle", func(app *worker.App) *worker.ToolBuilder {
			return app.ConfigureMcpTool("refcycle").WithOutputSchema(cycle)
		}, metadata.ToolOptions{ToolName: "refcycle", OutputSchema: cycle}},
		{"function.json larger than the host reads", "wordy", func(app *worker.App) *worker.ToolBuilder {
			return app.ConfigureMcpTool("wordy").WithDescription(wordy)
		}, metadata.ToolOptions{ToolName: "wordy", Description: wordy}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			app := worker.New(nil)
			tc.configure(app).Handle(handler)
			buildErr := app.Build()
			require.Error(t, buildErr, "Build() must refuse what funchost refuses")
			var ce *worker.ConfigError
			require.ErrorAs(t, buildErr, &ce)

			fn, err := metadata.NewToolFunction(tc.function, &tc.opts)
			require.NoError(t, err)
			root := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(root, "host.json"), []byte(`{"version":"2.0"}`), 0o644))
			require.NoError(t, os.MkdirAll(filepath.Join(root, fn.Name), 0o755))
			data, err := fn.Encode()
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(filepath.Join(root, fn.Name, metadata.FunctionFile), data, 0o644))
			var logs bytes.Buffer
			h, err := mcphost.New(&mcphost.Options{ScriptRoot: root, WorkerURL: "http://127.0.0.1:1", Output: &logs,
				Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			require.NoError(t, err)
			st := h.Status()
			require.Equal(t, 0, st.ToolsServed)
			require.Len(t, st.Errors, 1, "funchost refuses the tool")

			// The options above leave out what the worker adds (toolProperties,
			// useResultSchema, …), so a file size differs by those bytes.
			reason := sizes.ReplaceAllString(workerReason(buildErr), "N bytes")
			assert.NotEmpty(t, reason)
			assert.Contains(t, sizes.ReplaceAllString(st.Errors[0], "N bytes"), reason, "the same reason on both sides")
		})
	}
}

var sizes = regexp.MustCompile(`\d+ bytes`)

// workerReason is the rule's own message inside a Build() error: the reason
// of the binding.ToolError, or the function.json size rule.
func workerReason(err error) string {
	var te *binding.ToolError
	if errors.As(err, &te) {
		return te.Err.Error()
	}
	msg := err.Error()
	if i := strings.Index(msg, "function.json would be "); i >= 0 {
		rest := msg[i+len("function.json would be "):]
		if j := strings.Index(rest, ":"); j >= 0 {
			return rest[:j]
		}
	}
	if i := strings.LastIndex(msg, ": "); i >= 0 {
		return msg[i+2:]
	}
	return msg
}
