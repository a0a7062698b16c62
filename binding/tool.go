package binding

import (
	"encoding/json"
	"errors"

	"github.com/funcmcp/funcmcp/metadata"
)

// Tool is everything needed to serve one tool, built once at load: the parsed
// trigger and its compiled schemas.
type Tool struct {
	Trigger *Trigger
	// Input is the compiled input schema; never nil for a loaded tool.
	Input *Schema
	// Output is the compiled output schema; nil when the tool has none.
	Output *Schema
	// Required lists the required argument names, from the input schema's
	// root "required" (string entries only, in order).
	Required []string
}

// LoadTool parses the trigger binding b of fn and checks and compiles both of
// its schemas. Every problem is returned, joined; each is a *ToolError.
func LoadTool(fn *metadata.Function, b *metadata.Binding, file string) (*Tool, error) {
	return (*Compiler)(nil).LoadTool(fn, b, file)
}

// LoadTool is [LoadTool] with the schemas compiled by c, so tools with the
// same schema text share one compiled schema.
func (c *Compiler) LoadTool(fn *metadata.Function, b *metadata.Binding, file string) (*Tool, error) {
	trig, err := ParseTrigger(fn, b, file)
	if err != nil {
		return nil, err
	}
	in, inErr := trig.inputSchema(c)
	out, outErr := trig.outputSchema(c)
	if err := errors.Join(inErr, outErr); err != nil {
		return nil, err
	}
	return &Tool{Trigger: trig, Input: in, Output: out, Required: requiredNames(in)}, nil
}

// requiredNames returns the string entries of the schema's root "required".
func requiredNames(s *Schema) []string {
	if s == nil {
		return nil
	}
	// A map, not a struct: JSON Schema keywords are case-sensitive.
	var root map[string]json.RawMessage
	var required []json.RawMessage
	if json.Unmarshal(s.JSON(), &root) != nil || json.Unmarshal(root["required"], &required) != nil {
		return nil
	}
	var names []string
	for _, raw := range required {
		var name string
		if json.Unmarshal(raw, &name) == nil && !isNull(raw) {
			names = append(names, name)
		}
	}
	return names
}

// MissingArguments lists, in order, the required argument names whose
// argument is absent or JSON null; nil when none is missing. Empty strings,
// 0, false, [] and {} are present values, as in the MCP extension.
func (t *Tool) MissingArguments(args map[string]json.RawMessage) []string {
	var missing []string
	for _, name := range t.Required {
		raw, ok := args[name]
		if !ok || len(raw) == 0 || isNull(raw) {
			missing = append(missing, name)
		}
	}
	return missing
}
