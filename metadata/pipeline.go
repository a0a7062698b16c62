package metadata

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// Tool property types, as written in [ToolProperty.PropertyType]. Arrays are
// expressed with IsArray, not with a type of their own.
const (
	PropertyTypeString  = "string"
	PropertyTypeNumber  = "number"
	PropertyTypeInteger = "integer"
	PropertyTypeBoolean = "boolean"
	PropertyTypeObject  = "object"
)

// ToolProperty is one item of a trigger's toolProperties: the host builds the
// tool's input schema from these when no worker input schema is used.
type ToolProperty struct {
	PropertyName string   `json:"propertyName"`
	PropertyType string   `json:"propertyType"`
	Description  string   `json:"description"`
	IsRequired   bool     `json:"isRequired"`
	IsArray      bool     `json:"isArray"`
	EnumValues   []string `json:"enumValues"`
}

// MarshalJSON writes enumValues as [] when there are none, as the .NET worker does.
func (p ToolProperty) MarshalJSON() ([]byte, error) {
	return p.appendJSON(nil), nil
}

// appendJSON appends p as encoding/json writes the struct (with
// [Marshal]'s string encoding), enumValues [] when there are none.
func (p ToolProperty) appendJSON(dst []byte) []byte {
	dst = append(dst, `{"propertyName":`...)
	dst = AppendJSONString(dst, p.PropertyName)
	dst = append(dst, `,"propertyType":`...)
	dst = AppendJSONString(dst, p.PropertyType)
	dst = append(dst, `,"description":`...)
	dst = AppendJSONString(dst, p.Description)
	dst = append(dst, `,"isRequired":`...)
	dst = strconv.AppendBool(dst, p.IsRequired)
	dst = append(dst, `,"isArray":`...)
	dst = strconv.AppendBool(dst, p.IsArray)
	dst = append(dst, `,"enumValues":[`...)
	for i, v := range p.EnumValues {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = AppendJSONString(dst, v)
	}
	return append(dst, ']', '}')
}

// AppendToolProperties appends props as [Marshal] encodes the slice: null
// when it is nil.
func AppendToolProperties(dst []byte, props []ToolProperty) []byte {
	if props == nil {
		return append(dst, "null"...)
	}
	dst = append(dst, '[')
	for i, p := range props {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = p.appendJSON(dst)
	}
	return append(dst, ']')
}

// ToolOptions is what a tool's configuration holds, as plain data. The worker's
// fluent builder fills it in; [Emit] writes it into the trigger binding.
type ToolOptions struct {
	// ToolName is the name advertised to MCP clients (case-sensitive here).
	ToolName string
	// Description is the tool's description.
	Description string
	// Title is the tool's display title ("" for none).
	Title string
	// Properties, when non-nil, are written as toolProperties. A non-nil empty
	// slice writes "[]".
	Properties []ToolProperty
	// Metadata entries are written, in order, as the metadata object.
	Metadata []Field
	// InputSchema is the compact input schema text ("" for none).
	InputSchema string
	// OutputSchema is the compact output schema text ("" for none): an object
	// schema, the projection of NaturalOutputSchema when that is set.
	OutputSchema string
	// NaturalOutputSchema is the compact natural output schema text, written
	// as KeyNaturalOutputSchema ("" for none: OutputSchema is the natural one).
	NaturalOutputSchema string
	// ContentKinds are the declared content kinds (MIME types) of the
	// tool's results, written as contentKinds; nil declares none.
	ContentKinds []string
	// OutputValidation, InputValidation and TextCopy, when set, are written
	// as the tool's own outputValidation, inputValidation and textCopy.
	OutputValidation OutputValidation
	InputValidation  OutputValidation
	TextCopy         TextCopy
	// Annotations, when not nil and not zero, are written as annotations,
	// and Icons, when not empty, as icons (funcmcp keys on tools).
	Annotations *ToolAnnotations
	Icons       []Icon
	// Task, when not nil, is written as task (a funcmcp key).
	Task *TaskSupport
	// RequiredScopes, when not empty, are written as requiredScopes (a
	// funcmcp key).
	RequiredScopes []string
}

// parsedTrigger is one tool trigger of the function being built, with the
// values the steps resolved for it. Steps only fill the pending fields; Build
// writes them.
type parsedTrigger struct {
	binding  *Binding
	toolName string
	options  *ToolOptions // nil when the tool has no configuration

	toolProperties       *string
	metadata             []Field
	hasMetadata          bool
	inputSchema          *string
	outputSchema         *string
	naturalOutputSchema  *string
	contentKinds         *string
	outputValidation     OutputValidation
	inputValidation      OutputValidation
	textCopy             TextCopy
	annotations, icons   *string
	task                 *string
	requiredScopes       *string
	useWorkerInputSchema bool
	useResultSchema      bool
}

// BindingBuilder runs the metadata pipeline over one function. Create it with
// [NewBindingBuilder], call the steps in order (or use [Emit]), then Build.
type BindingBuilder struct {
	fn       *Function
	triggers []*parsedTrigger
	// resultOnly are tool triggers whose type differs from TypeMcpToolTrigger
	// in case only: they get useResultSchema and nothing else.
	resultOnly []*Binding
	errs       []error
}

// NewBindingBuilder parses fn's tool triggers and looks up each tool's options
// by its exact, case-sensitive toolName. options may return nil.
func NewBindingBuilder(fn *Function, options func(toolName string) *ToolOptions) *BindingBuilder {
	b := &BindingBuilder{fn: fn}
	for _, bd := range fn.Bindings {
		// The pipeline matches binding types exactly, like the .NET worker.
		if bd == nil || bd.Type() != TypeMcpToolTrigger {
			continue
		}
		name, _ := bd.LookupString(KeyToolName)
		if name == "" {
			b.errs = append(b.errs, &FunctionError{Function: fn.Name, Err: errors.New("mcpToolTrigger binding has no toolName")})
			continue
		}
		var opts *ToolOptions
		if options != nil {
			opts = options(name)
		}
		b.triggers = append(b.triggers, &parsedTrigger{binding: bd, toolName: name, options: opts})
	}
	return b
}

// AddToolProperties resolves toolProperties from the tool's Properties.
func (b *BindingBuilder) AddToolProperties() *BindingBuilder {
	for _, t := range b.triggers {
		if t.options == nil || t.options.Properties == nil {
			continue
		}
		s := string(AppendToolProperties(nil, t.options.Properties))
		t.toolProperties = &s
	}
	return b
}

// AddMetadata merges the tool's metadata over any metadata the binding
// already carries (as a string holding JSON or as an object); configured keys
// win. Malformed existing metadata is dropped, as the .NET worker does.
func (b *BindingBuilder) AddMetadata() *BindingBuilder {
	for _, t := range b.triggers {
		if t.options == nil || len(t.options.Metadata) == 0 {
			continue
		}
		var merged []Field
		if raw, ok := t.binding.Get(KeyMetadata); ok {
			merged = existingMetadata(raw)
		}
		for _, m := range t.options.Metadata {
			merged = SetField(merged, m.Key, m.Value)
		}
		t.metadata, t.hasMetadata = merged, true
	}
	return b
}

func existingMetadata(raw json.RawMessage) []Field {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		raw = json.RawMessage(s)
	}
	fields, err := decodeObject(raw)
	if err != nil {
		return nil
	}
	return fields
}

// ResolveInputSchema writes the tool's input schema and useWorkerInputSchema.
// toolProperties stay for hosts that predate worker input schemas.
func (b *BindingBuilder) ResolveInputSchema() *BindingBuilder {
	for _, t := range b.triggers {
		if t.options == nil || t.options.InputSchema == "" {
			continue
		}
		s := t.options.InputSchema
		t.inputSchema, t.useWorkerInputSchema = &s, true
	}
	return b
}

// ResolveOutputSchema writes the tool's output schema, and its natural
// output schema when it has one. They have no companion flag: the key
// present means a schema.
func (b *BindingBuilder) ResolveOutputSchema() *BindingBuilder {
	for _, t := range b.triggers {
		if t.options == nil || t.options.OutputSchema == "" {
			continue
		}
		s := t.options.OutputSchema
		t.outputSchema = &s
		if n := t.options.NaturalOutputSchema; n != "" {
			t.naturalOutputSchema = &n
		}
	}
	return b
}

// ResolveOutputRules writes what funcmcp alone reads about the tool's
// results and arguments: contentKinds, outputValidation, inputValidation and
// textCopy (keys the Functions host ignores), each only when set; and its
// annotations and icons.
func (b *BindingBuilder) ResolveOutputRules() *BindingBuilder {
	for _, t := range b.triggers {
		if t.options == nil {
			continue
		}
		if t.options.ContentKinds != nil {
			data, err := Marshal(t.options.ContentKinds)
			if err != nil {
				b.errs = append(b.errs, b.toolErr(t, fmt.Errorf("encoding contentKinds: %w", err)))
				continue
			}
			s := string(data)
			t.contentKinds = &s
		}
		t.outputValidation = t.options.OutputValidation
		t.inputValidation = t.options.InputValidation
		t.textCopy = t.options.TextCopy
		if err := t.resolveExtras(); err != nil {
			b.errs = append(b.errs, b.toolErr(t, err))
		}
	}
	return b
}

// ResolveResultSchema sets useResultSchema on every tool trigger of a function
// without output bindings: such a worker returns the result envelope.
func (b *BindingBuilder) ResolveResultSchema() *BindingBuilder {
	if b.fn.HasOutputBinding() {
		return b
	}
	for _, t := range b.triggers {
		t.useResultSchema = true
	}
	// Like the .NET transformer, this step matches the trigger type
	// case-insensitively, so it also covers bindings the other steps skip.
	for _, bd := range b.fn.Bindings {
		if bd != nil && bd.IsType(TypeMcpToolTrigger) && bd.Type() != TypeMcpToolTrigger {
			b.resultOnly = append(b.resultOnly, bd)
		}
	}
	return b
}

// Build writes the resolved values into the bindings. Existing keys keep their
// position; new keys are appended in this order: toolProperties, metadata,
// inputSchema, outputSchema, naturalOutputSchema, contentKinds,
// outputValidation, inputValidation, textCopy, annotations, icons, task,
// requiredScopes, useWorkerInputSchema, useResultSchema. It returns every problem the
// pipeline met, joined.
func (b *BindingBuilder) Build() error {
	for _, t := range b.triggers {
		if t.toolProperties != nil {
			t.binding.SetString(KeyToolProperties, *t.toolProperties)
		}
		if t.hasMetadata {
			obj := &Binding{fields: t.metadata}
			data, _ := obj.MarshalJSON()
			t.binding.SetString(KeyMetadata, string(data))
		}
		if t.inputSchema != nil {
			t.binding.SetString(KeyInputSchema, *t.inputSchema)
		}
		if t.outputSchema != nil {
			t.binding.SetString(KeyOutputSchema, *t.outputSchema)
		}
		if t.naturalOutputSchema != nil {
			t.binding.SetString(KeyNaturalOutputSchema, *t.naturalOutputSchema)
		}
		if t.contentKinds != nil {
			t.binding.SetString(KeyContentKinds, *t.contentKinds)
		}
		if t.outputValidation != "" {
			t.binding.SetString(KeyOutputValidation, string(t.outputValidation))
		}
		if t.inputValidation != "" {
			t.binding.SetString(KeyInputValidation, string(t.inputValidation))
		}
		if t.textCopy != "" {
			t.binding.SetString(KeyTextCopy, string(t.textCopy))
		}
		if t.annotations != nil {
			t.binding.SetString(KeyAnnotations, *t.annotations)
		}
		if t.icons != nil {
			t.binding.SetString(KeyIcons, *t.icons)
		}
		if t.task != nil {
			t.binding.SetString(KeyTask, *t.task)
		}
		if t.requiredScopes != nil {
			t.binding.SetString(KeyRequiredScopes, *t.requiredScopes)
		}
		if t.useWorkerInputSchema {
			t.binding.SetBool(KeyUseWorkerInputSchema, true)
		}
		if t.useResultSchema {
			t.binding.SetBool(KeyUseResultSchema, true)
		}
	}
	for _, bd := range b.resultOnly {
		bd.SetBool(KeyUseResultSchema, true)
	}
	return errors.Join(b.errs...)
}

func (b *BindingBuilder) toolErr(t *parsedTrigger, err error) error {
	return &FunctionError{Function: b.fn.Name, Err: fmt.Errorf("tool %q: %w", t.toolName, err)}
}

// Emit runs the whole pipeline over fn in its fixed order: add tool
// properties, add metadata, resolve input schema, resolve output schema,
// resolve output rules, resolve result schema, build.
func Emit(fn *Function, options func(toolName string) *ToolOptions) error {
	return NewBindingBuilder(fn, options).
		AddToolProperties().
		AddMetadata().
		ResolveInputSchema().
		ResolveOutputSchema().
		ResolveOutputRules().
		ResolveResultSchema().
		Build()
}

// NewToolFunction returns the function for one tool: a single trigger binding
// {"name":"context","type":"mcpToolTrigger","direction":"in","toolName",
// "description"[,"title"]} completed by [Emit] from opts.
func NewToolFunction(name string, opts *ToolOptions) (*Function, error) {
	trigger := &Binding{}
	trigger.SetString(KeyName, TriggerBindingName)
	trigger.SetString(KeyType, TypeMcpToolTrigger)
	trigger.SetString(KeyDirection, DirectionIn)
	trigger.SetString(KeyToolName, opts.ToolName)
	trigger.SetString(KeyDescription, opts.Description)
	if opts.Title != "" {
		trigger.SetString(KeyTitle, opts.Title)
	}
	fn := &Function{Name: name, Bindings: []*Binding{trigger}}
	err := Emit(fn, func(toolName string) *ToolOptions {
		if toolName == opts.ToolName {
			return opts
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := fn.Validate(); err != nil {
		return nil, &FunctionError{Function: name, Err: err}
	}
	return fn, nil
}
