package catalog

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/funcmcp/funcmcp/binding"
	"github.com/funcmcp/funcmcp/host/internal/jsonrpc"
	"github.com/funcmcp/funcmcp/metadata"
)

// loadTool decides whether the tool trigger b of fn can be served and
// compiles it: the host's own rules first ([checkTrigger]: the tool name,
// schema size and depth, local $ref), then binding's (the schemas, within
// the compile budget). It is the catalog's one call into those rules: when
// they move into binding, so that the worker applies the same ones at
// build time, this function is what changes.
func loadTool(c *binding.Compiler, fn *metadata.Function, b *metadata.Binding, file string, lim *Limits) (*binding.Tool, error) {
	if err := checkTrigger(fn, b, file, lim); err != nil {
		return nil, err
	}
	toolName, _ := b.LookupString(metadata.KeyToolName)
	return loadToolBounded(fn, file, toolName, lim.CompileTime, func() (*binding.Tool, error) {
		return c.LoadTool(fn, b, file)
	})
}

// toolNameRule is the MCP specification's rule for tool names.
var toolNameRule = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,128}$`)

// schemaKeys are the trigger keys holding schema text.
var schemaKeys = []string{metadata.KeyInputSchema, metadata.KeyOutputSchema, metadata.KeyNaturalOutputSchema}

// checkTrigger applies the host's rules to a tool trigger before its
// schemas are compiled: the tool name rule, and per schema a size and depth
// bound and local $ref checks (each must resolve; no cycle of references
// that never moves into the instance).
func checkTrigger(fn *metadata.Function, b *metadata.Binding, file string, lim *Limits) error {
	toolName, _ := b.LookupString(metadata.KeyToolName)
	var errs []error
	fail := func(err error) {
		errs = append(errs, &binding.ToolError{Function: fn.Name, Tool: toolName, File: file, Err: err})
	}
	if toolName != "" && !toolNameRule.MatchString(toolName) {
		fail(fmt.Errorf("tool name %s must be 1 to 128 characters of A-Z, a-z, 0-9, '_', '.' and '-'", quoteSafe(toolName)))
	}
	for _, key := range schemaKeys {
		text, ok := b.LookupString(key)
		if !ok || strings.TrimSpace(text) == "" {
			continue
		}
		if len(text) > lim.SchemaBytes {
			fail(fmt.Errorf("%s is %d bytes, more than the limit of %d", key, len(text), lim.SchemaBytes))
			continue
		}
		if depth, _ := measureJSON([]byte(text)); depth > lim.SchemaDepth {
			fail(fmt.Errorf("%s nests %d levels, more than the limit of %d", key, depth, lim.SchemaDepth))
			continue
		}
		var doc any
		if json.Unmarshal([]byte(text), &doc) != nil {
			continue // binding reports invalid JSON
		}
		if err := checkRefs(doc); err != nil {
			fail(fmt.Errorf("%s: %w", key, err))
		}
	}
	return errors.Join(errs...)
}

// quoteSafe quotes s for a message (see jsonrpc.SafeText).
func quoteSafe(s string) string { return strconv.Quote(jsonrpc.SafeText(s)) }

// loadToolBounded runs compile within the compile-time budget; past it the
// tool is refused (the compilation is left to finish in the background).
func loadToolBounded(fn *metadata.Function, file, toolName string, budget time.Duration, compile func() (*binding.Tool, error)) (*binding.Tool, error) {
	type result struct {
		tool *binding.Tool
		err  error
	}
	ch := make(chan result, 1)
	go func() {
		t, err := compile()
		ch <- result{t, err}
	}()
	timer := time.NewTimer(budget)
	defer timer.Stop()
	select {
	case r := <-ch:
		return r.tool, r.err
	case <-timer.C:
		return nil, &binding.ToolError{Function: fn.Name, Tool: toolName, File: file,
			Err: fmt.Errorf("compiling the schemas took longer than the budget of %v", budget)}
	}
}
