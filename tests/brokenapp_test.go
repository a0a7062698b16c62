package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// brokenHostJSON serves tests/brokenapp with strict output validation.
const brokenHostJSON = `{
  "version": "2.0",
  "customHandler": {"description": {"defaultExecutablePath": "handler", "workingDirectory": "", "arguments": []}},
  "extensions": {"mcp": {"serverName": "funcmcp broken app", "serverVersion": "0.0.1", "outputValidation": "strict", "system": {"webhookAuthorizationLevel": "Anonymous"}}}
}
`

// badFunctions are hand-written function folders whose output schema the
// host must refuse at load, each with a word of the reason it must give.
var badFunctions = []struct {
	folder, tool, outputSchema, reason string
}{
	{folder: "bad_schema_json", tool: "bad_schema_json_tool", outputSchema: `{"type": "object", "properties": {`, reason: "not valid JSON"},
	{folder: "bad_schema_root", tool: "bad_schema_root_tool", outputSchema: `{"type":"array","items":{"type":"string"}}`, reason: `"type"`},
	{folder: "bad_schema_keyword", tool: "bad_schema_keyword_tool", outputSchema: `{"type":"object","properties":{"n":{"type":"no-such-type"}}}`, reason: "JSON Schema"},
}

// broken returns the folder of the built tests/brokenapp plus the bad
// hand-written function folders.
func broken(t testing.TB) string {
	t.Helper()
	return brokenApp.get(t, func() (string, error) {
		dir, err := buildApp("broken", modulePath+"/tests/brokenapp", []byte(brokenHostJSON))
		if err != nil {
			return "", err
		}
		for _, bf := range badFunctions {
			trigger := map[string]any{
				"name": "context", "type": "mcpToolTrigger", "direction": "in",
				"toolName": bf.tool, "description": "A tool with a broken output schema.",
				"toolProperties": "[]", "outputSchema": bf.outputSchema, "useResultSchema": true,
			}
			data, err := json.MarshalIndent(map[string]any{"bindings": []any{trigger}}, "", "  ")
			if err != nil {
				return "", err
			}
			if err := os.MkdirAll(filepath.Join(dir, bf.folder), 0o755); err != nil {
				return "", err
			}
			if err := os.WriteFile(filepath.Join(dir, bf.folder, "function.json"), data, 0o644); err != nil {
				return "", err
			}
		}
		return dir, nil
	})
}

func TestBrokenApp(t *testing.T) {
	t.Parallel()
	app := broken(t)
	h := startHost(t, app)
	cs := connectGoSDK(t, h.endpoint, "")
	ctx, cancel := context.WithTimeout(t.Context(), clientTimeout)
	defer cancel()

	t.Run("bad output schemas are named and not served", func(t *testing.T) {
		listed, err := cs.ListTools(ctx, nil)
		require.NoError(t, err)
		var names []string
		for _, tool := range listed.Tools {
			names = append(names, tool.Name)
		}
		assert.ElementsMatch(t, []string{"bad_output", "panics", "echo"}, names)

		// Each refusal is one ERROR log line (its message quoted by slog).
		console := strings.ReplaceAll(h.console.String(), `\"`, `"`)
		for _, bf := range badFunctions {
			line := lineWith(console, "level=ERROR", bf.folder, bf.reason)
			assert.Equal(t, 1, strings.Count(console, "tool not served: function \""+bf.folder+"\""), "one line for %s", bf.folder)
			if assert.NotEmpty(t, line, "the console names function %s and says %q:\n%s", bf.folder, bf.reason, console) {
				assert.Contains(t, line, bf.tool, "the line names the tool")
				assert.Contains(t, line, filepath.Join(bf.folder, "function.json"), "the line names the file")
			}
		}

		st := h.status(t)
		assert.Equal(t, "Running", st["state"])
		assert.EqualValues(t, 3, st["toolsServed"], "status: %v", st)
		assert.EqualValues(t, len(badFunctions), st["toolsFailed"], "status: %v", st)
	})

	t.Run("output that breaks its schema is an error result", func(t *testing.T) {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "bad_output", Arguments: map[string]any{}})
		require.NoError(t, err)
		assert.True(t, res.IsError, "result: %s", toJSON(t, res))
		assert.Nil(t, res.StructuredContent, "the invalid value is not passed on as structuredContent")
		text := string(toJSON(t, res.Content))
		assert.Regexp(t, regexp.MustCompile(`/count\b`), text, "the message quotes the JSON pointer of the bad value")

		// The app's bug, answered with an isError result while the server
		// goes on: one warning from funchost, one from the worker.
		const issue = "Output of tool 'bad_output' does not match its output schema"
		var hostLines, workerLines []string
		assert.Eventually(t, func() bool { // funchost writes its log in batches
			hostLines, workerLines = nil, nil
			for line := range strings.Lines(h.console.String()) {
				switch {
				case !strings.Contains(line, issue):
				case strings.HasPrefix(line, "[handler] "):
					workerLines = append(workerLines, line)
				default:
					hostLines = append(hostLines, line)
				}
			}
			return len(hostLines) > 0 && len(workerLines) > 0
		}, clientTimeout, 20*time.Millisecond, "a line of the output issue from funchost and from the worker")
		for _, lines := range [][]string{hostLines, workerLines} {
			if assert.Len(t, lines, 1, "console:\n%s", h.console.String()) {
				assert.Contains(t, lines[0], "level=WARN")
				assert.Contains(t, lines[0], "function=bad_output tool=bad_output invocationId=")
			}
		}
	})

	t.Run("a panicking handler is an error result and everything keeps serving", func(t *testing.T) {
		for range 3 {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "panics", Arguments: map[string]any{"reason": "test"}})
			require.NoError(t, err)
			assert.True(t, res.IsError, "result: %s", toJSON(t, res))
			assert.NotEmpty(t, res.Content)
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "still here"}})
		require.NoError(t, err)
		require.False(t, res.IsError, "result: %s", toJSON(t, res))
		assert.JSONEq(t, `{"echo":"STILL HERE","length":10}`, string(toJSON(t, res.StructuredContent)))
		assert.Equal(t, "Running", h.status(t)["state"])
	})
}

// lineWith returns the first console line that contains every word.
func lineWith(console string, words ...string) string {
	for line := range strings.Lines(console) {
		ok := true
		for _, w := range words {
			ok = ok && strings.Contains(line, w)
		}
		if ok {
			return line
		}
	}
	return ""
}

// TestMissingHandler: a host.json naming a handler that is not there stops
// `funchost start` with a message naming the key to fix and the folder the
// handler was looked for in, not exec's "executable file not found in
// $PATH". A misspelled extensions.mcp key is named before that.
func TestMissingHandler(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "host.json"),
		[]byte(`{"version":"2.0","customHandler":{"description":{"defaultExecutablePath":"handlr"}},`+
			`"extensions":{"mcp":{"servername_typo":"x"}}}`), 0o644))
	ctx, cancel := context.WithTimeout(t.Context(), startTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, funchost(t), "start", "--script-root", dir, "--port", "0")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	require.NoError(t, ctx.Err(), "funchost did not return: %s", out.String())
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, "funchost did not fail:\n%s", out.String())
	assert.Equal(t, 1, exit.ExitCode())
	console := strings.ReplaceAll(out.String(), `\"`, `"`)
	assert.Contains(t, console, `level=ERROR msg="funchost: starting the worker: the handler "handlr" named by host.json's `+
		`customHandler.description.defaultExecutablePath was not found in the app folder `+dir+` (nor on PATH)"`)
	assert.NotContains(t, console, "$PATH")
	assert.Contains(t, console, `level=WARN msg="host.json: extensions.mcp.servername_typo is not a known setting; did you mean serverName?"`)
}
