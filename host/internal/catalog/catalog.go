package catalog

import (
	"errors"
	"sort"
	"strings"

	"github.com/funcmcp/funcmcp/binding"
	"github.com/funcmcp/funcmcp/metadata"
)

// Limits bound what loading an app and calling its tools may cost. Each
// must be set (the host fills in its defaults).
type Limits struct {
	// FileBytes bounds a function.json (only regular files are read).
	FileBytes int64
	// Schema bounds each schema of a tool trigger and the compile time of
	// one tool's schemas (binding applies them).
	Schema binding.Limits
	// ArgumentBytes, ArgumentDepth and ArgumentKeys bound a call's
	// arguments: total JSON size, nesting, object keys.
	ArgumentBytes, ArgumentDepth, ArgumentKeys int
}

// FunctionStatus is one function of the app as GET /admin/host/status reports it.
type FunctionStatus struct {
	Name     string `json:"name"`
	Trigger  string `json:"trigger,omitempty"`
	Tool     string `json:"tool,omitempty"`
	Resource string `json:"resource,omitempty"` // the URI or URI template
	Prompt   string `json:"prompt,omitempty"`
	Served   bool   `json:"served"`
	// Disabled says why the function is left out, as the Functions host
	// leaves it out ("" when it is not).
	Disabled string `json:"disabled,omitempty"`
	Error    string `json:"error,omitempty"`
}

// Catalog is the loaded app. It is read-only once Load returns, and safe
// for concurrent use.
type Catalog struct {
	lim      Limits
	compiler *binding.Compiler // the tools' schemas
	tools    tools
	fns      functions
	funcs    []FunctionStatus // by function name
	failures []error          // one per function or tool not served, by function name
}

// Load reads every function of the app under root and loads what it
// serves: tools, resources, resource templates and prompts, each with the
// binding function the worker SDK applies before it emits them. It fails
// only when the script root cannot be read or the lists cannot be encoded;
// a function that fails is recorded instead. setting looks up an app
// setting (for AzureWebJobs.<name>.Disabled); nil means none.
func Load(root string, lim *Limits, setting func(name string) (string, bool)) (*Catalog, error) {
	fns, fnErrs, err := metadata.ReadApp(root, &metadata.ReadOptions{MaxFileBytes: lim.FileBytes})
	if err != nil {
		return nil, err
	}
	return loadRead(root, fns, fnErrs, lim, nil, setting)
}

// FromFunctions is [Load] over functions already read (an app's own
// metadata, in the process that serves it) rather than the function
// folders under root; root still names their files in messages. fns must
// be sorted by name, as [metadata.ReadApp] returns them. schemas, when it
// [binding.Compiler.Shares] lim's schema limits, is the compiler the app
// built its tools with: each schema text it has read is not read again.
func FromFunctions(root string, fns []*metadata.Function, lim *Limits, schemas *binding.Compiler, setting func(name string) (string, bool)) (*Catalog, error) {
	return loadRead(root, fns, nil, lim, schemas, setting)
}

// loadRead loads fns, recording fnErrs (functions that could not be read).
func loadRead(root string, fns []*metadata.Function, fnErrs []error, lim *Limits, schemas *binding.Compiler, setting func(name string) (string, bool)) (*Catalog, error) {
	c := &Catalog{lim: *lim, compiler: &binding.Compiler{Limits: lim.Schema, Defer: true}}
	if schemas.Shares(lim.Schema) {
		c.compiler = schemas
	}
	for _, e := range fnErrs {
		st := FunctionStatus{Error: e.Error()}
		var fe *metadata.FunctionError
		if errors.As(e, &fe) {
			st.Name = fe.Function
		}
		c.funcs = append(c.funcs, st)
		c.failures = append(c.failures, e)
	}
	var rest []*metadata.Function // functions of no MCP kind
	enabled := fns[:0:0]
	for _, fn := range fns {
		if off, why := fn.Disabled(setting); off {
			c.funcs = append(c.funcs, FunctionStatus{Name: fn.Name, Trigger: triggerType(fn), Disabled: why})
			continue
		}
		enabled = append(enabled, fn)
		if len(fn.ToolTriggers()) == 0 && len(fn.ResourceTriggers()) == 0 && len(fn.PromptTriggers()) == 0 {
			rest = append(rest, fn)
		}
	}
	fns = enabled
	c.loadFunctions(root, fns)
	if err := c.loadTools(root, fns); err != nil {
		return nil, err
	}
	for _, fn := range rest {
		c.funcs = append(c.funcs, FunctionStatus{Name: fn.Name, Trigger: triggerType(fn)})
	}
	sort.SliceStable(c.funcs, func(i, j int) bool { return c.funcs[i].Name < c.funcs[j].Name })
	sort.SliceStable(c.failures, func(i, j int) bool {
		return failedFunction(c.failures[i]) < failedFunction(c.failures[j])
	})
	return c, nil
}

// CompileDeferred compiles the schemas Load checked but left to compile
// (see binding.Compiler.Defer): every one a call may need, so that calls
// never compile. Until it returns, a call that needs a schema not yet
// compiled compiles it. It returns how many it compiled.
func (c *Catalog) CompileDeferred() int { return c.compiler.CompileDeferred() }

// Deferred reports how many schemas wait for CompileDeferred.
func (c *Catalog) Deferred() int { return c.compiler.Deferred() }

// Functions returns every function of the app, in name order, served or
// not; the caller may modify the copy.
func (c *Catalog) Functions() []FunctionStatus { return append([]FunctionStatus{}, c.funcs...) }

// Failures returns one error per function or tool not served, in function
// order: a *binding.ToolError or a *metadata.FunctionError. The slice must
// not be modified.
func (c *Catalog) Failures() []error { return c.failures }

// record notes a function whose MCP function loaded (err nil) or not.
func (c *Catalog) record(st FunctionStatus, err error) {
	if err != nil {
		st.Error = err.Error()
		c.failures = append(c.failures, err)
	} else {
		st.Served = true
	}
	c.funcs = append(c.funcs, st)
}

// triggerType is the type of fn's first trigger binding, "" when it has none.
func triggerType(fn *metadata.Function) string {
	for _, b := range fn.Bindings {
		if strings.HasSuffix(strings.ToLower(b.Type()), "trigger") {
			return b.Type()
		}
	}
	return ""
}

// failedFunction is the function a load failure is about.
func failedFunction(err error) string {
	var te *binding.ToolError
	if errors.As(err, &te) {
		return te.Function
	}
	var le *binding.LoadError
	if errors.As(err, &le) {
		return le.Function
	}
	var fe *metadata.FunctionError
	if errors.As(err, &fe) {
		return fe.Function
	}
	return ""
}
