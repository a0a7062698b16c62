package metadata

// The keys of the resource and prompt triggers, as the Azure Functions MCP
// extension's attribute binders read them. They were checked against
// Azure/azure-functions-mcp-extension at commit
// cd0d1e8cd2221f9289f8ac1ed3aa400aa32422a9 (host and worker 1.6.0):
//
//   - src/Microsoft.Azure.Functions.Extensions.Mcp/Trigger/McpResourceTriggerAttribute.cs
//     (uri and resourceName are constructor parameters, so the keys must be
//     present; title, description, mimeType and metadata are strings, size a
//     number: C# long?);
//   - .../Trigger/McpPromptTriggerAttribute.cs (promptName is the
//     constructor parameter; title, description, promptArguments, metadata
//     and icons are strings, promptArguments, metadata and icons holding
//     JSON; useResultSchema a boolean);
//   - .../InputBinding/McpPromptArgumentAttribute.cs (argumentName,
//     description, isRequired);
//   - .../Trigger/McpPromptTriggerBinding.cs (promptArguments decoded as a
//     list of ModelContextProtocol PromptArgument {name, title, description,
//     required}, icons as a list of Icon {src, mimeType, sizes, theme}, both
//     with case-insensitive property names);
//   - the worker's src/Microsoft.Azure.Functions.Worker.Extensions.Mcp/McpApp/Configuration/McpAppFunctionMetadataFactory.cs
//     and McpAppUtilities.cs (the MCP App view function).

// Binding types of the resource and prompt triggers.
const (
	// TypeMcpResourceTrigger is the trigger of a function that serves an MCP
	// resource or resource template (resources/read).
	TypeMcpResourceTrigger = "mcpResourceTrigger"
	// TypeMcpPromptTrigger is the trigger of a function that serves an MCP
	// prompt (prompts/get).
	TypeMcpPromptTrigger = "mcpPromptTrigger"
	// TypeMcpPromptArgument is an input binding that delivers one prompt
	// argument (the .NET worker writes one per [McpPromptArgument]
	// parameter; the extension lists a prompt's arguments from
	// promptArguments only).
	TypeMcpPromptArgument = "mcpPromptArgument"
)

// Keys of an mcpResourceTrigger binding.
const (
	// KeyURI is the resource's URI, or its URI template when it holds
	// {variable} expressions (required).
	KeyURI = "uri"
	// KeyResourceName is the resource's name (required).
	KeyResourceName = "resourceName"
	// KeyMimeType is the MIME type of the resource's contents.
	KeyMimeType = "mimeType"
	// KeySize is the size of the resource in bytes: a JSON number.
	KeySize = "size"
)

// Keys of an mcpPromptTrigger binding. KeyTitle, KeyDescription,
// KeyMetadata and KeyUseResultSchema are shared with the tool trigger.
const (
	// KeyPromptName is the prompt's name (required).
	KeyPromptName = "promptName"
	// KeyPromptArguments is a string holding a JSON array of
	// [PromptArgument].
	KeyPromptArguments = "promptArguments"
	// KeyIcons is a string holding a JSON array of [Icon]. The extension
	// reads it on prompts; on tools and resources it is a funcmcp key (the
	// extension ignores it there).
	KeyIcons = "icons"
)

// Keys of an mcpPromptArgument binding.
const (
	KeyArgumentName = "argumentName"
	KeyIsRequired   = "isRequired"
)

// Keys only funcmcp reads; the Azure Functions host ignores them, and does
// not advertise what they describe.
const (
	// KeyCompletions, on a prompt or resource-template trigger, is a string
	// holding a JSON object that maps an argument (or template variable)
	// name to its completion source: {"values":[…]} for a fixed list, or
	// {"dynamic":true} when the worker computes the values (see
	// [HeaderMethod] and [Completions]).
	KeyCompletions = "completions"
	// KeyAnnotations, on a tool trigger, is a string holding the tool's
	// annotations as a JSON object ([ToolAnnotations]).
	KeyAnnotations = "annotations"
)

// DirectionInApp is the direction the .NET worker writes on the MCP App view
// function's trigger; the Functions host reads directions
// case-insensitively.
const DirectionInApp = "In"

// MCP Apps (SEP-1865): a tool with a UI view is advertised with
// _meta.ui.resourceUri, and a resource function serves the view at that URI.
const (
	// AppViewMimeType is the MIME type of an MCP App view.
	AppViewMimeType = "text/html;profile=mcp-app"
	// AppFunctionPrefix starts the name of the function that serves a tool's
	// view: "functions--mcpapp-<tool name>".
	AppFunctionPrefix = "functions--mcpapp-"
	// MetaKeyUI is the _meta key of the tool's UI (resourceUri,
	// visibility) and of the view's resource contents (csp, permissions,
	// prefersBorder, domain).
	MetaKeyUI = "ui"
)

// AppViewURI returns the URI of a tool's MCP App view, "ui://<tool>/view".
func AppViewURI(toolName string) string { return "ui://" + toolName + "/view" }

// AppViewResourceName returns the resource name of a tool's MCP App view,
// "<tool>_view".
func AppViewResourceName(toolName string) string { return toolName + "_view" }

// AppViewFunctionName returns the name of the function that serves a tool's
// MCP App view, "functions--mcpapp-<tool>".
func AppViewFunctionName(toolName string) string { return AppFunctionPrefix + toolName }
