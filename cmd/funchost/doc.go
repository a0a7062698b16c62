// Command funchost runs a custom-handler function app the way `func start`
// does, serving its mcpToolTrigger functions as MCP tools.
//
// Usage:
//
//	funchost start [--script-root DIR] [--port 7071] [--startup-timeout 30s] [--call-timeout 5m]
//	funchost --help
//
// start loads DIR (default: the current directory): host.json,
// local.settings.json and every function folder. It prints the function
// list and one error line for each function or tool that failed to load,
// starts the custom handler named in host.json, waits until it answers, and
// then prints exactly one line
//
//	MCP server endpoint: http://127.0.0.1:<port>/runtime/webhooks/mcp
//
// --port 0 picks a free port. The host log goes to stderr. SIGINT or SIGTERM
// stops the worker and exits 0; a startup failure (no host.json, a worker
// that never gets ready, a port in use, …) exits 1 with a message on stderr.
// Usage errors exit 2.
package main
