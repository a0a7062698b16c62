package worker

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/funcmcp/funcmcp/binding"
	"github.com/funcmcp/funcmcp/internal/parallel"
	"github.com/funcmcp/funcmcp/metadata"
)

// Options configure an [App]. A nil *Options means the defaults.
type Options struct {
	// Stdout and Stderr receive the emit-metadata and serve messages, and
	// panic stacks (Stderr). nil means os.Stdout / os.Stderr.
	Stdout, Stderr io.Writer
	// Logger receives the server's diagnostics (one debug record per
	// invocation). nil means a text logger on Stderr at level Info.
	Logger *slog.Logger
	// ShutdownTimeout bounds the graceful shutdown of ListenAndServe and
	// Serve. 0 means 10 seconds.
	ShutdownTimeout time.Duration
	// MaxBodyBytes bounds an invocation request body; larger bodies get 413.
	// 0 means 32 MiB.
	MaxBodyBytes int64

	// OutputValidation is the app's output validation; "" means the value
	// of extensions.mcp.outputValidation in host.json, else strict. A tool
	// overrides it with [ToolBuilder.WithOutputValidation].
	OutputValidation OutputValidation
	// TextCopy is the app's text copy of structuredContent; "" means the
	// value of extensions.mcp.textCopy in host.json, else json. A tool
	// overrides it with [ToolBuilder.WithTextCopy].
	TextCopy TextCopy
	// ClientRequestTimeout bounds how long a request to the MCP client
	// (ToolContext.Elicit, CreateMessage, ListRoots) waits for its answer;
	// 0 means DefaultClientRequestTimeout.
	ClientRequestTimeout time.Duration
	// InputValidation is the app's validation of a call's arguments against
	// the tool's input schema, before the handler runs; "" means the value
	// of extensions.mcp.inputValidation in host.json, else strict (an
	// isError result naming the tool and the JSON pointer of each problem).
	// A tool overrides it with [ToolBuilder.WithInputValidation].
	InputValidation OutputValidation
	// ScriptRoot is the folder whose host.json the server reads (the
	// output settings above); "" means $FUNCTIONS_APP_ROOT_PATH, which the
	// Functions host sets, else the current directory. A missing host.json
	// sets nothing.
	ScriptRoot string
	// Hooks wrap every handler run (see [Hook]), the first outermost.
	Hooks []Hook
	// Telemetry instruments the app while it serves under a host; nil
	// means none. github.com/funcmcp/funcmcp/worker/otel is OpenTelemetry.
	Telemetry Telemetry
}

// App is a function app whose functions are MCP tools. Configure tools with
// [App.ConfigureMcpTool] or [AddTool], then call [App.Main] (or use
// [App.EmitMetadata] and [App.Handler] directly).
type App struct {
	stdout, stderr  io.Writer
	logger          *slog.Logger
	shutdownTimeout time.Duration
	maxBody         int64
	clientTimeout   time.Duration           // of a request to the MCP client
	output          metadata.OutputSettings // from Options
	scriptRoot      string
	hooks           []Hook                          // around every handler run
	telemetry       Telemetry                       // nil: none
	wrap            func(http.Handler) http.Handler // the started telemetry's, nil: none

	// schemas compiles each distinct schema text once for the builders'
	// checks, the projections and the rules read back from function.json.
	// It defers (binding.Compiler.Defer): a schema the quick checks vouch
	// for is checked with the same rules and errors at start but compiled
	// only when a validation first needs it, which a value the check on
	// JSON text accepts never does; so a worker starts without compiling
	// the schemas of its tools.
	schemas binding.Compiler

	mu        sync.Mutex
	tools     []*ToolBuilder
	byName    map[string]*ToolBuilder
	resources []*ResourceBuilder
	prompts   []*PromptBuilder
}

// New returns an empty app.
func New(opts *Options) *App {
	var o Options
	if opts != nil {
		o = *opts
	}
	a := &App{stdout: o.Stdout, stderr: o.Stderr, logger: o.Logger,
		shutdownTimeout: o.ShutdownTimeout, maxBody: o.MaxBodyBytes, clientTimeout: o.ClientRequestTimeout, byName: map[string]*ToolBuilder{},
		output:     metadata.OutputSettings{Validation: o.OutputValidation, InputValidation: o.InputValidation, TextCopy: o.TextCopy},
		scriptRoot: o.ScriptRoot, hooks: slices.Clone(o.Hooks), telemetry: o.Telemetry,
		schemas: binding.Compiler{Defer: true}}
	if a.stdout == nil {
		a.stdout = os.Stdout
	}
	if a.stderr == nil {
		a.stderr = os.Stderr
	}
	if a.logger == nil {
		a.logger = slog.New(slog.NewTextHandler(a.stderr, nil))
	}
	if a.shutdownTimeout <= 0 {
		a.shutdownTimeout = 10 * time.Second
	}
	if a.maxBody <= 0 {
		a.maxBody = 32 << 20
	}
	return a
}

// ConfigureMcpTool returns the builder of the tool called toolName (matched
// exactly, case-sensitively), creating it on first use: repeated calls with
// the same name configure the same tool.
func (a *App) ConfigureMcpTool(toolName string) *ToolBuilder {
	a.mu.Lock()
	defer a.mu.Unlock()
	if b, ok := a.byName[toolName]; ok {
		return b
	}
	b := &ToolBuilder{app: a, name: toolName}
	a.byName[toolName] = b
	a.tools = append(a.tools, b)
	return b
}

// tool is one built tool, ready to serve.
type tool struct {
	name        string
	function    string
	outputField string
	invoke      invoker
	// rules is the tool as the host loads it from the emitted function.json
	// (schemas compiled once): the worker checks its results with it.
	rules *binding.Tool
}

// compiled is the result of a successful build.
type compiled struct {
	functions []*metadata.Function // sorted by name
	byFunc    map[string]*tool     // lower-case function name → tool
	output    metadata.OutputSettings
	// kinds are the resources, templates, MCP App views and prompts
	// (kinds.go), by lower-case function name, and registry checks them as
	// the host registers them.
	kinds    map[string]*served
	registry binding.Registry
}

// build checks every tool and emits every function; all problems are
// returned together, each a *ConfigError.
func (a *App) build() (*compiled, error) {
	a.mu.Lock()
	builders := slices.Clone(a.tools)
	a.mu.Unlock()

	// The names are checked in order (a duplicate is the later of two);
	// then the tools that passed are built on every CPU, each on its own:
	// their schemas are decoded, checked and compiled, the most of a
	// start's work. The problems keep the builders' order.
	c := &compiled{byFunc: map[string]*tool{}}
	problems := make([][]error, len(builders))
	var good []int
	funcOwner := map[string]string{} // lower-case function → tool
	nameOwner := map[string]string{} // lower-case tool name → tool
	for i, b := range builders {
		fn := b.function()
		fail := func(err error) { problems[i] = append(problems[i], &ConfigError{Tool: b.name, Function: fn, Err: err}) }
		bad := false
		if b.name == "" {
			fail(ErrEmptyToolName)
			bad = true
		} else if err := binding.CheckToolName(b.name); err != nil {
			fail(&ruleError{rule: ErrInvalidToolName, msg: err.Error(), err: err})
			bad = true
		} else if other, ok := nameOwner[strings.ToLower(b.name)]; ok {
			fail(ruleErr(ErrDuplicateToolName, "%v: %q", ErrDuplicateToolName, other))
			bad = true
		} else {
			nameOwner[strings.ToLower(b.name)] = b.name
		}
		if fn != "" {
			if err := metadata.ValidateFunctionName(fn); err != nil {
				msg := err.Error()
				if b.functionName == "" {
					msg += " (the function name defaults to the tool name; set one with WithFunctionName)"
				}
				fail(&ruleError{rule: ErrInvalidFunctionName, msg: msg, err: err})
				bad = true
			} else if other, ok := funcOwner[strings.ToLower(fn)]; ok {
				fail(ruleErr(ErrDuplicateFunction, "function %q is already used by tool %q", fn, other))
				bad = true
			} else {
				funcOwner[strings.ToLower(fn)] = b.name
			}
		}
		switch {
		case b.handlers == 0 && !handlerExplained(b.errs):
			fail(ErrNoHandler)
			bad = true
		case b.handlers > 1:
			fail(ruleErr(ErrTwoHandlers, "%v (%d given): tool name %q is given a handler %d times (AddTool or Handle): each tool needs a name of its own",
				ErrTwoHandlers, b.handlers, b.name, b.handlers))
			bad = true
		}
		for _, err := range b.errs {
			fail(err)
			bad = true
		}
		if !bad {
			good = append(good, i)
		}
	}
	built := make([]*tool, len(builders))
	fns := make([]*metadata.Function, len(builders))
	parallel.For(len(good), func(k int) {
		i := good[k]
		b := builders[i]
		var err error
		if built[i], fns[i], err = a.buildTool(b); err != nil {
			problems[i] = append(problems[i], &ConfigError{Tool: b.name, Function: b.function(), Err: err})
		}
	})
	var errs []error
	for i := range builders {
		errs = append(errs, problems[i]...)
		if t := built[i]; t != nil {
			c.functions = append(c.functions, fns[i])
			c.byFunc[strings.ToLower(t.function)] = t
		}
	}
	errs = append(errs, a.buildKinds(c, builders, funcOwner)...)
	errs = append(errs, checkViews(c, builders)...)
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	sort.Slice(c.functions, func(i, j int) bool { return c.functions[i].Name < c.functions[j].Name })
	return c, nil
}

// buildTool builds one tool whose names passed: its function.json, read
// back as the host will read it (the same rules decide whether it can be
// served, and the same compiled schemas check its results).
func (a *App) buildTool(b *ToolBuilder) (*tool, *metadata.Function, error) {
	fn := b.function()
	field := b.outputField
	if field == "" {
		field = DefaultOutputField
	}
	opts, wrapped, err := b.options(field)
	if err != nil {
		return nil, nil, err
	}
	opts.OutputValidation = cmp.Or(opts.OutputValidation, a.output.Validation)
	opts.InputValidation = cmp.Or(opts.InputValidation, a.output.InputValidation)
	opts.TextCopy = cmp.Or(opts.TextCopy, a.output.TextCopy)
	invoke := b.invoke
	if wrapped {
		invoke = projecting(invoke, field)
	}
	f, err := metadata.NewToolFunction(fn, opts)
	if err != nil {
		return nil, nil, fmt.Errorf("building function.json: %w", err)
	}
	rules, err := a.schemas.LoadTool(f, f.ToolTriggers()[0], "")
	if err != nil {
		return nil, nil, err
	}
	if err := checkEncodedSize(f); err != nil {
		return nil, nil, err
	}
	return &tool{name: b.name, function: fn, outputField: field, invoke: invoke, rules: rules}, f, nil
}

// checkViews applies the host's MCP App rule (binding.Registry.CheckToolView)
// to every tool built: a tool whose metadata names a view
// (_meta.ui.resourceUri, set by hand with WithMetadata) needs a resource
// that serves it, as AsMcpApp adds.
func checkViews(c *compiled, builders []*ToolBuilder) []error {
	var errs []error
	for _, b := range builders {
		t := c.byFunc[strings.ToLower(b.function())]
		if t == nil || t.name != b.name {
			continue
		}
		if _, viewBuilt := c.kinds[strings.ToLower(metadata.AppViewFunctionName(t.name))]; b.mcpApp != nil && !viewBuilt {
			continue // buildKinds said why the view is not there
		}
		if err := c.registry.CheckToolView(t.rules.Trigger); err != nil {
			var te *binding.ToolError
			if errors.As(err, &te) {
				err = te.Err
			}
			errs = append(errs, &ConfigError{Tool: t.name, Function: t.function, Err: ruleErr(ErrApp, "%v: %v", ErrApp, err)})
		}
	}
	return errs
}

// checkEncodedSize applies the host's function.json size rule to f.
func checkEncodedSize(f *metadata.Function) error {
	size, err := f.EncodedSize()
	if err != nil {
		return fmt.Errorf("encoding function.json: %w", err)
	}
	if err := metadata.CheckFileSize(int64(size), metadata.DefaultMaxFunctionFileBytes); err != nil {
		return fmt.Errorf("function.json would be %w: the host would not read it", err)
	}
	return nil
}

// handlerExplained reports whether a builder without a handler has a
// problem that says why already: a nil handler, or a typed prompt whose
// input type was refused (AddPrompt then adds no handler).
func handlerExplained(errs []error) bool {
	for _, err := range errs {
		if errors.Is(err, ErrNoHandler) || errors.Is(err, ErrPromptInputType) {
			return true
		}
	}
	return false
}

// DefaultOutputField is the field a result is wrapped in when the tool's
// output schema is not an object schema.
const DefaultOutputField = binding.DefaultOutputField

// Build checks the configuration of every tool. It returns every problem of
// every tool, joined; each is a *ConfigError naming the tool and the rule.
func (a *App) Build() error {
	_, err := a.build()
	return err
}

// Functions returns the function of every tool, sorted by name, as
// [App.EmitMetadata] would write them. On error it returns nil and every
// problem (see [App.Build]).
func (a *App) Functions() ([]*metadata.Function, error) {
	c, err := a.build()
	if err != nil {
		return nil, err
	}
	return c.functions, nil
}

// Prepared is an app built once for a server in its own process (package
// serve): its functions and its handler come from the same build, which
// costs a start-up as much as the rest of it together.
type Prepared struct {
	app *App
	c   *compiled
}

// Prepare builds the app for [Prepared.Functions] and [Prepared.Handler].
// Tools changed or added after it are not seen by them. On error it
// returns every problem (see [App.Build]).
func (a *App) Prepare() (*Prepared, error) {
	c, err := a.build()
	if err != nil {
		return nil, err
	}
	return &Prepared{app: a, c: c}, nil
}

// Functions is [App.Functions] of the prepared build.
func (p *Prepared) Functions() []*metadata.Function { return p.c.functions }

// Schemas is the compiler the build read its tools' schemas with, for a
// host in the same process to share (host.Options.Schemas): each schema
// text is then read once in the process.
func (p *Prepared) Schemas() *binding.Compiler { return &p.app.schemas }

// Handler is [App.Handler] of the prepared build: make it once the app's
// environment is set and its telemetry started, as for App.Handler.
func (p *Prepared) Handler() http.Handler { return p.app.handler(p.app.prepareBuilt(p.c)) }

// EmitMetadata writes dir/<function>/function.json for every tool. On a
// configuration error it writes nothing and returns every problem. It only
// writes: function folders of tools that no longer exist are left alone.
//
// Typical use, next to main:
//
//	//go:generate go run . emit-metadata ../dist/app
func (a *App) EmitMetadata(dir string) error {
	fns, err := a.Functions()
	if err != nil {
		return err
	}
	_, err = metadata.WriteFunctions(dir, fns)
	return err
}
