package host

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	goruntime "runtime"
	"sort"
	"strings"
	"sync"

	"github.com/funcmcp/funcmcp/binding"
	"github.com/funcmcp/funcmcp/host/internal/mcp"
	"github.com/funcmcp/funcmcp/metadata"
)

// servedTool is one tool the host serves, with everything a call needs
// prepared at load.
type servedTool struct {
	name     string // the advertised tool name
	function string // the function (folder) name: POST /{function}
	tool     *binding.Tool
	// dataKey is the trigger binding name: the invocation's Data key.
	dataKey string
	// path is "/" + the escaped function name.
	path string
	// failureText is the text block of the isError result of a failed invocation.
	failureText json.RawMessage
	// paramHeaders are the input properties mirrored into Mcp-Param-*
	// headers by 2026-07-28 clients (x-mcp-header).
	paramHeaders []mcp.ParamHeader
	// description is the binding's description; hasDescription is false
	// when it is null, and the advertised tool then has none.
	description    string
	hasDescription bool
}

// FunctionStatus is one function of the app as GET /admin/host/status reports it.
type FunctionStatus struct {
	Name    string `json:"name"`
	Trigger string `json:"trigger,omitempty"`
	Tool    string `json:"tool,omitempty"`
	Served  bool   `json:"served"`
	Error   string `json:"error,omitempty"`
}

// registry is the loaded app: the served tools and what failed.
type registry struct {
	tools    []*servedTool          // sorted by tool name
	byName   map[string]*servedTool // lower-case tool name
	list     json.RawMessage        // the tools/list "tools" array for legacy clients, encoded once
	modern   json.RawMessage        // the same for MCP 2026-07-28 clients (natural output schemas)
	funcs    []FunctionStatus       // in function order
	failures []error                // one per function or tool that is not served
}

// toolJSON is the MCP Tool object advertised in tools/list.
type toolJSON struct {
	Name         string          `json:"name"`
	Title        string          `json:"title,omitempty"`
	Description  *string         `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	Meta         json.RawMessage `json:"_meta,omitempty"`
}

// loadRegistry reads every function of the app under root and loads its tool.
func loadRegistry(root string, lim *appLimits) (*registry, error) {
	fns, fnErrs, err := metadata.ReadApp(root, &metadata.ReadOptions{MaxFileBytes: lim.fileBytes})
	if err != nil {
		return nil, err
	}
	r := &registry{byName: make(map[string]*servedTool, len(fns))}
	for _, e := range fnErrs {
		st := FunctionStatus{Error: e.Error()}
		var fe *metadata.FunctionError
		if errors.As(e, &fe) {
			st.Name = fe.Function
		}
		r.funcs = append(r.funcs, st)
		r.failures = append(r.failures, e)
	}
	loaded := loadTools(root, fns, lim)
	for i, fn := range fns {
		r.add(root, fn, loaded[i])
	}
	sort.SliceStable(r.funcs, func(i, j int) bool { return r.funcs[i].Name < r.funcs[j].Name })
	sort.SliceStable(r.failures, func(i, j int) bool {
		return failedFunction(r.failures[i]) < failedFunction(r.failures[j])
	})
	sort.Slice(r.tools, func(i, j int) bool {
		a, b := strings.ToLower(r.tools[i].name), strings.ToLower(r.tools[j].name)
		if a != b {
			return a < b
		}
		return r.tools[i].name < r.tools[j].name
	})
	if err := r.encodeList(); err != nil {
		return nil, err
	}
	return r, nil
}

// loadedTool is the outcome of binding.LoadTool for one function.
type loadedTool struct {
	tool *binding.Tool
	err  error
}

// loadTools loads the tool of every function with exactly one tool trigger,
// on all CPUs, compiling each distinct schema text once. The result is
// indexed like fns.
func loadTools(root string, fns []*metadata.Function, lim *appLimits) []loadedTool {
	out := make([]loadedTool, len(fns))
	compiler := binding.Compiler{Limits: lim.schema}
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(goruntime.GOMAXPROCS(0), len(fns)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				fn := fns[i]
				if triggers := fn.ToolTriggers(); len(triggers) == 1 {
					file := filepath.Join(root, fn.Name, metadata.FunctionFile)
					out[i].tool, out[i].err = compiler.LoadTool(fn, triggers[0], file)
				}
			}
		}()
	}
	for i := range fns {
		next <- i
	}
	close(next)
	wg.Wait()
	return out
}

// add registers fn's tool, loaded by loadTools, if fn has one.
func (r *registry) add(root string, fn *metadata.Function, loaded loadedTool) {
	file := filepath.Join(root, fn.Name, metadata.FunctionFile)
	triggers := fn.ToolTriggers()
	if len(triggers) == 0 {
		trigger := ""
		for _, b := range fn.Bindings {
			if strings.HasSuffix(strings.ToLower(b.Type()), "trigger") {
				trigger = b.Type()
				break
			}
		}
		r.funcs = append(r.funcs, FunctionStatus{Name: fn.Name, Trigger: trigger})
		return
	}
	toolName, _ := triggers[0].LookupString(metadata.KeyToolName)
	st := FunctionStatus{Name: fn.Name, Trigger: triggers[0].Type(), Tool: toolName}
	fail := func(err error) {
		st.Error = err.Error()
		r.funcs = append(r.funcs, st)
		r.failures = append(r.failures, err)
	}
	if len(triggers) > 1 {
		fail(&binding.ToolError{Function: fn.Name, Tool: toolName, File: file,
			Err: fmt.Errorf("the function has %d mcpToolTrigger bindings; a function has exactly one trigger", len(triggers))})
		return
	}
	tool, err := loaded.tool, loaded.err
	if err != nil {
		fail(err)
		return
	}
	name := tool.Trigger.ToolName
	key := strings.ToLower(name)
	if prev, dup := r.byName[key]; dup {
		fail(&binding.ToolError{Function: fn.Name, Tool: name, File: file,
			Err: fmt.Errorf("tool name %q is already registered by function %q (tool names are case-insensitive)", name, prev.function)})
		return
	}
	dataKey := tool.Trigger.Name
	if dataKey == "" {
		dataKey = metadata.TriggerBindingName
	}
	t := &servedTool{
		name:        name,
		function:    fn.Name,
		tool:        tool,
		dataKey:     dataKey,
		path:        "/" + fn.Name, // function names are [A-Za-z0-9_-]: nothing to escape
		failureText: metadata.TextContent(fmt.Sprintf("An error occurred invoking '%s'.", name)),
	}
	t.description, t.hasDescription = triggers[0].LookupString(metadata.KeyDescription)
	t.paramHeaders = paramHeaders(tool.Input.JSON())
	r.tools = append(r.tools, t)
	r.byName[key] = t
	st.Served = true
	r.funcs = append(r.funcs, st)
}

// encodeList builds the tools/list arrays once: the one legacy clients see
// (object output schemas) and the one 2026-07-28 clients see (natural output
// schemas, SEP-2106). Both are in tool-name order.
func (r *registry) encodeList() error {
	var err error
	if r.list, err = r.encodeListFor(mcp.LatestVersion); err != nil {
		return err
	}
	r.modern, err = r.encodeListFor(mcp.ModernVersion)
	return err
}

func (r *registry) encodeListFor(version string) (json.RawMessage, error) {
	items := make([]toolJSON, len(r.tools))
	for i, t := range r.tools {
		tr := t.tool.Trigger
		item := toolJSON{Name: t.name, Title: tr.Title, Meta: tr.AdvertisedMeta()}
		if t.hasDescription {
			item.Description = &t.description
		}
		item.InputSchema = t.tool.Input.JSON()
		item.OutputSchema = t.tool.AdvertisedOutputSchema(version)
		items[i] = item
	}
	data, err := metadata.Marshal(items)
	if err != nil {
		return nil, fmt.Errorf("encoding the tool list: %w", err)
	}
	return data, nil
}

// listFor returns the tool list a client speaking version sees.
func (r *registry) listFor(version string) json.RawMessage {
	if binding.NeedsProjection(version) {
		return r.list
	}
	return r.modern
}

// lookup finds a tool by its exact name.
func (r *registry) lookup(name string) *servedTool {
	if t, ok := r.byName[strings.ToLower(name)]; ok && t.name == name {
		return t
	}
	return nil
}

// failedFunction is the function a load failure is about.
func failedFunction(err error) string {
	var te *binding.ToolError
	if errors.As(err, &te) {
		return te.Function
	}
	var fe *metadata.FunctionError
	if errors.As(err, &fe) {
		return fe.Function
	}
	return ""
}

// splitErrors flattens joined errors into their parts.
func splitErrors(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, splitErrors(e)...)
		}
		return out
	}
	return []error{err}
}
