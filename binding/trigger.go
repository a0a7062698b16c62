package binding

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/funcmcp/funcmcp/internal/jsonx"
	"github.com/funcmcp/funcmcp/metadata"
)

// ToolError is a problem with one tool: it names the function, the tool and
// the function.json file, then gives the reason. Reach it with errors.As; the
// reason (a *SyntaxError, *ShapeError, *CompileError, …) stays reachable
// through Unwrap.
type ToolError struct {
	Function string // the function (folder) name
	Tool     string // the toolName, "" when the binding has none
	File     string // the function.json path, "" when unknown
	Err      error  // the reason
}

func (e *ToolError) Error() string {
	what := ""
	if e.Tool != "" {
		what = fmt.Sprintf("tool %q", e.Tool)
	}
	return functionError(e.Function, what, e.File, e.Err)
}

// functionError is the message of a problem of one function: `function
// "<name>", <what> (<file>): <reason>`, what and file left out when "".
func functionError(function, what, file string, err error) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "function %q", function)
	if what != "" {
		sb.WriteString(", ")
		sb.WriteString(what)
	}
	if file != "" {
		fmt.Fprintf(&sb, " (%s)", file)
	}
	sb.WriteString(": ")
	if err == nil {
		sb.WriteString("unknown error")
	} else {
		sb.WriteString(err.Error())
	}
	return sb.String()
}

func (e *ToolError) Unwrap() error { return e.Err }

// Trigger is a parsed mcpToolTrigger binding. Keys are matched
// case-insensitively, as the Azure Functions host matches them.
type Trigger struct {
	Function string // the function (folder) name
	File     string // the function.json path, "" when unknown

	// Name is the binding "name": the Data key of the invocation, e.g. "context".
	Name string
	// ToolName is the advertised tool name (never empty).
	ToolName string
	// Description is the tool description ("" when the key is null).
	Description string
	// Title is the tool's display title ("" for none).
	Title string
	// Properties are the decoded toolProperties; nil when the key is absent
	// or null.
	Properties []metadata.ToolProperty
	// Metadata is the compact metadata object (the tool's _meta); nil when
	// there is none or it is empty.
	Metadata json.RawMessage

	// InputSchemaText is the inputSchema string; it is used only when
	// UseWorkerInputSchema is true.
	InputSchemaText      string
	UseWorkerInputSchema bool
	// OutputSchemaText is the outputSchema string; "" means no output schema.
	OutputSchemaText string
	// NaturalOutputSchemaText is the naturalOutputSchema string; "" means the
	// output schema is its own natural form.
	NaturalOutputSchemaText string
	// UseResultSchema says the worker returns the result envelope.
	UseResultSchema bool

	// ContentKinds are the declared content kinds, as [ParseContentKinds]
	// returns them; nil when none are declared.
	ContentKinds []string
	// OutputValidation and TextCopy are the tool's own output settings; ""
	// when not set (the app's apply).
	OutputValidation metadata.OutputValidation
	TextCopy         metadata.TextCopy
	// InputValidation is the tool's own argument validation; "" when not
	// set (the app's applies).
	InputValidation metadata.OutputValidation

	// Annotations is the compact annotations object and Icons the icons
	// (funcmcp keys, see [ParseToolAnnotations] and [ParseIcons]); nil when
	// there are none.
	Annotations json.RawMessage
	Icons       []metadata.Icon
	// Task is the tool's task declaration (a funcmcp key); nil when the
	// tool runs synchronously only.
	Task *metadata.TaskSupport
	// RequiredScopes are the OAuth scopes a caller's token must grant to
	// call the tool (a funcmcp key, metadata.KeyRequiredScopes); nil when
	// none.
	RequiredScopes []string
}

// toolErr wraps err in a *ToolError naming this trigger.
func (t *Trigger) toolErr(err error) error {
	return &ToolError{Function: t.Function, Tool: t.ToolName, File: t.File, Err: err}
}

// ParseTrigger reads an mcpToolTrigger binding of fn (file is the
// function.json path, used in messages). Rules: "toolName" must be a non-empty
// string; the "description" key must be present (null means ""); "title" is
// an optional string; "toolProperties", when present and not null, must be a
// string holding a JSON array of tool properties; "metadata", when present,
// must be a string holding a JSON object (an empty string means none) or the
// object itself; "inputSchema", "outputSchema" and "naturalOutputSchema" must
// be strings;
// "useWorkerInputSchema" and "useResultSchema" booleans. The schemas are not
// checked here: see [Trigger.InputSchema] and [Trigger.OutputSchema].
//
// Every problem is reported; each is a *ToolError, joined when there are
// several.
func ParseTrigger(fn *metadata.Function, b *metadata.Binding, file string) (*Trigger, error) {
	t := &Trigger{File: file}
	if fn != nil {
		t.Function = fn.Name
	}
	if b == nil {
		return nil, t.toolErr(errors.New("the mcpToolTrigger binding is null"))
	}
	t.Name = b.Name()

	var errs []error
	fail := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf(format, args...))
	}

	if !b.IsType(metadata.TypeMcpToolTrigger) {
		fail("binding type is %q, not %q", b.Type(), metadata.TypeMcpToolTrigger)
	}

	switch name, present, err := optionalString(b, metadata.KeyToolName); {
	case !present:
		fail("%s is missing", metadata.KeyToolName)
	case err != nil:
		fail("%s %w", metadata.KeyToolName, err)
	case strings.TrimSpace(name) == "":
		fail("%s is empty", metadata.KeyToolName)
	default:
		t.ToolName = name
		if err := CheckToolName(name); err != nil {
			errs = append(errs, err)
		}
	}

	switch desc, present, err := optionalString(b, metadata.KeyDescription); {
	case !present:
		fail("%s is missing: the key is required (its value may be null)", metadata.KeyDescription)
	case err != nil:
		fail("%s %w", metadata.KeyDescription, err)
	default:
		t.Description = desc
	}

	if title, _, err := optionalString(b, metadata.KeyTitle); err != nil {
		fail("%s %w", metadata.KeyTitle, err)
	} else {
		t.Title = title
	}

	if props, err := parseToolProperties(b); err != nil {
		errs = append(errs, err)
	} else {
		t.Properties = props
	}

	if meta, err := parseMetadata(b); err != nil {
		errs = append(errs, err)
	} else {
		t.Metadata = meta
	}

	if s, _, err := optionalString(b, metadata.KeyInputSchema); err != nil {
		fail("%s %w (JSON encoded as a string)", metadata.KeyInputSchema, err)
	} else {
		t.InputSchemaText = s
	}
	if s, _, err := optionalString(b, metadata.KeyOutputSchema); err != nil {
		fail("%s %w (JSON encoded as a string)", metadata.KeyOutputSchema, err)
	} else {
		t.OutputSchemaText = s
	}
	if s, _, err := optionalString(b, metadata.KeyNaturalOutputSchema); err != nil {
		fail("%s %w (JSON encoded as a string)", metadata.KeyNaturalOutputSchema, err)
	} else {
		t.NaturalOutputSchemaText = s
	}

	if kinds, err := parseContentKinds(b); err != nil {
		errs = append(errs, err)
	} else {
		t.ContentKinds = kinds
	}
	if s, _, err := optionalString(b, metadata.KeyOutputValidation); err != nil {
		fail("%s %w", metadata.KeyOutputValidation, err)
	} else if t.OutputValidation, err = metadata.ParseOutputValidation(s); err != nil {
		fail("%s: %w", metadata.KeyOutputValidation, err)
	}
	if s, _, err := optionalString(b, metadata.KeyInputValidation); err != nil {
		fail("%s %w", metadata.KeyInputValidation, err)
	} else if t.InputValidation, err = metadata.ParseOutputValidation(s); err != nil {
		fail("%s: %w", metadata.KeyInputValidation, err)
	}
	if s, _, err := optionalString(b, metadata.KeyTextCopy); err != nil {
		fail("%s %w", metadata.KeyTextCopy, err)
	} else if t.TextCopy, err = metadata.ParseTextCopy(s); err != nil {
		fail("%s: %w", metadata.KeyTextCopy, err)
	}

	errs = append(errs, t.parseExtras(b)...)

	for _, key := range []string{metadata.KeyUseWorkerInputSchema, metadata.KeyUseResultSchema} {
		v, err := optionalBool(b, key)
		if err != nil {
			fail("%s %w", key, err)
			continue
		}
		if key == metadata.KeyUseWorkerInputSchema {
			t.UseWorkerInputSchema = v
		} else {
			t.UseResultSchema = v
		}
	}

	if len(errs) == 0 {
		return t, nil
	}
	wrapped := make([]error, len(errs))
	for i, err := range errs {
		wrapped[i] = t.toolErr(err)
	}
	if len(wrapped) == 1 {
		return nil, wrapped[0]
	}
	return nil, errors.Join(wrapped...)
}

var errNotString = errors.New("must be a string")

// optionalString returns the string value of key (matched
// case-insensitively). JSON null reads as "". present is false when the key
// is absent; err is set when the value is neither a string nor null.
func optionalString(b *metadata.Binding, key string) (s string, present bool, err error) {
	raw, ok := b.Lookup(key)
	if !ok {
		return "", false, nil
	}
	if jsonx.IsNull(raw) {
		return "", true, nil
	}
	s, ok = jsonx.StringValue(raw)
	if !ok {
		return "", true, errNotString
	}
	return s, true, nil
}

// optionalBool returns the boolean value of key; absent or null is false.
func optionalBool(b *metadata.Binding, key string) (bool, error) {
	raw, ok := b.Lookup(key)
	if !ok || jsonx.IsNull(raw) {
		return false, nil
	}
	var v bool
	if err := json.Unmarshal(raw, &v); err != nil {
		return false, errors.New("must be a boolean")
	}
	return v, nil
}

// parseToolProperties decodes toolProperties: a string holding a JSON array of
// tool properties, item keys matched case-insensitively.
func parseToolProperties(b *metadata.Binding) ([]metadata.ToolProperty, error) {
	raw, ok := b.Lookup(metadata.KeyToolProperties)
	if !ok || jsonx.IsNull(raw) {
		return nil, nil
	}
	text, ok := jsonx.StringValue(raw)
	if !ok && json.Unmarshal(raw, &text) != nil {
		return nil, fmt.Errorf("%s must be a string holding a JSON array", metadata.KeyToolProperties)
	}
	trimmed := strings.TrimSpace(text)
	if trimmed == "" || trimmed[0] != '[' {
		return nil, fmt.Errorf("%s must be a string holding a JSON array", metadata.KeyToolProperties)
	}
	if props, ok := scanToolProperties([]byte(trimmed)); ok {
		return props, nil
	}
	props := []metadata.ToolProperty{}
	if err := json.Unmarshal([]byte(trimmed), &props); err != nil {
		return nil, fmt.Errorf("%s is not a valid JSON array of tool properties: %w", metadata.KeyToolProperties, err)
	}
	return props, nil
}

// AdvertisedMeta returns the tool's _meta as tools/list advertises it: the
// metadata object, plus the declared content kinds under
// [metadata.MetaKeyContentKinds] when there are any. nil when both are
// absent.
func (t *Trigger) AdvertisedMeta() json.RawMessage {
	if len(t.ContentKinds) == 0 {
		return t.Metadata
	}
	var obj metadata.Binding // an ordered JSON object
	if len(t.Metadata) > 0 {
		_ = obj.UnmarshalJSON(t.Metadata) // checked by ParseTrigger
	}
	kinds, _ := metadata.Marshal(t.ContentKinds)
	_ = obj.SetRaw(metadata.MetaKeyContentKinds, kinds)
	data, _ := obj.MarshalJSON()
	return data
}

// parseContentKinds decodes contentKinds: a string holding a JSON array of
// MIME types (see [ParseContentKinds]). Absent, null or "" means none.
func parseContentKinds(b *metadata.Binding) ([]string, error) {
	text, _, err := optionalString(b, metadata.KeyContentKinds)
	if err != nil || strings.TrimSpace(text) == "" {
		if err != nil {
			return nil, fmt.Errorf("%s must be a string holding a JSON array", metadata.KeyContentKinds)
		}
		return nil, nil
	}
	var kinds []string
	if err := json.Unmarshal([]byte(text), &kinds); err != nil {
		return nil, fmt.Errorf("%s must be a string holding a JSON array of strings: %w", metadata.KeyContentKinds, err)
	}
	kinds, err = ParseContentKinds(kinds)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", metadata.KeyContentKinds, err)
	}
	return kinds, nil
}

// parseMetadata decodes metadata: a string holding a JSON object, or the
// object itself. An empty string or an empty object means none.
func parseMetadata(b *metadata.Binding) (json.RawMessage, error) {
	raw, ok := b.Lookup(metadata.KeyMetadata)
	if !ok || jsonx.IsNull(raw) {
		return nil, nil
	}
	data := bytes.TrimSpace(raw)
	if len(data) > 0 && data[0] == '"' {
		var text string
		if err := json.Unmarshal(data, &text); err != nil {
			return nil, fmt.Errorf("%s is not valid JSON: %w", metadata.KeyMetadata, err)
		}
		data = bytes.TrimSpace([]byte(text))
		if len(data) == 0 {
			return nil, nil
		}
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, data); err != nil {
		return nil, fmt.Errorf("%s is not valid JSON: %w", metadata.KeyMetadata, err)
	}
	if buf.Bytes()[0] != '{' {
		return nil, fmt.Errorf("%s must be a JSON object (as a string or an object)", metadata.KeyMetadata)
	}
	if buf.Len() == 2 { // {}
		return nil, nil
	}
	return buf.Bytes(), nil
}

// OutputSchema checks and compiles the tool's output schema. An absent or
// empty outputSchema means none: (nil, nil). Any other text, whitespace
// included, must pass [ParseSchema]; the error is a *ToolError wrapping the
// *SyntaxError, *ShapeError or *CompileError.
func (t *Trigger) OutputSchema() (*Schema, error) { return t.outputSchema(nil) }

func (t *Trigger) outputSchema(c *Compiler) (*Schema, error) {
	if t.OutputSchemaText == "" {
		return nil, nil
	}
	s, err := c.ParseSchema(OutputSchema, t.OutputSchemaText)
	if err != nil {
		return nil, t.toolErr(err)
	}
	return s, nil
}

// ErrNaturalWithoutOutputSchema is the reason given when naturalOutputSchema
// is set but outputSchema, its object projection, is not.
var ErrNaturalWithoutOutputSchema = errors.New("naturalOutputSchema is set but outputSchema, its object projection for clients before MCP 2026-07-28, is missing")

// NotProjectionError is an outputSchema that is not the object projection
// ([ProjectSchema]) of the naturalOutputSchema beside it.
type NotProjectionError struct {
	Want json.RawMessage // the projection of the natural schema
}

func (e *NotProjectionError) Error() string {
	return fmt.Sprintf("outputSchema is not the object projection of naturalOutputSchema: want %s", e.Want)
}

// naturalOutputSchema checks and compiles the natural output schema against
// the compiled output schema out. It returns the field values are wrapped in
// for legacy clients, "" when they are not wrapped.
func (t *Trigger) naturalOutputSchema(c *Compiler, out *Schema) (*Schema, string, error) {
	if t.NaturalOutputSchemaText == "" {
		return nil, "", nil
	}
	if out == nil {
		if t.OutputSchemaText == "" {
			return nil, "", t.toolErr(ErrNaturalWithoutOutputSchema)
		}
		return nil, "", nil // outputSchema failed already; that error says why
	}
	natural, err := c.ParseNaturalSchema(t.NaturalOutputSchemaText)
	if err != nil {
		return nil, "", t.toolErr(fmt.Errorf("%s: %w", metadata.KeyNaturalOutputSchema, err))
	}
	field := DefaultOutputField
	want, wrapped, err := ProjectSchema(natural.JSON(), field)
	if err != nil {
		return nil, "", t.toolErr(err)
	}
	if wrapped {
		if f, ok := singleProperty(out.JSON()); ok {
			field = f
			if want, _, err = ProjectSchema(natural.JSON(), field); err != nil {
				return nil, "", t.toolErr(err)
			}
		}
	} else {
		field = ""
	}
	if !jsonEqual(want, out.JSON()) {
		return nil, "", t.toolErr(&NotProjectionError{Want: want})
	}
	return natural, field, nil
}

// singleProperty returns the name of the only property of an object schema.
func singleProperty(schema json.RawMessage) (string, bool) {
	var root struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(schema, &root) != nil || len(root.Properties) != 1 {
		return "", false
	}
	for name := range root.Properties {
		return name, true
	}
	return "", false
}

// jsonEqual reports whether two JSON texts hold the same value.
func jsonEqual(a, b json.RawMessage) bool {
	va, errA := DecodeJSON(a)
	vb, errB := DecodeJSON(b)
	return errA == nil && errB == nil && reflect.DeepEqual(va, vb)
}

// ErrMissingWorkerInputSchema is the reason given when useWorkerInputSchema is
// true but there is no inputSchema.
var ErrMissingWorkerInputSchema = errors.New("input schema is missing although useWorkerInputSchema is true")

// InputSchema checks and compiles the tool's input schema: with
// UseWorkerInputSchema the worker's inputSchema (which must then be present),
// otherwise the schema [PropertiesSchema] builds from Properties. Errors are
// *ToolError.
func (t *Trigger) InputSchema() (*Schema, error) { return t.inputSchema(nil) }

func (t *Trigger) inputSchema(c *Compiler) (*Schema, error) {
	text := t.InputSchemaText
	if t.UseWorkerInputSchema {
		if text == "" {
			return nil, t.toolErr(ErrMissingWorkerInputSchema)
		}
	} else {
		text = string(PropertiesSchema(t.Properties))
	}
	s, err := c.ParseSchema(InputSchema, text)
	if err != nil {
		if !t.UseWorkerInputSchema {
			err = fmt.Errorf("building from %s: %w", metadata.KeyToolProperties, err)
		}
		return nil, t.toolErr(err)
	}
	return s, nil
}

// PropertiesSchema builds the input schema of a tool from its properties,
// exactly as the Azure Functions MCP extension does:
//
//	{"type":"object","properties":{…},"required":[…]}
//
// "required" is always present (the distinct names of required properties,
// in declaration order); properties with a blank name are skipped (a repeated
// name keeps its first position and its last definition). A scalar property is
// {"type", "enum"?, "description"}; an array property is {"type":"array",
// "items":{"type", "enum"?}, "description"}; "enum" appears only when there are
// values; "description" defaults to "".
func PropertiesSchema(props []metadata.ToolProperty) json.RawMessage {
	type entry struct {
		name string
		prop metadata.ToolProperty
	}
	var entries []entry
	index := map[string]int{}
	var required []string
	seenRequired := map[string]bool{}
	for _, p := range props {
		if strings.TrimSpace(p.PropertyName) == "" {
			continue
		}
		if i, ok := index[p.PropertyName]; ok {
			entries[i].prop = p
		} else {
			index[p.PropertyName] = len(entries)
			entries = append(entries, entry{p.PropertyName, p})
		}
		if p.IsRequired && !seenRequired[p.PropertyName] {
			seenRequired[p.PropertyName] = true
			required = append(required, p.PropertyName)
		}
	}

	var buf bytes.Buffer
	buf.WriteString(`{"type":"object","properties":{`)
	for i, e := range entries {
		if i > 0 {
			buf.WriteByte(',')
		}
		writeString(&buf, e.name)
		buf.WriteByte(':')
		writeProperty(&buf, e.prop)
	}
	buf.WriteString(`},"required":[`)
	for i, name := range required {
		if i > 0 {
			buf.WriteByte(',')
		}
		writeString(&buf, name)
	}
	buf.WriteString(`]}`)
	return buf.Bytes()
}

func writeProperty(buf *bytes.Buffer, p metadata.ToolProperty) {
	buf.WriteString(`{"type":`)
	if p.IsArray {
		buf.WriteString(`"array","items":{"type":`)
		writeString(buf, p.PropertyType)
		writeEnum(buf, p.EnumValues)
		buf.WriteByte('}')
	} else {
		writeString(buf, p.PropertyType)
		writeEnum(buf, p.EnumValues)
	}
	buf.WriteString(`,"description":`)
	writeString(buf, p.Description)
	buf.WriteByte('}')
}

func writeEnum(buf *bytes.Buffer, values []string) {
	if len(values) == 0 {
		return
	}
	buf.WriteString(`,"enum":[`)
	for i, v := range values {
		if i > 0 {
			buf.WriteByte(',')
		}
		writeString(buf, v)
	}
	buf.WriteByte(']')
}

// writeString writes s as a JSON string, as metadata.Marshal does.
func writeString(buf *bytes.Buffer, s string) {
	buf.Write(metadata.AppendJSONString(buf.AvailableBuffer(), s))
}
