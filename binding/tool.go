package binding

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/funcmcp/funcmcp/internal/jsonx"
	"github.com/funcmcp/funcmcp/metadata"
)

// Tool is everything needed to serve one tool, built once at load: the parsed
// trigger and its compiled schemas.
type Tool struct {
	Trigger *Trigger
	// Input is the compiled input schema; never nil for a loaded tool.
	Input *Schema
	// Output is the compiled output schema; nil when the tool has none. Its
	// root is always an object: it is what clients before MCP 2026-07-28
	// see, and what the worker's structuredContent is checked against.
	Output *Schema
	// Natural is the compiled natural output schema (naturalOutputSchema),
	// which clients of MCP 2026-07-28 and later see; nil when Output is
	// its own natural form.
	Natural *Schema
	// OutputField is the member the worker wraps natural values in
	// ({"<field>": value}, see [ProjectValue]); "" when values are not
	// wrapped.
	OutputField string
	// Required lists the required argument names, from the input schema's
	// root "required" (string entries only, in order).
	Required []string
}

// LoadTool decides whether the trigger binding b of fn is a tool that can be
// served, and prepares it: the trigger's keys and the tool name rule
// ([ParseTrigger]), then its schemas checked ([ParseSchema]: bounds of
// [Limits], here the defaults, shape, $ref checks) and compiled within the
// compile-time budget. It
// is the one rule both sides apply: the worker SDK before it emits a
// function.json, funchost when it loads one. Every problem is returned,
// joined; each is a *ToolError.
func LoadTool(fn *metadata.Function, b *metadata.Binding, file string) (*Tool, error) {
	return (*Compiler)(nil).LoadTool(fn, b, file)
}

// LoadTool is [LoadTool] with c's limits and the schemas compiled by c, so
// tools with the same schema text share one compiled schema.
func (c *Compiler) LoadTool(fn *metadata.Function, b *metadata.Binding, file string) (*Tool, error) {
	trig, err := ParseTrigger(fn, b, file)
	if err != nil {
		return nil, err
	}
	return withinBudget(trig.Function, file, trig.ToolName, c.limits().CompileTime, func() (*Tool, error) {
		return c.compileTool(trig)
	})
}

// compileTool checks and compiles the schemas of a parsed trigger.
func (c *Compiler) compileTool(trig *Trigger) (*Tool, error) {
	in, inErr := trig.inputSchema(c)
	out, outErr := trig.outputSchema(c)
	natural, field, natErr := trig.naturalOutputSchema(c, out)
	if err := errors.Join(inErr, outErr, natErr); err != nil {
		return nil, err
	}
	return &Tool{Trigger: trig, Input: in, Output: out, Natural: natural, OutputField: field, Required: requiredNames(in)}, nil
}

// AdvertisedOutputSchema is the output schema a client speaking the MCP
// revision version is shown: the natural schema (as an object, see
// [WireSchema]) from 2026-07-28 on, else the object schema. nil when the tool
// has none.
func (t *Tool) AdvertisedOutputSchema(version string) json.RawMessage {
	switch {
	case t.Output == nil:
		return nil
	case t.Natural != nil && !NeedsProjection(version):
		return WireSchema(t.Natural.JSON())
	}
	return t.Output.JSON()
}

// ResultFor turns a shaped result into the form a client speaking version
// expects, in place: from 2026-07-28 on, a wrapped value is unwrapped
// ([UnprojectResult]); earlier clients get it as it is.
func (t *Tool) ResultFor(version string, res *metadata.CallToolResult) error {
	if t.OutputField == "" || NeedsProjection(version) {
		return nil
	}
	return UnprojectResult(res, t.OutputField)
}

// OutputSettings returns the tool's effective settings: its own
// (function.json outputValidation, inputValidation and textCopy) over app's
// (host.json, or the worker's options), then the defaults strict, strict and
// json.
func (t *Tool) OutputSettings(app metadata.OutputSettings) metadata.OutputSettings {
	return metadata.OutputSettings{
		Validation:      cmp.Or(t.Trigger.OutputValidation, app.Validation, metadata.ValidationStrict),
		InputValidation: cmp.Or(t.Trigger.InputValidation, app.InputValidation, metadata.ValidationStrict),
		TextCopy:        cmp.Or(t.Trigger.TextCopy, app.TextCopy, metadata.TextCopyJSON),
	}
}

// requiredNames returns the string entries of the schema's root
// "required", read when the schema was parsed; the slice is shared by the
// tools of one schema and must not be modified.
func requiredNames(s *Schema) []string {
	if s == nil {
		return nil
	}
	return s.required
}

// MissingArguments lists, in order, the required argument names whose
// argument is absent or JSON null; nil when none is missing. Empty strings,
// 0, false, [] and {} are present values, as in the MCP extension.
func (t *Tool) MissingArguments(args map[string]json.RawMessage) []string {
	var missing []string
	for _, name := range t.Required {
		raw, ok := args[name]
		if !ok || jsonx.IsAbsent(raw) {
			missing = append(missing, name)
		}
	}
	return missing
}

// InputIssue is a call whose arguments break the tool's input schema (Err is
// a *ValidationError). It stays a type apart from [OutputIssue], whose shape
// it shares: callers tell a refused call from a replaced result with
// errors.As. Both messages are made by issueMessage.
type InputIssue struct {
	Tool string
	// Mode is what was done: under [metadata.ValidationStrict] the call was
	// refused with this message; under [metadata.ValidationWarn] it went on.
	Mode metadata.OutputValidation
	Err  error
}

// Error is the message the call is refused with, naming the tool and giving
// the JSON pointer of each problem in the arguments.
func (i *InputIssue) Error() string { return issueMessage("Input", "input", i.Tool, i.Err) }

// issueMessage is the message of an [InputIssue] or an [OutputIssue]:
// which part of the call of tool breaks its schema, with the JSON pointer
// of each problem when err is a *ValidationError.
func issueMessage(part, schema, tool string, err error) string {
	var ve *ValidationError
	if errors.As(err, &ve) {
		parts := make([]string, len(ve.Problems))
		for j, p := range ve.Problems {
			parts[j] = p.String()
		}
		return fmt.Sprintf("%s of tool '%s' does not match its %s schema: %s", part, tool, schema, strings.Join(parts, "; "))
	}
	return fmt.Sprintf("%s of tool '%s' %v", part, tool, err)
}

func (i *InputIssue) Unwrap() error { return i.Err }

// LogMessage is the line both sides log for the issue: the message, and
// under warn that the call went on.
func (i *InputIssue) LogMessage() string {
	if i.Mode == metadata.ValidationWarn {
		return i.Error() + " (called anyway: inputValidation is warn)"
	}
	return i.Error()
}

// CheckInput validates a call's arguments (a JSON object; empty or null
// means none, {}) against the compiled input schema, unless the tool's
// inputValidation (over app's, see [Tool.OutputSettings]) is off. The
// worker runs it before the handler, the host before forwarding the call.
// It returns nil when the arguments match; under strict the caller refuses
// the call with the issue's message, under warn it logs it and goes on.
// Nothing is compiled: the input schema was at load.
func (t *Tool) CheckInput(args json.RawMessage, app metadata.OutputSettings) *InputIssue {
	mode := t.OutputSettings(app).InputValidation
	if mode == metadata.ValidationOff || t.Input == nil {
		return nil
	}
	if jsonx.IsAbsent(args) {
		args = emptyObject
	}
	if err := t.Input.ValidateText(args); err != nil {
		return &InputIssue{Tool: t.Trigger.ToolName, Mode: mode, Err: err}
	}
	return nil
}

var emptyObject = json.RawMessage(`{}`)
