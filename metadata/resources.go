package metadata

import (
	"errors"
	"fmt"
	"strconv"
)

// ResourceOptions is what a resource's configuration holds, as plain data:
// a static resource, or a resource template when URI holds {variable}
// expressions. The worker's builder fills it in; [NewResourceFunction] and
// [EmitResources] write it into the trigger binding.
type ResourceOptions struct {
	// URI is the resource's URI or URI template (written as uri).
	URI string
	// Name is the resource's name (written as resourceName).
	Name string
	// Title, Description and MimeType are written when not "".
	Title       string
	Description string
	MimeType    string
	// Size, when not nil, is written as size (a number).
	Size *int64
	// Metadata entries are written, in order, as the metadata object.
	Metadata []Field
	// Icons, when not empty, are written as icons (a funcmcp key on
	// resources).
	Icons []Icon
	// Completions of template variables, written as completions (a funcmcp
	// key).
	Completions []CompletionSource
	// RequiredScopes, when not empty, are written as requiredScopes (a
	// funcmcp key).
	RequiredScopes []string
}

// PromptOptions is what a prompt's configuration holds, as plain data.
type PromptOptions struct {
	// Name is the prompt's name (written as promptName).
	Name string
	// Title and Description are written when not "".
	Title       string
	Description string
	// Arguments, when not empty, are written as promptArguments.
	Arguments []PromptArgument
	// Metadata entries are written, in order, as the metadata object.
	Metadata []Field
	// Icons, when not empty, are written as icons.
	Icons []Icon
	// Completions of arguments, written as completions (a funcmcp key).
	Completions []CompletionSource
	// RequiredScopes, when not empty, are written as requiredScopes (a
	// funcmcp key).
	RequiredScopes []string
}

// PromptArgument is one item of a prompt trigger's promptArguments, as the
// .NET worker writes it ({"name","description","required"}) plus the MCP
// title the extension also reads.
type PromptArgument struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required"`
}

// otherTrigger is one resource or prompt trigger of the function being
// built, with the values the steps resolved for it.
type otherTrigger struct {
	binding  *Binding
	id       string // the uri or the prompt name
	metadata []Field
	meta     bool // metadata resolved
	// pending string-valued keys, written by Build in this order
	promptArguments, icons, completions, requiredScopes *string
	useResultSchema                                     bool
}

// otherBuilder runs the metadata pipeline for the resource and prompt
// triggers of one function.
type otherBuilder struct {
	fn       *Function
	triggers []*otherTrigger
	errs     []error
}

func newOtherBuilder(fn *Function, typ, idKey string) *otherBuilder {
	b := &otherBuilder{fn: fn}
	for _, bd := range fn.Bindings {
		// Matched exactly, like the .NET worker's pipeline.
		if bd == nil || bd.Type() != typ {
			continue
		}
		id, _ := bd.LookupString(idKey)
		if id == "" {
			b.errs = append(b.errs, &FunctionError{Function: fn.Name, Err: fmt.Errorf("%s binding has no %s", typ, idKey)})
			continue
		}
		b.triggers = append(b.triggers, &otherTrigger{binding: bd, id: id})
	}
	return b
}

// addMetadata merges entries over the metadata the binding carries;
// configured keys win.
func (b *otherBuilder) addMetadata(t *otherTrigger, entries []Field) {
	if len(entries) == 0 {
		return
	}
	var merged []Field
	if raw, ok := t.binding.Get(KeyMetadata); ok {
		merged = existingMetadata(raw)
	}
	for _, m := range entries {
		merged = SetField(merged, m.Key, m.Value)
	}
	t.metadata, t.meta = merged, true
}

// addIcons and addCompletions resolve the icons and completions keys.
func (b *otherBuilder) addIcons(t *otherTrigger, icons []Icon) {
	if len(icons) == 0 {
		return
	}
	data, err := Marshal(icons)
	if err != nil {
		b.errs = append(b.errs, &FunctionError{Function: b.fn.Name, Err: fmt.Errorf("%q: encoding icons: %w", t.id, err)})
		return
	}
	s := string(data)
	t.icons = &s
}

// addScopes resolves the requiredScopes key.
func (b *otherBuilder) addScopes(t *otherTrigger, scopes []string) {
	if len(scopes) == 0 {
		return
	}
	if err := CheckScopes(scopes); err != nil {
		b.errs = append(b.errs, &FunctionError{Function: b.fn.Name, Err: fmt.Errorf("%q: %w", t.id, err)})
		return
	}
	data, err := Marshal(scopes)
	if err != nil {
		b.errs = append(b.errs, &FunctionError{Function: b.fn.Name, Err: fmt.Errorf("%q: encoding requiredScopes: %w", t.id, err)})
		return
	}
	s := string(data)
	t.requiredScopes = &s
}

func (b *otherBuilder) addCompletions(t *otherTrigger, sources []CompletionSource) {
	if len(sources) == 0 {
		return
	}
	s, err := EncodeCompletions(sources)
	if err != nil {
		b.errs = append(b.errs, &FunctionError{Function: b.fn.Name, Err: fmt.Errorf("%q: %w", t.id, err)})
		return
	}
	t.completions = &s
}

// build writes the resolved values: existing keys keep their position, new
// keys are appended in the order promptArguments, metadata, icons,
// completions, requiredScopes, useResultSchema.
func (b *otherBuilder) build() error {
	for _, t := range b.triggers {
		if t.promptArguments != nil {
			t.binding.SetString(KeyPromptArguments, *t.promptArguments)
		}
		if t.meta {
			obj := &Binding{fields: t.metadata}
			data, _ := obj.MarshalJSON()
			t.binding.SetString(KeyMetadata, string(data))
		}
		if t.icons != nil {
			t.binding.SetString(KeyIcons, *t.icons)
		}
		if t.completions != nil {
			t.binding.SetString(KeyCompletions, *t.completions)
		}
		if t.requiredScopes != nil {
			t.binding.SetString(KeyRequiredScopes, *t.requiredScopes)
		}
		if t.useResultSchema {
			t.binding.SetBool(KeyUseResultSchema, true)
		}
	}
	return errors.Join(b.errs...)
}

// EmitResources runs the metadata pipeline over fn's mcpResourceTrigger
// bindings, taking each resource's options by its exact uri (options may
// return nil): metadata (merged over any the binding carries; configured
// keys win, as in the .NET worker), icons and completions, then build.
func EmitResources(fn *Function, options func(uri string) *ResourceOptions) error {
	b := newOtherBuilder(fn, TypeMcpResourceTrigger, KeyURI)
	for _, t := range b.triggers {
		var opts *ResourceOptions
		if options != nil {
			opts = options(t.id)
		}
		if opts == nil {
			continue
		}
		b.addMetadata(t, opts.Metadata)
		b.addIcons(t, opts.Icons)
		b.addCompletions(t, opts.Completions)
		b.addScopes(t, opts.RequiredScopes)
	}
	return b.build()
}

// EmitPrompts runs the metadata pipeline over fn's mcpPromptTrigger
// bindings, taking each prompt's options by its exact promptName (options
// may return nil): prompt arguments (the configured list replaces any the
// binding carries, as the .NET worker's fluent arguments do), metadata,
// icons, completions, and useResultSchema on every prompt trigger (type
// matched case-insensitively) of a function without output bindings, as the
// .NET worker SDK does; then build.
func EmitPrompts(fn *Function, options func(promptName string) *PromptOptions) error {
	b := newOtherBuilder(fn, TypeMcpPromptTrigger, KeyPromptName)
	for _, t := range b.triggers {
		var opts *PromptOptions
		if options != nil {
			opts = options(t.id)
		}
		if opts == nil {
			continue
		}
		if len(opts.Arguments) > 0 {
			data, err := Marshal(opts.Arguments)
			if err != nil {
				b.errs = append(b.errs, &FunctionError{Function: fn.Name, Err: fmt.Errorf("prompt %q: encoding promptArguments: %w", t.id, err)})
			} else {
				s := string(data)
				t.promptArguments = &s
			}
		}
		b.addMetadata(t, opts.Metadata)
		b.addIcons(t, opts.Icons)
		b.addCompletions(t, opts.Completions)
		b.addScopes(t, opts.RequiredScopes)
	}
	if !fn.HasOutputBinding() {
		for _, t := range b.triggers {
			t.useResultSchema = true
		}
		for _, bd := range fn.Bindings {
			if bd != nil && bd.IsType(TypeMcpPromptTrigger) && bd.Type() != TypeMcpPromptTrigger {
				bd.SetBool(KeyUseResultSchema, true)
			}
		}
	}
	return b.build()
}

// newTrigger returns a trigger binding {"name":"context","type":typ,
// "direction":direction}.
func newTrigger(typ, direction string) *Binding {
	b := &Binding{}
	b.SetString(KeyName, TriggerBindingName)
	b.SetString(KeyType, typ)
	b.SetString(KeyDirection, direction)
	return b
}

// finish validates a function built here.
func finish(fn *Function, err error) (*Function, error) {
	if err != nil {
		return nil, err
	}
	if err := fn.Validate(); err != nil {
		return nil, &FunctionError{Function: fn.Name, Err: err}
	}
	return fn, nil
}

// NewResourceFunction returns the function for one resource: a single
// trigger binding {"name":"context","type":"mcpResourceTrigger",
// "direction":"in","uri","resourceName"[,"title"][,"description"]
// [,"mimeType"][,"size"]} completed by [EmitResources] from opts.
func NewResourceFunction(name string, opts *ResourceOptions) (*Function, error) {
	trigger := newTrigger(TypeMcpResourceTrigger, DirectionIn)
	trigger.SetString(KeyURI, opts.URI)
	trigger.SetString(KeyResourceName, opts.Name)
	setIf(trigger, KeyTitle, opts.Title)
	setIf(trigger, KeyDescription, opts.Description)
	setIf(trigger, KeyMimeType, opts.MimeType)
	if opts.Size != nil {
		trigger.set(KeySize, []byte(strconv.FormatInt(*opts.Size, 10)))
	}
	fn := &Function{Name: name, Bindings: []*Binding{trigger}}
	return finish(fn, EmitResources(fn, func(uri string) *ResourceOptions {
		if uri == opts.URI {
			return opts
		}
		return nil
	}))
}

// NewPromptFunction returns the function for one prompt: a single trigger
// binding {"name":"context","type":"mcpPromptTrigger","direction":"in",
// "promptName"[,"title"][,"description"]} completed by [EmitPrompts] from
// opts.
func NewPromptFunction(name string, opts *PromptOptions) (*Function, error) {
	trigger := newTrigger(TypeMcpPromptTrigger, DirectionIn)
	trigger.SetString(KeyPromptName, opts.Name)
	setIf(trigger, KeyTitle, opts.Title)
	setIf(trigger, KeyDescription, opts.Description)
	fn := &Function{Name: name, Bindings: []*Binding{trigger}}
	return finish(fn, EmitPrompts(fn, func(promptName string) *PromptOptions {
		if promptName == opts.Name {
			return opts
		}
		return nil
	}))
}

// NewAppViewFunction returns the function that serves the MCP App view of
// the tool toolName, named [AppViewFunctionName], exactly as the .NET
// worker's McpAppFunctionMetadataFactory writes it:
//
//	{"name":"context","type":"mcpResourceTrigger","direction":"In",
//	 "uri":"ui://<tool>/view","resourceName":"<tool>_view",
//	 "mimeType":"text/html;profile=mcp-app"}
//
// plus "title" when title is not "" (the view's title, which the .NET
// worker records but does not write).
func NewAppViewFunction(toolName, title string) (*Function, error) {
	trigger := newTrigger(TypeMcpResourceTrigger, DirectionInApp)
	trigger.SetString(KeyURI, AppViewURI(toolName))
	trigger.SetString(KeyResourceName, AppViewResourceName(toolName))
	trigger.SetString(KeyMimeType, AppViewMimeType)
	setIf(trigger, KeyTitle, title)
	return finish(&Function{Name: AppViewFunctionName(toolName), Bindings: []*Binding{trigger}}, nil)
}

func setIf(b *Binding, key, value string) {
	if value != "" {
		b.SetString(key, value)
	}
}

// ResourceTriggers returns the function's mcpResourceTrigger bindings and
// PromptTriggers its mcpPromptTrigger bindings (types matched
// case-insensitively).
func (f *Function) ResourceTriggers() []*Binding { return f.triggersOf(TypeMcpResourceTrigger) }

// PromptTriggers: see [Function.ResourceTriggers].
func (f *Function) PromptTriggers() []*Binding { return f.triggersOf(TypeMcpPromptTrigger) }

func (f *Function) triggersOf(typ string) []*Binding {
	var out []*Binding
	for _, b := range f.Bindings {
		if b != nil && b.IsType(typ) {
			out = append(out, b)
		}
	}
	return out
}
