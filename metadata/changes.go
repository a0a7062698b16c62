package metadata

// The change channel: any function of the app (a tool, a resource, a
// prompt, or code with no invocation at all, such as a timer goroutine of
// the custom-handler process) may announce that a resource changed or that
// a list of the app's MCP functions changed; the host passes it on to the
// MCP clients that listen.
//
// Unlike the notification channel (notify.go), which belongs to one
// invocation, this channel belongs to the worker process: funchost offers
// it in the environment of the worker it starts. The real Azure Functions
// host never sets these variables, so there a worker has no channel:
//
//	FUNCMCP_CHANGES_URL=http://127.0.0.1:<port>/changes
//	FUNCMCP_CHANGES_KEY=<random secret of this host process>
//
// The worker POSTs one [Change] per request to the URL with
// "Authorization: Bearer <key>", "Content-Type: application/json" and a
// body of at most [MaxChangeBytes]. The host answers 204 when it took the
// change, and otherwise 401 (bad key), 405 (not POST), 413 (too large),
// 415 (not JSON), 400 (not a change the worker may announce) or 429 (more
// changes than the host takes per second; Retry-After says when to try
// again).
const (
	EnvChangesURL = "FUNCMCP_CHANGES_URL"
	EnvChangesKey = "FUNCMCP_CHANGES_KEY"
)

// MaxChangeBytes bounds the body of one change request.
const MaxChangeBytes = 16 << 10

// MaxChangeURI bounds the URI of a changed resource, as resources/read
// bounds the URI it reads.
const MaxChangeURI = 4096

// The kinds of change a worker may announce (the values are the host's
// names of them: a task's changes come from the host alone).
const (
	ChangeResourceUpdated      = "resourceUpdated"
	ChangeToolsListChanged     = "toolsListChanged"
	ChangePromptsListChanged   = "promptsListChanged"
	ChangeResourcesListChanged = "resourcesListChanged"
)

// Change is the body of one change request: its kind and, for
// [ChangeResourceUpdated], the URI of the resource.
type Change struct {
	Kind string `json:"kind"`
	URI  string `json:"uri,omitempty"`
}
