package host

import "github.com/funcmcp/funcmcp/host/internal/mcp"

// MethodSpec describes one MCP method the endpoint answers (an entry of
// metadata's method table, [metadata.MethodSpec]): its name, the
// revisions that have it, the params member naming its target, whether it
// may run as a task, and an example of valid params.
type MethodSpec = mcp.MethodSpec

// Methods returns every MCP method the endpoint answers, from the method
// table that routes them: whatever exercises every method (the hostile
// suite of tests/) reads it, so a method added to the table is covered
// without anyone listing it again.
func Methods() []MethodSpec { return mcp.Methods() }
