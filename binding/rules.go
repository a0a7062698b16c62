package binding

import (
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/funcmcp/funcmcp/internal/jsonx"
)

// Defaults of [Limits].
const (
	DefaultMaxSchemaBytes    = 256 << 10
	DefaultMaxSchemaDepth    = 64
	DefaultSchemaCompileTime = 5 * time.Second
)

// Limits bound what checking and compiling a schema, and loading one tool,
// may cost. Zero fields mean the
// defaults. The worker SDK loads with the defaults and funchost with its
// configured limits, so with the defaults on both sides a tool the worker
// emits is a tool funchost serves.
type Limits struct {
	// SchemaBytes bounds the text of each schema key.
	SchemaBytes int
	// SchemaDepth bounds the nesting of each schema.
	SchemaDepth int
	// CompileTime bounds compiling one tool's schemas; past it the tool is
	// refused (the compile is left to finish in the background).
	CompileTime time.Duration
}

func (l Limits) withDefaults() Limits {
	if l.SchemaBytes <= 0 {
		l.SchemaBytes = DefaultMaxSchemaBytes
	}
	if l.SchemaDepth <= 0 {
		l.SchemaDepth = DefaultMaxSchemaDepth
	}
	if l.CompileTime <= 0 {
		l.CompileTime = DefaultSchemaCompileTime
	}
	return l
}

// validToolName is the MCP specification's rule for tool names,
// ^[A-Za-z0-9_.-]{1,128}$. It is written out rather than compiled because
// every program that links this package would compile it at init (the
// bounded repetition expands to 128 copies: 1,700 allocations).
func validToolName(name string) bool {
	if name == "" || len(name) > 128 {
		return false
	}
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '_', c == '.', c == '-':
		default:
			return false
		}
	}
	return true
}

// CheckToolName applies the MCP specification's rule for tool names: 1 to 128
// characters of A-Z, a-z, 0-9, '_', '.' and '-'.
func CheckToolName(name string) error {
	if validToolName(name) {
		return nil
	}
	return fmt.Errorf("tool name %s must be 1 to 128 characters of A-Z, a-z, 0-9, '_', '.' and '-'", jsonx.QuoteSafe(name))
}

// inPlaceKeys are applicators that apply a subschema to the same instance:
// a cycle through them (and $ref) never ends.
var inPlaceKeys = map[string]bool{"allOf": true, "anyOf": true, "oneOf": true, "not": true, "if": true, "then": true, "else": true, "dependentSchemas": true}

// checkRefs checks every local $ref of a schema document: it must resolve
// (a JSON pointer or an $anchor of the document), and following $ref and
// in-place applicators from any schema must not come back to it.
func checkRefs(doc any) error {
	anchors := map[string]string{}
	var refs [][2]string // location, ref
	walkSchemas(doc, "#", true, func(m map[string]any, ptr string) {
		if a, ok := m["$anchor"].(string); ok {
			anchors[a] = ptr
		}
		if r, ok := m["$ref"].(string); ok {
			refs = append(refs, [2]string{ptr, r})
		}
	})
	sort.Slice(refs, func(i, j int) bool { return refs[i][0] < refs[j][0] })
	target := map[string]string{} // location of a $ref → the location it names
	var errs []error
	for _, lr := range refs {
		loc, ref := lr[0], lr[1]
		if !strings.HasPrefix(ref, "#") {
			continue // not local: the compiler refuses what it cannot load offline
		}
		frag, err := url.PathUnescape(ref[1:])
		if err != nil {
			errs = append(errs, fmt.Errorf("$ref %s at %s is not a valid fragment", jsonx.QuoteSafe(ref), loc))
			continue
		}
		var to string
		if frag == "" || strings.HasPrefix(frag, "/") {
			if _, ok := jsonx.ResolvePointer(doc, frag); !ok {
				errs = append(errs, fmt.Errorf("$ref %s at %s does not resolve", jsonx.QuoteSafe(ref), loc))
				continue
			}
			to = "#" + frag
		} else if p, ok := anchors[frag]; ok {
			to = p
		} else {
			errs = append(errs, fmt.Errorf("$ref %s at %s names no $anchor of the schema", jsonx.QuoteSafe(ref), loc))
			continue
		}
		target[loc] = to
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	if cycle := refCycle(doc, target); cycle != nil {
		return fmt.Errorf("$ref cycle that never moves into the instance: %s", strings.Join(cycle, " → "))
	}
	return nil
}

// walkSchemas calls visit for every schema object of v reachable through
// subschema keywords (the tables [rewriteRefs] uses too), with its location
// as a "#"-prefixed JSON pointer. Values of other keywords (const, enum,
// default, annotations) are not schemas and are not entered, nor are
// subschemas with their own "$id": their references resolve against another
// base URI, which the compiler checks.
func walkSchemas(v any, ptr string, root bool, visit func(m map[string]any, ptr string)) {
	m, ok := v.(map[string]any)
	if !ok {
		return
	}
	if _, hasID := m["$id"]; hasID && !root {
		return
	}
	visit(m, ptr)
	for k, c := range m {
		at := ptr + "/" + jsonx.EscapePointerToken(k)
		switch x := c.(type) {
		case map[string]any:
			if subschemaKeywords[k] {
				walkSchemas(x, at, false, visit)
			} else if subschemaMapKeywords[k] {
				for name, sub := range x {
					walkSchemas(sub, at+"/"+jsonx.EscapePointerToken(name), false, visit)
				}
			}
		case []any:
			if subschemaListKeywords[k] {
				for i, sub := range x {
					walkSchemas(sub, at+"/"+strconv.Itoa(i), false, visit)
				}
			}
		}
	}
}

// refCycle finds a cycle of schema locations linked by $ref or an in-place
// applicator; nil when there is none.
func refCycle(doc any, target map[string]string) []string {
	edges := func(loc string) []string {
		var out []string
		if to, ok := target[loc]; ok {
			out = append(out, to)
		}
		v, _ := jsonx.ResolvePointer(doc, strings.TrimPrefix(loc, "#"))
		m, _ := v.(map[string]any)
		for k, c := range m {
			if !inPlaceKeys[k] {
				continue
			}
			switch x := c.(type) {
			case map[string]any:
				if k == "dependentSchemas" {
					for dk := range x {
						out = append(out, loc+"/"+k+"/"+jsonx.EscapePointerToken(dk))
					}
				} else {
					out = append(out, loc+"/"+k)
				}
			case []any:
				for i := range x {
					out = append(out, loc+"/"+k+"/"+strconv.Itoa(i))
				}
			}
		}
		sort.Strings(out)
		return out
	}
	const (
		unseen = iota
		onPath
		done
	)
	state := map[string]int{}
	var path []string
	var visit func(loc string) []string
	visit = func(loc string) []string {
		state[loc] = onPath
		path = append(path, loc)
		for _, next := range edges(loc) {
			switch state[next] {
			case onPath:
				for i, p := range path {
					if p == next {
						return append(append([]string{}, path[i:]...), next)
					}
				}
			case unseen:
				if c := visit(next); c != nil {
					return c
				}
			}
		}
		path = path[:len(path)-1]
		state[loc] = done
		return nil
	}
	starts := make([]string, 0, len(target))
	for loc := range target {
		starts = append(starts, loc)
	}
	sort.Strings(starts)
	for _, loc := range starts {
		if state[loc] == unseen {
			if c := visit(loc); c != nil {
				return c
			}
		}
	}
	return nil
}

// withinBudget runs compile within budget; past it the tool is refused and
// the compile is left to finish in the background.
func withinBudget(function, file, toolName string, budget time.Duration, compile func() (*Tool, error)) (*Tool, error) {
	type result struct {
		tool *Tool
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
		return nil, &ToolError{Function: function, Tool: toolName, File: file,
			Err: fmt.Errorf("compiling the schemas took longer than the budget of %v", budget)}
	}
}
