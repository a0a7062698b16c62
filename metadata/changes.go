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
// body of at most [MaxChangeBytes]. The host answers 200 with a
// [ChangeReceipt] (or, a host that says no more, 204) when it took the
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

// ChangeReceipt is the body of the host's 200 to a change it took: what
// it had done with the change when it answered. Its Delivery is one of
// [DeliverySent], [DeliveryPending] and [DeliveryMissed].
type ChangeReceipt struct {
	Delivery string `json:"delivery"`
	// Waits says what a pending change waits for: [WaitsRate] or
	// [WaitsBackplane].
	Waits string `json:"waits,omitempty"`
	// Missed and Of: for a missed change, how many other instances the
	// backplane did not reach, of how many it tried; 0 when it did not
	// count them.
	Missed int `json:"missed,omitempty"`
	Of     int `json:"of,omitempty"`
}

// What became of a change the host took (ChangeReceipt.Delivery).
const (
	// DeliverySent: the host handed the change to the listeners of its
	// instance, and its backplane took it for every other live instance
	// (a queue message in each one's queue, a Redis PUBLISH answered, the
	// other instances of the process handed it). Not a receipt from the
	// other instances: each hands it to its listeners when it reads it.
	DeliverySent = "sent"
	// DeliveryPending: the host took the change and it is on its way, not
	// yet confirmed: it waits its turn past the host's rate (Waits "rate"),
	// or the backplane had not confirmed it for the other instances
	// within the host's wait (Waits "backplane"). It may still reach
	// them, or not.
	DeliveryPending = "pending"
	// DeliveryMissed: the backplane failed to take the change for some or
	// all other instances (storage refused or unreachable, or more changes
	// waiting for it than it keeps): their listeners never hear of it
	// (a change is not sent again). The listeners of the host's own
	// instance did.
	DeliveryMissed = "missed"
)

// What a pending change waits for (ChangeReceipt.Waits).
const (
	WaitsRate      = "rate"
	WaitsBackplane = "backplane"
)
