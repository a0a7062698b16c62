package worker

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/funcmcp/funcmcp/binding"
	"github.com/funcmcp/funcmcp/metadata"
)

// PropertyType is the type of a tool property declared with
// [ToolBuilder.WithProperty]: one of [String], [Number], [Integer], [Boolean]
// or [Object], optionally made an array with [PropertyType.Array] and
// restricted to values with [PropertyType.Enum]. The zero value is not a type.
type PropertyType struct {
	name  string
	array bool
	enum  []string
}

// The property types of the Azure Functions MCP extension.
var (
	String  = PropertyType{name: metadata.PropertyTypeString}
	Number  = PropertyType{name: metadata.PropertyTypeNumber}
	Integer = PropertyType{name: metadata.PropertyTypeInteger}
	Boolean = PropertyType{name: metadata.PropertyTypeBoolean}
	Object  = PropertyType{name: metadata.PropertyTypeObject}
)

// Array returns the array-of-t type.
func (t PropertyType) Array() PropertyType {
	t.array = true
	t.enum = slices.Clone(t.enum)
	return t
}

// Enum returns t restricted to values (written as enumValues; unlike the .NET
// fluent API, they are kept).
func (t PropertyType) Enum(values ...string) PropertyType {
	t.enum = slices.Clone(values)
	return t
}

// Name returns the property type name ("string", "number", …; "" for the
// zero value).
func (t PropertyType) Name() string { return t.name }

// IsArray reports whether t is an array type.
func (t PropertyType) IsArray() bool { return t.array }

// EnumValues returns the allowed values, nil when any value is allowed.
func (t PropertyType) EnumValues() []string { return slices.Clone(t.enum) }

// String returns e.g. "string", "integer[]".
func (t PropertyType) String() string {
	if t.array {
		return t.name + "[]"
	}
	return t.name
}

// Presence says whether a tool property must be given: [Required] or
// [Optional].
type Presence bool

const (
	// Optional: the client may leave the property out.
	Optional Presence = false
	// Required: the client must give the property (written as isRequired).
	Required Presence = true
)

// ToolBuilder configures one tool. Its methods only record: every problem is
// reported together by [App.Build] (and everything that builds). Calls for
// the same tool name accumulate on the same builder; for single values
// (description, title, schemas, function name, output field) the last call
// wins, properties are appended and metadata keys overwrite in place.
//
// A ToolBuilder is not safe for concurrent use.
type ToolBuilder struct {
	app          *App
	name         string
	description  string
	title        string
	functionName string
	outputField  string
	output       metadata.OutputSettings
	contentKinds []string
	properties   []metadata.ToolProperty
	metadata     []metadata.Field
	// explicit schemas (WithInputSchema / WithOutputSchema), compact
	inputSchema  string
	outputSchema string
	// inferred from AddTool's types, compact; inferredOutput is natural
	inferredInput  string
	inferredOutput string
	invoke         invoker
	handlers       int
	errs           []error
	// annotations, icons and the MCP App (toolextras.go, mcpapp.go)
	annotations *metadata.ToolAnnotations
	task        *metadata.TaskSupport
	icons       []metadata.Icon
	scopes      []string // WithRequiredScopes (caller.go)
	mcpApp      *appConfig
}

// Name returns the tool name.
func (b *ToolBuilder) Name() string { return b.name }

// WithDescription sets the tool description.
func (b *ToolBuilder) WithDescription(description string) *ToolBuilder {
	b.description = description
	return b
}

// WithTitle sets the tool's display title (the funcmcp host advertises it;
// the Azure Functions MCP extension ignores it).
func (b *ToolBuilder) WithTitle(title string) *ToolBuilder {
	b.title = title
	return b
}

// WithFunctionName sets the function folder name, which is also the path the
// host posts invocations to. The default is the tool name.
func (b *ToolBuilder) WithFunctionName(name string) *ToolBuilder {
	b.functionName = name
	return b
}

// WithProperty appends a tool property (written as toolProperties), for
// example
//
//	WithProperty("city", worker.String, "The city name.", worker.Required)
//
// Declared properties replace the ones derived from the input schema.
func (b *ToolBuilder) WithProperty(name string, typ PropertyType, description string, presence Presence) *ToolBuilder {
	if name == "" {
		b.errs = append(b.errs, ErrEmptyPropertyName)
		return b
	}
	if typ.name == "" {
		b.errs = append(b.errs, ruleErr(ErrNoPropertyType, "property %q: %v", name, ErrNoPropertyType))
		return b
	}
	b.properties = append(b.properties, metadata.ToolProperty{
		PropertyName: name,
		PropertyType: typ.name,
		Description:  description,
		IsRequired:   bool(presence),
		IsArray:      typ.array,
		EnumValues:   slices.Clone(typ.enum),
	})
	return b
}

// WithInputSchema sets the input schema explicitly (emitted as inputSchema
// with useWorkerInputSchema: true). It wins over a schema inferred by
// [AddTool]; the last call wins. The text is checked with
// [binding.ParseSchema] and stored compact.
func (b *ToolBuilder) WithInputSchema(jsonSchema string) *ToolBuilder {
	if s, err := b.app.schemas.ParseSchema(binding.InputSchema, jsonSchema); err != nil {
		b.errs = append(b.errs, err)
	} else {
		b.inputSchema = s.String()
	}
	return b
}

// WithOutputSchema sets the output schema explicitly. It wins over a schema
// inferred by [AddTool]; the last call wins. The text is checked with
// [binding.ParseNaturalSchema] and stored compact: any JSON Schema 2020-12
// document is accepted (SEP-2106), object, array, scalar, oneOf, {} or
// true roots alike.
//
// An object schema is emitted as outputSchema as it is. Any other schema is
// the tool's natural schema: outputSchema gets its object projection
// {"type":"object","properties":{"<field>":<schema>},"required":["<field>"]}
// (see [ToolBuilder.WithOutputField] and [binding.ProjectSchema]), which the
// Azure Functions host and clients before MCP 2026-07-28 need, and
// naturalOutputSchema the schema itself. The tool's structuredContent is
// then the natural value, sent wrapped as {"<field>": value}; funchost
// unwraps it for 2026-07-28 clients.
func (b *ToolBuilder) WithOutputSchema(jsonSchema string) *ToolBuilder {
	if s, err := b.app.schemas.ParseNaturalSchema(jsonSchema); err != nil {
		b.errs = append(b.errs, err)
	} else {
		b.outputSchema = s.String()
	}
	return b
}

// WithMetadata sets a metadata entry (advertised as the tool's _meta). The
// value is JSON-encoded (a json.RawMessage is used as is); a later call with
// the same key replaces the value in place.
func (b *ToolBuilder) WithMetadata(key string, value any) *ToolBuilder {
	if key == "" {
		b.errs = append(b.errs, ErrEmptyMetadataKey)
		return b
	}
	data, err := metadata.Marshal(value)
	if err != nil {
		b.errs = append(b.errs, ruleErr(ErrMetadataValue, "metadata %q: %v: %v", key, ErrMetadataValue, err))
		return b
	}
	b.metadata = metadata.SetField(b.metadata, key, data)
	return b
}

// WithOutputField names the field a result is wrapped in for a non-object
// output schema (default "result"): {"<name>": value}. Results of object
// schemas are never wrapped.
func (b *ToolBuilder) WithOutputField(name string) *ToolBuilder {
	if name == "" {
		b.errs = append(b.errs, ErrEmptyOutputField)
		return b
	}
	b.outputField = name
	return b
}

// WithOutputValidation sets what the tool does with a result that breaks
// its output schema or its declared content kinds, over the app's setting
// (see [Options]): [ValidationStrict], [ValidationWarn] or [ValidationOff].
// It is written to function.json, so funchost does the same.
func (b *ToolBuilder) WithOutputValidation(mode OutputValidation) *ToolBuilder {
	v, err := metadata.ParseOutputValidation(string(mode))
	if b.setting(metadata.KeyOutputValidation, string(v), err) {
		b.output.Validation = v
	}
	return b
}

// WithInputValidation sets what the tool does with arguments that break its
// input schema, over the app's setting (see [Options]): [ValidationStrict]
// refuses the call before the handler runs, [ValidationWarn] logs the
// problems and calls the handler, [ValidationOff] checks nothing. It is
// written to function.json, so funchost does the same.
func (b *ToolBuilder) WithInputValidation(mode OutputValidation) *ToolBuilder {
	v, err := metadata.ParseOutputValidation(string(mode))
	if b.setting(metadata.KeyInputValidation, string(v), err) {
		b.output.InputValidation = v
	}
	return b
}

// setting reports whether a parsed output setting may be used, recording
// the problem when not ("" is no setting).
func (b *ToolBuilder) setting(key, value string, err error) bool {
	if err == nil && value == "" {
		err = errors.New(`"" is not a setting`)
	}
	if err != nil {
		b.errs = append(b.errs, ruleErr(ErrOutputSetting, "%v: %s: %v", ErrOutputSetting, key, err))
		return false
	}
	return true
}

// WithTextCopy sets which text goes with the tool's structuredContent, over
// the app's setting (see [Options]): [TextCopyJSON], [TextCopyNone] or
// [TextCopySummary]. It is written to function.json, so funchost does the
// same.
func (b *ToolBuilder) WithTextCopy(mode TextCopy) *ToolBuilder {
	v, err := metadata.ParseTextCopy(string(mode))
	if b.setting(metadata.KeyTextCopy, string(v), err) {
		b.output.TextCopy = v
	}
	return b
}

// WithContentKinds declares the kinds of content the tool returns, as MIME
// types: "image/png", "text/plain" (a text block), "application/json"
// (structuredContent and its text copy), "audio/wav", the mimeType of an
// embedded resource, or a whole family such as "image/*". Every result must
// then hold each declared kind and nothing else; the worker and funchost
// check it like the output schema. The declaration is written to
// function.json as contentKinds and advertised in tools/list _meta under
// "funcmcp/contentKinds". A later call replaces the list.
func (b *ToolBuilder) WithContentKinds(kinds ...string) *ToolBuilder {
	parsed, err := binding.ParseContentKinds(kinds)
	if err != nil {
		b.errs = append(b.errs, ruleErr(ErrContentKind, "%v: %v", ErrContentKind, err))
		return b
	}
	b.contentKinds = parsed
	return b
}

// Handle sets a raw handler. A tool has exactly one handler (Handle or
// [AddTool]); a second one is a configuration error.
func (b *ToolBuilder) Handle(h ToolHandler) *ToolBuilder {
	if h == nil {
		b.errs = append(b.errs, ruleErr(ErrNoHandler, "Handle was given a nil handler"))
		return b
	}
	b.setInvoker(func(ctx context.Context, tc *ToolContext, _ *tool) (*Result, error) { return h(ctx, tc) })
	return b
}

func (b *ToolBuilder) setInvoker(inv invoker) {
	b.handlers++
	b.invoke = inv
}

// options returns the tool's effective configuration: explicit beats
// inferred, declared properties beat derived ones. wrapped says whether
// results are wrapped in outputField (see [ToolBuilder.WithOutputSchema]).
func (b *ToolBuilder) options(outputField string) (opts *metadata.ToolOptions, wrapped bool, err error) {
	opts = &metadata.ToolOptions{
		ToolName:    b.name,
		Description: b.description,
		Title:       b.title,
		Metadata:    slices.Clone(b.metadata),
		InputSchema: cmp.Or(b.inputSchema, b.inferredInput),

		ContentKinds:     slices.Clone(b.contentKinds),
		OutputValidation: b.output.Validation,
		InputValidation:  b.output.InputValidation,
		TextCopy:         b.output.TextCopy,
	}
	if wrapped, err = projectOutput(&b.app.schemas, opts, cmp.Or(b.outputSchema, b.inferredOutput), outputField); err != nil {
		return nil, false, err
	}
	switch {
	case len(b.properties) > 0:
		opts.Properties = slices.Clone(b.properties)
	case opts.InputSchema != "":
		opts.Properties = propertiesFromSchema(opts.InputSchema)
	}
	if opts.Properties == nil {
		opts.Properties = []metadata.ToolProperty{}
	}
	b.applyExtras(opts)
	return opts, wrapped, nil
}

func (b *ToolBuilder) function() string { return cmp.Or(b.functionName, b.name) }

// ruleError is a problem message that matches a rule sentinel with errors.Is.
type ruleError struct {
	rule error
	msg  string
	err  error // an underlying cause, also reachable
}

func (e *ruleError) Error() string { return e.msg }

func (e *ruleError) Unwrap() []error {
	if e.err != nil {
		return []error{e.rule, e.err}
	}
	return []error{e.rule}
}

func ruleErr(rule error, format string, args ...any) error {
	var cause error
	for _, a := range args {
		if err, ok := a.(error); ok && !errors.Is(err, rule) {
			cause = err
		}
	}
	return &ruleError{rule: rule, msg: fmt.Sprintf(format, args...), err: cause}
}

// propertiesFromSchema maps the top-level properties of an object schema to
// tool properties, in order, for hosts that predate worker input schemas.
// Types: the first non-null type; arrays give isArray with the item type;
// anything else (refs, unions, {}) is "object". String enums are kept.
func propertiesFromSchema(text string) []metadata.ToolProperty {
	var root struct {
		Properties json.RawMessage `json:"properties"`
		Required   []any           `json:"required"`
	}
	if json.Unmarshal([]byte(text), &root) != nil || len(root.Properties) == 0 {
		return []metadata.ToolProperty{}
	}
	required := map[string]bool{}
	for _, r := range root.Required {
		if s, ok := r.(string); ok {
			required[s] = true
		}
	}
	fields, err := orderedObject(root.Properties)
	if err != nil {
		return []metadata.ToolProperty{}
	}
	props := make([]metadata.ToolProperty, 0, len(fields))
	for _, f := range fields {
		var ps propSchema
		_ = json.Unmarshal(f.Value, &ps)
		p := metadata.ToolProperty{
			PropertyName: f.Key,
			Description:  ps.Description,
			IsRequired:   required[f.Key],
		}
		typ := ps.firstType()
		enum := ps.Enum
		if typ == "array" {
			p.IsArray = true
			typ = ""
			enum = nil
			if ps.Items != nil {
				typ = ps.Items.firstType()
				enum = ps.Items.Enum
			}
		}
		switch typ {
		case metadata.PropertyTypeString, metadata.PropertyTypeNumber, metadata.PropertyTypeInteger,
			metadata.PropertyTypeBoolean, metadata.PropertyTypeObject:
			p.PropertyType = typ
		default:
			p.PropertyType = metadata.PropertyTypeObject
		}
		for _, e := range enum {
			if s, ok := e.(string); ok {
				p.EnumValues = append(p.EnumValues, s)
			}
		}
		props = append(props, p)
	}
	return props
}

type propSchema struct {
	Type        any         `json:"type"`
	Description string      `json:"description"`
	Enum        []any       `json:"enum"`
	Items       *propSchema `json:"items"`
}

func (p *propSchema) firstType() string {
	switch t := p.Type.(type) {
	case string:
		return t
	case []any:
		for _, v := range t {
			if s, ok := v.(string); ok && s != "null" {
				return s
			}
		}
	}
	return ""
}

// orderedObject splits a JSON object into its members, in order.
func orderedObject(data []byte) ([]metadata.Field, error) {
	var b metadata.Binding // an ordered JSON object
	if err := b.UnmarshalJSON(data); err != nil {
		return nil, err
	}
	return b.Fields(), nil
}
