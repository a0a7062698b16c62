package catalog

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/binding"
	"github.com/funcmcp/funcmcp/metadata"
)

// triggerJSON is a function.json with one mcpToolTrigger.
func triggerJSON(tool, outputSchema string) string {
	b := map[string]any{"type": "mcpToolTrigger", "direction": "in", "name": "context", "toolName": tool, "description": "d", "toolProperties": "[]"}
	if outputSchema != "" {
		b["outputSchema"] = outputSchema
	}
	data, _ := json.Marshal(map[string]any{"bindings": []any{b}})
	return string(data)
}

// TestBrokenAppFolders is a table of broken function folders: each is
// refused with one line naming the function, the tool and the file and
// saying why, and the good tool beside them is served.
func TestBrokenAppFolders(t *testing.T) {
	deep := `{"type":"object","properties":{"x":` + strings.Repeat(`{"type":"array","items":`, 70) + `{}` + strings.Repeat("}", 70) + `}}`
	tests := []struct {
		name    string
		write   func(t *testing.T, dir string) // writes dir/function.json (dir exists)
		tool    string                         // "" when the function is not read at all
		message string
	}{
		{"function.json is a named pipe", func(t *testing.T, dir string) {
			require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "function.json"), 0o644))
		}, "", "not a regular file (a named pipe): not read"},
		{"function.json is a directory", func(t *testing.T, dir string) {
			require.NoError(t, os.Mkdir(filepath.Join(dir, "function.json"), 0o755))
		}, "", "not a regular file (a directory): not read"},
		{"function.json too large", func(t *testing.T, dir string) {
			writeFile(t, dir, "function.json", triggerJSON("big", `{"type":"object","description":"`+strings.Repeat("x", 5000)+`"}`))
		}, "", "more than the limit of 4096: not read"},
		{"schema too large", func(t *testing.T, dir string) {
			writeFile(t, dir, "function.json", triggerJSON("bigschema", `{"type":"object","description":"`+strings.Repeat("x", 2100)+`"}`))
		}, "bigschema", "output schema is 2134 bytes, more than the limit of 2048"},
		{"schema too deep", func(t *testing.T, dir string) {
			writeFile(t, dir, "function.json", triggerJSON("deepschema", deep))
		}, "deepschema", "output schema nests 73 levels, more than the limit of 64"},
		{"unresolvable $ref", func(t *testing.T, dir string) {
			writeFile(t, dir, "function.json", triggerJSON("badref", `{"type":"object","properties":{"a":{"$ref":"#/$defs/missing"}}}`))
		}, "badref", `output schema: $ref "#/$defs/missing" at #/properties/a does not resolve`},
		{"unknown anchor", func(t *testing.T, dir string) {
			writeFile(t, dir, "function.json", triggerJSON("badanchor", `{"type":"object","properties":{"a":{"$ref":"#nowhere"}}}`))
		}, "badanchor", `output schema: $ref "#nowhere" at #/properties/a names no $anchor of the schema`},
		{"$ref cycle", func(t *testing.T, dir string) {
			writeFile(t, dir, "function.json", triggerJSON("refcycle", `{"type":"object","$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}},"properties":{"x":{"$ref":"#/$defs/a"}}}`))
		}, "refcycle", "output schema: $ref cycle that never moves into the instance: #/$defs/a → #/$defs/b → #/$defs/a"},
		{"allOf cycle", func(t *testing.T, dir string) {
			writeFile(t, dir, "function.json", triggerJSON("allofcycle", `{"type":"object","$defs":{"a":{"allOf":[{"$ref":"#/$defs/a"}]}}}`))
		}, "allofcycle", "output schema: $ref cycle that never moves into the instance: #/$defs/a/allOf/0 → #/$defs/a → #/$defs/a/allOf/0"},
		{"tool name with a space", func(t *testing.T, dir string) {
			writeFile(t, dir, "function.json", triggerJSON("get weather", ""))
		}, "get weather", `tool name "get weather" must be 1 to 128 characters of A-Z, a-z, 0-9, '_', '.' and '-'`},
		{"tool name of 129 characters", func(t *testing.T, dir string) {
			writeFile(t, dir, "function.json", triggerJSON(strings.Repeat("a", 129), ""))
		}, strings.Repeat("a", 129), "must be 1 to 128 characters"},
		{"tool name with a slash", func(t *testing.T, dir string) {
			writeFile(t, dir, "function.json", triggerJSON("tools/x", ""))
		}, "tools/x", `tool name "tools/x" must be`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			writeFile(t, root, "good/function.json", triggerJSON("good_tool", `{"type":"object","properties":{"children":{"type":"array","items":{"$ref":"#"}}}}`))
			dir := filepath.Join(root, "broken")
			require.NoError(t, os.MkdirAll(dir, 0o755))
			tt.write(t, dir)
			// Loading must end even for a folder built to stall it (a named
			// pipe, a $ref cycle): bounded, and the result comes back on a
			// channel.
			type loaded struct {
				c   *Catalog
				err error
			}
			ch := make(chan loaded, 1)
			go func() {
				c, err := Load(root, testLimits(&Limits{FileBytes: 4096, Schema: binding.Limits{SchemaBytes: 2048}}), nil)
				ch <- loaded{c, err}
			}()
			var l loaded
			select {
			case l = <-ch:
			case <-time.After(10 * time.Second):
				t.Fatal("loading the app stalled")
			}
			require.NoError(t, l.err)
			assert.Len(t, l.c.Tools(), 1, "the good tool (a legitimate recursive schema) is served")
			require.Len(t, l.c.Failures(), 1, "one refusal")
			err := l.c.Failures()[0]
			file := filepath.Join(dir, "function.json")
			assert.Contains(t, err.Error(), tt.message)
			assert.Contains(t, err.Error(), file)
			// The error names the function, the file and (when read) the tool.
			var te *binding.ToolError
			var fe *metadata.FunctionError
			switch {
			case errors.As(err, &te):
				assert.Equal(t, "broken", te.Function)
				assert.Equal(t, file, te.File)
				assert.Equal(t, tt.tool, te.Tool)
				assert.Contains(t, err.Error(), `tool "`+tt.tool+`"`)
			case errors.As(err, &fe):
				assert.Empty(t, tt.tool, "a function not read names no tool")
				assert.Equal(t, "broken", fe.Function)
				assert.Equal(t, file, fe.File)
			default:
				t.Fatalf("untyped failure %T: %v", err, err)
			}
			fns := l.c.Functions()
			require.Len(t, fns, 2)
			assert.Equal(t, "broken", fns[0].Name)
			assert.False(t, fns[0].Served)
			assert.Equal(t, err.Error(), fns[0].Error)
		})
	}
}
