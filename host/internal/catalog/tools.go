package catalog

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/funcmcp/funcmcp/binding"
	"github.com/funcmcp/funcmcp/internal/jsonx"
	"github.com/funcmcp/funcmcp/internal/parallel"
	"github.com/funcmcp/funcmcp/metadata"
)

// Tool is one tool the host serves, with everything a call needs prepared
// at load. Its fields are read-only.
type Tool struct {
	// Name is the advertised tool name.
	Name string
	// Function is the function (folder) name: the worker serves it at
	// POST /{Function}.
	Function string
	// Binding is the compiled trigger: schemas, output settings.
	Binding *binding.Tool
	// DataKey is the trigger binding's name: the invocation's Data key.
	DataKey string
	// FailureText is the text block of the isError result of a failed
	// invocation: "An error occurred invoking '<tool>'.".
	FailureText json.RawMessage

	// description is the binding's description; hasDescription is false
	// when it is null, and the advertised tool then has none.
	description    string
	hasDescription bool
}

// tools are the served tools and their list arrays.
type tools struct {
	all    []*Tool          // sorted by tool name
	byName map[string]*Tool // lower-case tool name
	// projected is the tools/list array for clients before
	// binding.ProjectedRevision (object output schemas), natural the one
	// for later clients (natural output schemas, SEP-2106); both encoded once.
	projected, natural json.RawMessage
}

// projectedFamily is a revision of the family that sees object output
// schemas: any revision before binding.ProjectedRevision.
const projectedFamily = "2025-11-25"

// Tools returns the served tools, sorted by name; the slice must not be
// modified.
func (c *Catalog) Tools() []*Tool { return c.tools.all }

// Lookup finds a tool by its exact name; nil when none is served.
func (c *Catalog) Lookup(name string) *Tool {
	if t, ok := c.tools.byName[strings.ToLower(name)]; ok && t.Name == name {
		return t
	}
	return nil
}

// ToolsList returns the tools/list "tools" array a client speaking the MCP
// revision version sees: the same bytes for every revision of a family, to
// be spliced into replies as they are and never modified.
func (c *Catalog) ToolsList(version string) json.RawMessage {
	if binding.NeedsProjection(version) {
		return c.tools.projected
	}
	return c.tools.natural
}

// loadedTool is the outcome of loadTool for one function.
type loadedTool struct {
	tool *binding.Tool
	err  error
}

// loadTools loads the tools of fns (the functions with tool triggers),
// records them and encodes the list arrays.
func (c *Catalog) loadTools(root string, fns []*metadata.Function) error {
	c.tools.byName = make(map[string]*Tool, len(fns))
	loaded := c.compileTools(root, fns)
	for i, fn := range fns {
		if len(fn.ToolTriggers()) > 0 {
			c.addTool(root, fn, loaded[i])
		}
	}
	sort.Slice(c.tools.all, func(i, j int) bool {
		a, b := strings.ToLower(c.tools.all[i].Name), strings.ToLower(c.tools.all[j].Name)
		if a != b {
			return a < b
		}
		return c.tools.all[i].Name < c.tools.all[j].Name
	})
	var projErr, natErr error
	var wg sync.WaitGroup
	wg.Go(func() { c.tools.projected, projErr = c.encodeToolList(projectedFamily) })
	c.tools.natural, natErr = c.encodeToolList(binding.ProjectedRevision)
	wg.Wait()
	return errors.Join(projErr, natErr)
}

// compileTools loads the tool of every function with exactly one tool
// trigger, on all CPUs, checking each distinct schema text once (the good
// ones are compiled later, see CompileDeferred). The result is indexed like
// fns.
func (c *Catalog) compileTools(root string, fns []*metadata.Function) []loadedTool {
	out := make([]loadedTool, len(fns))
	compiler := c.compiler
	parallel.For(len(fns), func(i int) {
		fn := fns[i]
		if triggers := fn.ToolTriggers(); len(triggers) == 1 {
			file := filepath.Join(root, fn.Name, metadata.FunctionFile)
			out[i].tool, out[i].err = loadTool(compiler, fn, triggers[0], file)
		}
	})
	return out
}

// addTool records fn's tool, loaded by compileTools.
func (c *Catalog) addTool(root string, fn *metadata.Function, loaded loadedTool) {
	file := filepath.Join(root, fn.Name, metadata.FunctionFile)
	triggers := fn.ToolTriggers()
	toolName, _ := triggers[0].LookupString(metadata.KeyToolName)
	st := FunctionStatus{Name: fn.Name, Trigger: triggers[0].Type(), Tool: toolName}
	if len(triggers) > 1 {
		c.record(st, &binding.ToolError{Function: fn.Name, Tool: toolName, File: file,
			Err: fmt.Errorf("the function has %d mcpToolTrigger bindings; a function has exactly one trigger", len(triggers))})
		return
	}
	tool, err := loaded.tool, loaded.err
	if err == nil {
		// The MCP App rule the worker's Build applies too.
		err = c.fns.reg.CheckToolView(tool.Trigger)
	}
	if err != nil {
		c.record(st, err)
		return
	}
	name := tool.Trigger.ToolName
	key := strings.ToLower(name)
	if prev, dup := c.tools.byName[key]; dup {
		c.record(st, &binding.ToolError{Function: fn.Name, Tool: name, File: file,
			Err: fmt.Errorf("tool name %q is already registered by function %q (tool names are case-insensitive)", name, prev.Function)})
		return
	}
	dataKey := tool.Trigger.Name
	if dataKey == "" {
		dataKey = metadata.TriggerBindingName
	}
	t := &Tool{
		Name:        name,
		Function:    fn.Name,
		Binding:     tool,
		DataKey:     dataKey,
		FailureText: metadata.TextContent(fmt.Sprintf("An error occurred invoking '%s'.", name)),
	}
	t.description, t.hasDescription = triggers[0].LookupString(metadata.KeyDescription)
	c.tools.all = append(c.tools.all, t)
	c.tools.byName[key] = t
	c.record(st, nil)
}

// toolJSON is the MCP Tool object advertised in tools/list.
type toolJSON struct {
	Name         string          `json:"name"`
	Title        string          `json:"title,omitempty"`
	Description  *string         `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	// Annotations and Icons are funcmcp keys of the trigger (the Azure
	// Functions host does not advertise them).
	Annotations json.RawMessage `json:"annotations,omitempty"`
	Icons       []metadata.Icon `json:"icons,omitempty"`
	Meta        json.RawMessage `json:"_meta,omitempty"`
}

// encodeToolList encodes the tools/list array clients speaking version see:
// with thousands of tools, in parts on every CPU, joined into the bytes
// one encoding of the whole array gives.
func (c *Catalog) encodeToolList(version string) (json.RawMessage, error) {
	items := c.toolItems(version)
	if len(items) == 0 {
		return json.RawMessage(`[]`), nil
	}
	const partSize = 500
	// Each part starts with the '[' or ',' before its first entry; the
	// last ends with ']'. One part is the list itself.
	parts := make([][]byte, (len(items)+partSize-1)/partSize)
	errs := make([]error, len(parts))
	parallel.For(len(parts), func(p int) {
		part := items[p*partSize : min((p+1)*partSize, len(items))]
		size := 2
		for i := range part {
			size += sizeHint(&part[i])
		}
		data := make([]byte, 0, size)
		for i := range part {
			if i == 0 && p == 0 {
				data = append(data, '[')
			} else {
				data = append(data, ',')
			}
			var err error
			if data, err = appendTool(data, &part[i]); err != nil {
				errs[p] = err
				return
			}
		}
		if p == len(parts)-1 {
			data = append(data, ']')
		}
		parts[p] = data
	})
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("encoding the tool list: %w", err)
	}
	if len(parts) == 1 {
		return parts[0], nil
	}
	size := 0
	for _, p := range parts {
		size += len(p)
	}
	out := make([]byte, 0, size)
	for _, p := range parts {
		out = append(out, p...)
	}
	return out, nil
}

// appendTool appends t as metadata.Marshal encodes it, without reflection:
// the schemas, most of the bytes, are compact already and appended as they
// are (jsonx.AppendCompact checks them, as encoding/json compacts a
// json.RawMessage).
func appendTool(dst []byte, t *toolJSON) ([]byte, error) {
	dst = append(dst, `{"name":`...)
	dst = metadata.AppendJSONString(dst, t.Name)
	if t.Title != "" {
		dst = append(dst, `,"title":`...)
		dst = metadata.AppendJSONString(dst, t.Title)
	}
	if t.Description != nil {
		dst = append(dst, `,"description":`...)
		dst = metadata.AppendJSONString(dst, *t.Description)
	}
	var err error
	raw := func(key string, v json.RawMessage, omitEmpty bool) {
		switch {
		case err != nil || (omitEmpty && len(v) == 0):
		case len(v) == 0:
			dst = append(append(append(dst, ',', '"'), key...), `":null`...)
		default:
			dst = append(append(append(dst, ',', '"'), key...), '"', ':')
			dst, err = jsonx.AppendCompact(dst, v)
		}
	}
	raw("inputSchema", t.InputSchema, false)
	raw("outputSchema", t.OutputSchema, true)
	raw("annotations", t.Annotations, true)
	if err == nil && len(t.Icons) > 0 {
		var icons []byte
		if icons, err = metadata.Marshal(t.Icons); err == nil {
			dst = append(append(dst, `,"icons":`...), icons...)
		}
	}
	raw("_meta", t.Meta, true)
	if err != nil {
		return dst, fmt.Errorf("tool %q: %w", t.Name, err)
	}
	return append(dst, '}'), nil
}

// sizeHint is about the length of t's entry: its texts, and room for the
// keys and the escapes of a few characters.
func sizeHint(t *toolJSON) int {
	n := 96 + len(t.Name) + len(t.Title) + len(t.InputSchema) + len(t.OutputSchema) + len(t.Annotations) + len(t.Meta) + 64*len(t.Icons)
	if t.Description != nil {
		n += len(*t.Description)
	}
	return n
}

// toolItems are the tools/list entries clients speaking version see.
func (c *Catalog) toolItems(version string) []toolJSON {
	items := make([]toolJSON, len(c.tools.all))
	for i, t := range c.tools.all {
		tr := t.Binding.Trigger
		item := toolJSON{Name: t.Name, Title: tr.Title, Annotations: tr.Annotations, Icons: tr.Icons, Meta: tr.AdvertisedMeta()}
		if t.hasDescription {
			item.Description = &t.description
		}
		item.InputSchema = t.Binding.Input.JSON()
		item.OutputSchema = t.Binding.AdvertisedOutputSchema(version)
		items[i] = item
	}
	return items
}
