package catalog

import (
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"
)

// inPlaceKeys are applicators that apply a subschema to the same instance:
// a cycle through them (and $ref) never ends.
var inPlaceKeys = map[string]bool{"allOf": true, "anyOf": true, "oneOf": true, "not": true, "if": true, "then": true, "else": true, "dependentSchemas": true}

// checkRefs checks every local $ref of a schema document: it must resolve
// (a JSON pointer or an $anchor of the document), and following $ref and
// in-place applicators from any schema must not come back to it.
func checkRefs(doc any) error {
	anchors := map[string]string{}
	var refs [][2]string // location, ref
	var walk func(v any, ptr string)
	walk = func(v any, ptr string) {
		switch x := v.(type) {
		case map[string]any:
			if a, ok := x["$anchor"].(string); ok {
				anchors[a] = ptr
			}
			if r, ok := x["$ref"].(string); ok {
				refs = append(refs, [2]string{ptr, r})
			}
			for k, c := range x {
				walk(c, ptr+"/"+escapePointer(k))
			}
		case []any:
			for i, c := range x {
				walk(c, ptr+"/"+strconv.Itoa(i))
			}
		}
	}
	walk(doc, "#")
	target := map[string]string{} // location of a $ref → the location it names
	var errs []error
	for _, lr := range refs {
		loc, ref := lr[0], lr[1]
		if !strings.HasPrefix(ref, "#") {
			continue // not local: binding refuses what it cannot load offline
		}
		frag, err := url.PathUnescape(ref[1:])
		if err != nil {
			errs = append(errs, fmt.Errorf("$ref %s at %s is not a valid fragment", quoteSafe(ref), loc))
			continue
		}
		var to string
		if frag == "" || strings.HasPrefix(frag, "/") {
			if _, ok := resolvePointer(doc, frag); !ok {
				errs = append(errs, fmt.Errorf("$ref %s at %s does not resolve", quoteSafe(ref), loc))
				continue
			}
			to = "#" + frag
		} else if p, ok := anchors[frag]; ok {
			to = p
		} else {
			errs = append(errs, fmt.Errorf("$ref %s at %s names no $anchor of the schema", quoteSafe(ref), loc))
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

// refCycle finds a cycle of schema locations linked by $ref or an in-place
// applicator; nil when there is none.
func refCycle(doc any, target map[string]string) []string {
	edges := func(loc string) []string {
		var out []string
		if to, ok := target[loc]; ok {
			out = append(out, to)
		}
		v, _ := resolvePointer(doc, strings.TrimPrefix(loc, "#"))
		m, _ := v.(map[string]any)
		for k, c := range m {
			if !inPlaceKeys[k] {
				continue
			}
			switch x := c.(type) {
			case map[string]any:
				if k == "dependentSchemas" {
					for dk := range x {
						out = append(out, loc+"/"+k+"/"+escapePointer(dk))
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

func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// resolvePointer follows a JSON pointer ("" is the root) in doc.
func resolvePointer(doc any, ptr string) (any, bool) {
	if ptr == "" {
		return doc, true
	}
	if !strings.HasPrefix(ptr, "/") {
		return nil, false
	}
	cur := doc
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch x := cur.(type) {
		case map[string]any:
			v, ok := x[tok]
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(x) {
				return nil, false
			}
			cur = x[i]
		default:
			return nil, false
		}
	}
	return cur, true
}
