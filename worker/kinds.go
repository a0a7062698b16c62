package worker

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/funcmcp/funcmcp/binding"
	"github.com/funcmcp/funcmcp/metadata"
)

// served is one resource, resource template, MCP App view or prompt of a
// built app.
type served struct {
	function string
	resource *binding.Resource // resources, templates and views
	prompt   *binding.Prompt
	// readResource serves a resource or template; view and toolName an MCP
	// App view instead.
	readResource ResourceHandler
	view         *viewConfig
	toolName     string
	getPrompt    PromptHandler
	completions  map[string]CompletionHandler
}

// loadProblem is one *binding.LoadError inside a *ConfigError: it prints
// only the reason (the ConfigError names the function already) and unwraps
// to the LoadError.
type loadProblem struct{ le *binding.LoadError }

func (p loadProblem) Error() string { return p.le.Err.Error() }
func (p loadProblem) Unwrap() error { return p.le }

// configErrs turns an error of binding (one or joined *binding.LoadError)
// into one *ConfigError per problem.
func configErrs(err error, mk func(error) *ConfigError) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, configErrs(e, mk)...)
		}
		return out
	}
	var le *binding.LoadError
	if errors.As(err, &le) {
		return []error{mk(loadProblem{le})}
	}
	return []error{mk(err)}
}

// kindBuild is the state of building the resources, views and prompts.
type kindBuild struct {
	c      *compiled
	owners map[string]string // lower-case function name → who uses it
	errs   []error
}

// claim checks a function name and reserves it for who; mk makes the
// problem. explicit says whether the name was set with WithFunctionName.
func (kb *kindBuild) claim(fn, who string, explicit bool, mk func(error) *ConfigError) bool {
	if err := metadata.ValidateFunctionName(fn); err != nil {
		msg := err.Error()
		if !explicit {
			msg += " (set one with WithFunctionName)"
		}
		kb.errs = append(kb.errs, mk(&ruleError{rule: ErrInvalidFunctionName, msg: msg, err: err}))
		return false
	}
	if other, ok := kb.owners[strings.ToLower(fn)]; ok {
		hint := ""
		if !explicit {
			hint = " (set another with WithFunctionName)"
		}
		kb.errs = append(kb.errs, mk(ruleErr(ErrDuplicateFunction, "function %q is already used by %s%s", fn, other, hint)))
		return false
	}
	kb.owners[strings.ToLower(fn)] = who
	return true
}

// handlerProblems checks that a builder got exactly one handler. name is
// what the builder is known by (the URI or the prompt name), naming it in
// the message when it was given several handlers.
func handlerProblems(handlers int, errs []error, what, name, how string) []error {
	switch {
	case handlers == 0 && !handlerExplained(errs):
		return []error{ruleErr(ErrNoHandler, "the %s has no handler: %s", what, how)}
	case handlers > 1:
		noun := "name"
		if what != binding.KindPrompt {
			noun = "URI"
		}
		return []error{ruleErr(ErrTwoHandlers, "the %s has more than one handler (%d given): %s %q is given a handler %d times: each %s needs a %s of its own",
			what, handlers, noun, name, handlers, what, noun)}
	}
	return nil
}

// buildKinds checks and emits every resource, template, MCP App view and
// prompt into c; function names must not clash with the tools'
// (funcOwner: lower-case function → tool). It returns every problem, each
// a *ConfigError.
func (a *App) buildKinds(c *compiled, tools []*ToolBuilder, funcOwner map[string]string) []error {
	a.mu.Lock()
	resources, prompts := slices.Clone(a.resources), slices.Clone(a.prompts)
	a.mu.Unlock()

	c.kinds = map[string]*served{}
	kb := &kindBuild{c: c, owners: map[string]string{}}
	for fn, tool := range funcOwner {
		kb.owners[fn] = fmt.Sprintf("tool %q", tool)
	}
	for _, b := range resources {
		kb.resource(b)
	}
	for _, t := range tools {
		if t.mcpApp != nil {
			kb.view(t)
		}
	}
	for _, b := range prompts {
		kb.prompt(b)
	}
	return kb.errs
}

func (kb *kindBuild) resource(b *ResourceBuilder) {
	fn := b.function()
	kind := binding.KindResource
	if binding.IsURITemplate(b.uri) {
		kind = binding.KindTemplate
	}
	mk := func(err error) *ConfigError { return &ConfigError{Resource: b.uri, Function: fn, Err: err, kind: kind} }
	problems := append(handlerProblems(b.handlers, b.errs, kind, b.uri, "call Handle"), b.errs...)
	if b.uri == "" {
		problems = append([]error{ErrEmptyResourceURI}, problems...)
	}
	ok := kb.claim(fn, fmt.Sprintf("%s %q", kind, b.uri), b.functionName != "", mk)
	for _, err := range problems {
		kb.errs = append(kb.errs, mk(err))
	}
	if !ok || len(problems) > 0 {
		return
	}
	f, err := metadata.NewResourceFunction(fn, b.options(fn))
	if err != nil {
		kb.errs = append(kb.errs, mk(fmt.Errorf("building function.json: %w", err)))
		return
	}
	if res := kb.loadResource(f, mk); res != nil {
		kb.add(f, &served{function: fn, resource: res, readResource: b.handler, completions: b.completions.handlers()})
	}
}

// loadResource checks a resource's function.json as funchost does and
// registers it; nil when it is refused (the errors are kept).
func (kb *kindBuild) loadResource(f *metadata.Function, mk func(error) *ConfigError) *binding.Resource {
	res, err := binding.LoadResource(f, f.Bindings[0], "")
	if err == nil {
		err = kb.c.registry.AddResource(res)
	}
	if err != nil {
		kb.errs = append(kb.errs, configErrs(err, mk)...)
		return nil
	}
	return res
}

func (kb *kindBuild) view(t *ToolBuilder) {
	fn := metadata.AppViewFunctionName(t.name)
	mk := func(err error) *ConfigError { return &ConfigError{Tool: t.name, Function: fn, Err: err} }
	problems := t.mcpApp.problems()
	for _, err := range problems {
		kb.errs = append(kb.errs, mk(err))
	}
	ok := kb.claim(fn, fmt.Sprintf("the view of MCP App tool %q", t.name), true, mk)
	if !ok || len(problems) > 0 || t.name == "" {
		return
	}
	f, err := metadata.NewAppViewFunction(t.name, t.mcpApp.view.title)
	if err != nil {
		kb.errs = append(kb.errs, mk(fmt.Errorf("building the view's function.json: %w", err)))
		return
	}
	if res := kb.loadResource(f, mk); res != nil {
		kb.add(f, &served{function: fn, resource: res, view: t.mcpApp.view, toolName: t.name})
	}
}

func (kb *kindBuild) prompt(b *PromptBuilder) {
	fn := b.function()
	mk := func(err error) *ConfigError {
		return &ConfigError{Prompt: b.name, Function: fn, Err: err, kind: binding.KindPrompt}
	}
	problems := append(handlerProblems(b.handlers, b.errs, "prompt", b.name, "call Handle or use AddPrompt"), b.errs...)
	if b.name == "" {
		problems = append([]error{ErrEmptyPromptName}, problems...)
	}
	ok := kb.claim(fn, fmt.Sprintf("prompt %q", b.name), b.functionName != "", mk)
	for _, err := range problems {
		kb.errs = append(kb.errs, mk(err))
	}
	if !ok || len(problems) > 0 {
		return
	}
	f, err := metadata.NewPromptFunction(fn, b.options())
	if err != nil {
		kb.errs = append(kb.errs, mk(fmt.Errorf("building function.json: %w", err)))
		return
	}
	p, err := binding.LoadPrompt(f, f.Bindings[0], "")
	if err == nil {
		err = kb.c.registry.AddPrompt(p)
	}
	if err != nil {
		kb.errs = append(kb.errs, configErrs(err, mk)...)
		return
	}
	kb.add(f, &served{function: fn, prompt: p, getPrompt: b.handler, completions: b.completions.handlers()})
}

func (kb *kindBuild) add(f *metadata.Function, s *served) {
	kb.c.functions = append(kb.c.functions, f)
	kb.c.kinds[strings.ToLower(f.Name)] = s
}

// checkViewFiles checks, when the server starts, that every view read from
// a file is there: a relative path is read from the app folder.
func (a *App) checkViewFiles(c *compiled) error {
	root := a.appRoot()
	var errs []error
	for _, f := range c.functions {
		s := c.kinds[strings.ToLower(f.Name)]
		if s == nil || s.view == nil || s.view.source.html != nil || s.view.source.fsys != nil {
			continue
		}
		file := s.view.source.file(root)
		st, err := os.Stat(file)
		switch {
		case err != nil:
			errs = append(errs, &ConfigError{Tool: s.toolName, Function: s.function,
				Err: ruleErr(ErrApp, "%v: the view file %s was not found (a relative path is read from the app folder: Options.ScriptRoot, $%s or the current directory): %v", ErrApp, file, metadata.EnvAppRootPath, err)})
		case st.IsDir():
			errs = append(errs, &ConfigError{Tool: s.toolName, Function: s.function, Err: ruleErr(ErrApp, "%v: the view file %s is a directory", ErrApp, file)})
		}
	}
	return errors.Join(errs...)
}

// kindsSummary counts the resources and prompts for the serve message
// (", 2 resource(s), 1 prompt(s)"; "" when there are none).
func (c *compiled) kindsSummary() string {
	var res, prompts int
	for _, s := range c.kinds {
		if s.prompt != nil {
			prompts++
		} else {
			res++
		}
	}
	if res+prompts == 0 {
		return ""
	}
	return fmt.Sprintf(", %d resource(s), %d prompt(s)", res, prompts)
}
