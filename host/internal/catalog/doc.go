// Package catalog is the loaded function app: the MCP functions the host
// serves, and what it could not load.
//
// [Load] reads every <function>/function.json under the script root
// (metadata.ReadApp) and loads each mcpToolTrigger into a [Tool] with
// binding's rules, the ones the worker applies when it emits the function
// (tool name, schema size and depth, local $ref, the schemas, a compile
// budget): each distinct schema text is compiled once, on all CPUs. A
// function or tool that fails is recorded (its error names the function,
// the tool, the file and the reason) and is not served; the others are.
// Tool names compare case-insensitively for duplicates, and
// [Catalog.Lookup] finds a tool by its exact name. A function that
// function.json or the app setting AzureWebJobs.<name>.Disabled disables
// is listed with the reason and not loaded. Schemas Load checked but left
// to compile are compiled by [Catalog.CompileDeferred] before calls need
// them.
//
// The tools/list arrays are encoded once, sorted by tool name, one per
// family of MCP revisions that see the same tool objects: revisions before
// 2026-07-28 (object output schemas) and later ones (natural output
// schemas, SEP-2106); [Catalog.ToolsList] returns the same bytes every time.
//
// [Catalog.CheckArguments] bounds what a call's arguments may cost (size,
// nesting, object keys) before anything else is done with them, with the
// JSON measure (jsonx.Measure) that bounds the schemas at load;
// [Catalog.CheckRawArguments] applies the same bounds to an arguments
// object as the client sent it, before anything decodes it (the MCP
// endpoint calls it for tools/call, prompts/get and completion's
// context.arguments). Checks of a call's input against the tool belong
// beside them.
//
// # Resources, templates and prompts
//
// The catalog is of MCP functions, not of tools only: [FunctionStatus] and
// the failures are shared by every kind; tools.go holds what is specific
// to tools (loading, lookup, the list arrays) and functions.go the
// resources, resource templates and prompts, loaded with binding's rules
// into a binding.Registry (unique URIs and prompt names, no two templates
// of one structure): [Catalog.LookupResource] (a static resource, else
// the template a URI matches), [Catalog.Template], [Catalog.Prompt] and
// their list entries, encoded once.
//
// # Scopes
//
// What requires scopes is read from the catalog: [Catalog.DeclaredScopes]
// (the scopes_supported of the protected resource metadata) and
// [Catalog.ScopedEntries] (what the host warns about when it takes no
// access tokens); the scopes one request needs come with its resolved
// target (the tool, prompt or resource entry), which the host's scope
// link checks once.
package catalog
