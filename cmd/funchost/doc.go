// Command funchost runs a custom-handler function app the way `func start`
// does, serving its mcpToolTrigger functions as MCP tools.
//
// Usage:
//
//	funchost start [--script-root DIR] [--port 7071] [--startup-timeout 30s] [--call-timeout 5m]
//	funchost new [--module PATH] [--funcmcp DIR] [--force] DIR
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
//
// new writes a ready function app into DIR, which must be new or empty
// unless --force is given: go.mod, main.go with one typed tool, its test,
// host.json, local.settings.json, .gitignore and a Makefile. go.mod takes
// funcmcp from the checkout funchost runs from (a replace directive; found
// by walking up from funchost's source folder, then from the working
// directory; --funcmcp DIR names another), else requires the version
// funchost was built at; it names funchost in a tool directive. With a
// checkout, go.mod also requires the modules the checkout builds its worker
// and funchost with (go list -deps there) and go.sum is the checkout's, so
// nothing is fetched that building funcmcp did not fetch; without one, new
// completes go.mod and go.sum with go get. The go command runs with the
// user's GOPROXY: it downloads only what the module cache lacks.
// "make -C DIR run" builds the app folder DIR/dist and serves it with
// go tool funchost on 127.0.0.1:7071.
package main
