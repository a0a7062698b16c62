package metadata

// MCP protocol revisions are dates and compare as strings. The rules that
// change with the revision are decided here, once, for the worker and the
// host.
const (
	// RevisionToolErrorsForInput is the first revision whose servers report
	// invalid tool input (missing or invalid arguments) as a tool execution
	// error, an isError result, rather than JSON-RPC -32602 (SEP-1303).
	RevisionToolErrorsForInput = "2025-11-25"
	// RevisionStateless is the first "modern" revision (2026-07-28):
	// stateless requests carrying their protocol version in params._meta,
	// output schemas of any shape (SEP-2106), input-required results.
	RevisionStateless = "2026-07-28"
)

// InputErrorsAsResults reports whether a client of revision version gets
// invalid tool input as an isError result (SEP-1303).
func InputErrorsAsResults(version string) bool { return version >= RevisionToolErrorsForInput }

// IsStateless reports whether revision version is a modern, stateless one
// (2026-07-28 and later).
func IsStateless(version string) bool { return version >= RevisionStateless }
