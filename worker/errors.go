package worker

import (
	"errors"
	"fmt"

	"github.com/funcmcp/funcmcp/binding"
)

// ConfigError is one configuration problem of one tool, resource (or
// resource template) or prompt, reported by [App.Build], [App.Functions],
// [App.EmitMetadata] and the serve and emit-metadata modes. Reach it with
// errors.As; Err says which rule was broken and is one of the sentinel
// errors below, a *binding.SyntaxError, *binding.ShapeError or
// *binding.CompileError (schema checks), a *binding.LoadError (the checks
// of resources and prompts the host applies too, wrapping for instance a
// *binding.URIError or a *binding.DuplicateError), or a metadata error.
type ConfigError struct {
	Tool     string // the tool name as configured ("" for a resource or prompt)
	Resource string // the resource URI or URI template ("" for a tool or prompt)
	Prompt   string // the prompt name ("" for a tool or resource)
	Function string // the function folder name ("" when unknown)
	Err      error

	kind string // "resource", "resource template" or "prompt"; "" for a tool
}

func (e *ConfigError) Error() string {
	kind, name := "tool", e.Tool
	switch {
	case e.kind == binding.KindPrompt || e.kind == "" && e.Prompt != "":
		kind, name = binding.KindPrompt, e.Prompt
	case e.kind != "":
		kind, name = e.kind, e.Resource
	case e.Resource != "":
		kind, name = binding.KindResource, e.Resource
	}
	switch {
	case e.Function != "" && e.Function != name:
		return fmt.Sprintf("%s %q (function %q): %v", kind, name, e.Function, e.Err)
	default:
		return fmt.Sprintf("%s %q: %v", kind, name, e.Err)
	}
}

func (e *ConfigError) Unwrap() error { return e.Err }

// Rules a tool configuration can break (match with errors.Is).
var (
	// ErrEmptyToolName: ConfigureMcpTool or AddTool was given "".
	ErrEmptyToolName = errors.New("the tool name is empty")
	// ErrInvalidToolName: the tool name breaks the MCP rule (1 to 128
	// characters of A-Z, a-z, 0-9, '_', '.' and '-'), which funchost
	// applies too (binding.CheckToolName).
	ErrInvalidToolName = errors.New("invalid tool name")
	// ErrInvalidFunctionName: the function folder name breaks the Azure
	// Functions naming rule; the wrapped error says which part.
	ErrInvalidFunctionName = errors.New("invalid function name")
	// ErrNoHandler: the tool has no handler (Handle or AddTool).
	ErrNoHandler = errors.New("the tool has no handler: call Handle or use AddTool")
	// ErrTwoHandlers: Handle or AddTool was called twice for the tool.
	ErrTwoHandlers = errors.New("the tool has more than one handler")
	// ErrDuplicateFunction: two tools map to the same function folder
	// (compared case-insensitively, as the Functions host does).
	ErrDuplicateFunction = errors.New("the function name is already used by another tool")
	// ErrDuplicateToolName: two tools differ only in the case of their names;
	// MCP hosts match tool names case-insensitively.
	ErrDuplicateToolName = errors.New("the tool name differs only in case from another tool")
	// ErrEmptyPropertyName: WithProperty was given an empty name.
	ErrEmptyPropertyName = errors.New("a property name is empty")
	// ErrNoPropertyType: WithProperty was given the zero PropertyType.
	ErrNoPropertyType = errors.New("a property type is not set")
	// ErrEmptyMetadataKey: WithMetadata was given an empty key.
	ErrEmptyMetadataKey = errors.New("a metadata key is empty")
	// ErrMetadataValue: a WithMetadata value cannot be encoded as JSON.
	ErrMetadataValue = errors.New("a metadata value cannot be encoded as JSON")
	// ErrInputType: AddTool's In type does not describe a JSON object or has
	// no JSON schema.
	ErrInputType = errors.New("the input type cannot be used for tool arguments")
	// ErrOutputType: AddTool's Out type has no JSON schema.
	ErrOutputType = errors.New("the output type cannot be used for a tool result")
	// ErrEmptyOutputField: WithOutputField was given "".
	ErrEmptyOutputField = errors.New("the output field name is empty")
	// ErrOutputSetting: WithOutputValidation or WithTextCopy was given an
	// unknown mode.
	ErrOutputSetting = errors.New("unknown output setting")
	// ErrScope: WithRequiredScopes was given something that is not an
	// OAuth scope, offline_access, or a scope twice.
	ErrScope = errors.New("invalid required scope")
	// ErrContentKind: WithContentKinds was given something that is not a
	// MIME type.
	ErrContentKind = errors.New("invalid content kind")
	// ErrPromptInputType: AddPrompt's In type is not a struct of string
	// fields.
	ErrPromptInputType = errors.New("the input type cannot be used for prompt arguments")
	// ErrNoCompletionFunc: WithCompletionFunc was given a nil function.
	ErrNoCompletionFunc = errors.New("the completion function is nil")
	// ErrApp: the MCP App configuration of a tool is incomplete or wrong
	// (no view, an empty title, domain, CSP origin or assets folder).
	ErrApp = errors.New("invalid MCP App configuration")
	// ErrEmptyResourceURI: ConfigureMcpResource was given "".
	ErrEmptyResourceURI = errors.New("the resource URI is empty")
	// ErrEmptyPromptName: ConfigureMcpPrompt or AddPrompt was given "".
	ErrEmptyPromptName = errors.New("the prompt name is empty")
)
