package metadata

// Binding types.
const (
	// TypeMcpToolTrigger is the binding type of an MCP tool's trigger.
	TypeMcpToolTrigger = "mcpToolTrigger"
	// TypeMcpToolProperty is the binding type of an input binding that
	// delivers one tool argument.
	TypeMcpToolProperty = "mcpToolProperty"
)

// Keys every binding has.
const (
	KeyType      = "type"
	KeyDirection = "direction"
	KeyName      = "name"
)

// Keys of an mcpToolTrigger binding.
const (
	// KeyToolName is the advertised tool name (required).
	KeyToolName = "toolName"
	// KeyDescription is the tool description. The key must be present; its
	// value may be null.
	KeyDescription = "description"
	// KeyTitle is the tool's display title. The Azure Functions MCP extension
	// ignores it; the funcmcp host advertises it.
	KeyTitle = "title"
	// KeyToolProperties is a string holding a JSON array of [ToolProperty].
	KeyToolProperties = "toolProperties"
	// KeyMetadata is a string holding a JSON object, advertised as the tool's _meta.
	KeyMetadata = "metadata"
	// KeyInputSchema is a string holding the input JSON Schema; used only
	// with KeyUseWorkerInputSchema.
	KeyInputSchema = "inputSchema"
	// KeyOutputSchema is a string holding the output JSON Schema. Its root is
	// always "type": "object", which the Azure Functions MCP extension and
	// clients before MCP 2026-07-28 require.
	KeyOutputSchema = "outputSchema"
	// KeyNaturalOutputSchema is a string holding the tool's natural output
	// schema — any JSON Schema 2020-12 document (SEP-2106): array, scalar,
	// oneOf roots… — when it differs from KeyOutputSchema, which then holds
	// its object projection. The Azure Functions host ignores the key;
	// funchost advertises it to MCP 2026-07-28 clients.
	KeyNaturalOutputSchema = "naturalOutputSchema"
	// KeyUseWorkerInputSchema (bool) says KeyInputSchema replaces the schema
	// built from KeyToolProperties.
	KeyUseWorkerInputSchema = "useWorkerInputSchema"
	// KeyUseResultSchema (bool) says the worker returns the [ToolResult] envelope.
	KeyUseResultSchema = "useResultSchema"
)

// Keys of an mcpToolProperty binding.
const (
	KeyPropertyName = "propertyName"
	KeyPropertyType = "propertyType"
)

// Binding directions.
const (
	DirectionIn  = "in"
	DirectionOut = "out"
)

// TriggerBindingName is the binding name the worker SDK gives every tool
// trigger; the invocation's Data carries the tool invocation context under it.
const TriggerBindingName = "context"

// FunctionFile is the file name of a function's metadata.
const FunctionFile = "function.json"

// Keys of an mcpToolTrigger binding that only funcmcp reads; the Azure
// Functions host ignores them (it binds the keys it knows and nothing else).
const (
	// KeyContentKinds is a string holding a JSON array of the content kinds
	// (MIME types, "image/*" for a family) the tool's results carry;
	// "application/json" stands for structuredContent and its text copy
	// (package binding checks them: ParseContentKinds, CheckContentKinds).
	KeyContentKinds = "contentKinds"
	// KeyOutputValidation ([OutputValidation]) overrides the app's output
	// validation for this tool.
	KeyOutputValidation = "outputValidation"
	// KeyInputValidation ([OutputValidation] modes) overrides the app's
	// validation of the arguments against the input schema for this tool.
	KeyInputValidation = "inputValidation"
	// KeyTextCopy ([TextCopy]) overrides the app's text copy of
	// structuredContent for this tool.
	KeyTextCopy = "textCopy"
)

// MetaKeyContentKinds is the key of the tools/list _meta entry that
// advertises a tool's declared content kinds (a JSON array of strings).
const MetaKeyContentKinds = "funcmcp/contentKinds"

// Keys of host.json "extensions.mcp" that both the host and the worker
// read, so that one setting governs both sides.
const (
	HostKeyOutputValidation = "outputValidation"
	HostKeyInputValidation  = "inputValidation"
	HostKeyTextCopy         = "textCopy"
)

// Defaults of host.json extensions.mcp serverName and serverVersion, the
// serverInfo of the Azure Functions MCP extension.
const (
	DefaultServerName    = "Azure Functions MCP server"
	DefaultServerVersion = "1.0.0"
)
