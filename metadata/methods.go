package metadata

import (
	"slices"

	"github.com/funcmcp/funcmcp/internal/tablehook"
)

// The MCP method table: every MCP method and notification the host reads
// or sends is one entry of [Methods], with the static facts about it that
// the host's concerns (routing, capabilities, scopes, telemetry, tasks,
// caching) and the worker read. Method names are written here once; the
// rest of the module uses the constants below or a [LookupMethod].

// Method names of the requests a client sends the host.
const (
	MethodInitialize             = "initialize"
	MethodPing                   = "ping"
	MethodLoggingSetLevel        = "logging/setLevel"
	MethodDiscover               = "server/discover"
	MethodToolsList              = "tools/list"
	MethodToolsCall              = "tools/call"
	MethodResourcesList          = "resources/list"
	MethodResourcesTemplatesList = "resources/templates/list"
	MethodResourcesRead          = "resources/read"
	MethodResourcesSubscribe     = "resources/subscribe"
	MethodResourcesUnsubscribe   = "resources/unsubscribe"
	MethodPromptsList            = "prompts/list"
	MethodPromptsGet             = "prompts/get"
	// MethodComplete ("completion/complete") is declared with
	// [HeaderMethod].
	MethodTasksGet            = "tasks/get"
	MethodTasksUpdate         = "tasks/update"
	MethodTasksCancel         = "tasks/cancel"
	MethodSubscriptionsListen = "subscriptions/listen"
)

// Notification names: those a client sends the host, then those only the
// host sends a client (the host sends notifications/progress too).
const (
	NotifyCancelled        = "notifications/cancelled"
	NotifyInitialized      = "notifications/initialized"
	NotifyProgress         = "notifications/progress"
	NotifyRootsListChanged = "notifications/roots/list_changed"

	NotifyMessage              = "notifications/message"
	NotifyAcknowledged         = "notifications/subscriptions/acknowledged"
	NotifyToolsListChanged     = "notifications/tools/list_changed"
	NotifyPromptsListChanged   = "notifications/prompts/list_changed"
	NotifyResourcesListChanged = "notifications/resources/list_changed"
	NotifyResourcesUpdated     = "notifications/resources/updated"
	NotifyTasks                = "notifications/tasks"
)

// Revision bounds of the table (revisions are dates: they sort as strings).
const (
	// RevisionFirst is the oldest revision the host serves.
	RevisionFirst = "2024-11-05"
	// RevisionLastLegacy is the last revision with initialize and sessions.
	RevisionLastLegacy = "2025-11-25"
)

// Capability names, as the capabilities object spells them.
const (
	CapabilityLogging     = "logging"
	CapabilityTools       = "tools"
	CapabilityResources   = "resources"
	CapabilityPrompts     = "prompts"
	CapabilityCompletions = "completions"
	// ExtensionTasks is the tasks extension, a member of
	// capabilities.extensions.
	ExtensionTasks = "io.modelcontextprotocol/tasks"
)

// Target is what a method's params name in the app's catalog.
type Target uint8

// The kinds of target.
const (
	TargetNone     Target = iota // the method names nothing (tools/list, ping, …)
	TargetTool                   // a tool (params.name)
	TargetPrompt                 // a prompt (params.name)
	TargetResource               // a resource (params.uri)
)

// Message is what kind of JSON-RPC message a method is.
type Message uint8

// The kinds of message.
const (
	MessageRequest            Message = iota // a request a client sends the host
	MessageClientNotification                // a notification a client sends the host
	MessageServerNotification                // a notification the host sends a client
)

// Worker is how a method reaches the worker.
type Worker uint8

// The ways a method reaches the worker.
const (
	// WorkerNone: the host answers alone.
	WorkerNone Worker = iota
	// WorkerInvoke: the host invokes the target's function through its
	// trigger (tools/call, prompts/get, resources/read).
	WorkerInvoke
	// WorkerMethod: the host asks the target's function with
	// [HeaderMethod] naming the method (completion/complete).
	WorkerMethod
)

// MethodSpec is the static facts about one method.
type MethodSpec struct {
	// Name is the method, e.g. "tools/call".
	Name string
	// Message says whether it is a request or a notification, and whose.
	Message Message
	// Since and Until bound the revisions that have the method ("" for
	// open): a request of another revision gets method-not-found.
	Since, Until string
	// Capability is the capability the method belongs to, advertised when
	// the endpoint serves it; "" for none.
	Capability string
	// NameParam is the member of params that names the method's target,
	// which a modern request's Mcp-Name header must carry (tools/call:
	// name, resources/read: uri); "" when the method has no Mcp-Name.
	NameParam string
	// Target is what the request names in the catalog, which telemetry
	// reports.
	Target Target
	// Scoped says the target's requiredScopes guard the request: the
	// access token must grant them.
	Scoped bool
	// SpanTarget says the name of the request's span is the method
	// followed by the target's name (tools and prompts; a URI is no span
	// name).
	SpanTarget bool
	// Task says the call may run as a task (the tasks extension).
	Task bool
	// Cacheable says the method's modern result carries ttlMs and
	// cacheScope.
	Cacheable bool
	// Worker is how the request reaches the worker.
	Worker Worker
	// Example is valid params of the method (without _meta), with a short
	// string wherever the client chooses one: what the hostile suite in
	// tests/ fills with hostile values. Requests only.
	Example string
}

// Has reports whether revision version has the method.
func (m MethodSpec) Has(version string) bool {
	return version >= m.Since && (m.Until == "" || version <= m.Until)
}

// Notification reports whether the method is a notification.
func (m MethodSpec) Notification() bool { return m.Message != MessageRequest }

// methods is the table. The requests come in the order of the
// capabilities object.
var methods = [...]MethodSpec{
	{Name: MethodInitialize, Example: `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"client","version":"1.0"}}`, Since: RevisionFirst, Until: RevisionLastLegacy},
	{Name: MethodPing, Example: `{}`, Since: RevisionFirst, Until: RevisionLastLegacy},
	{Name: MethodLoggingSetLevel, Example: `{"level":"info"}`, Since: RevisionFirst, Until: RevisionLastLegacy, Capability: CapabilityLogging},
	{Name: MethodDiscover, Example: `{}`, Since: RevisionStateless, Cacheable: true},
	{Name: MethodToolsList, Example: `{"cursor":"c"}`, Since: RevisionFirst, Capability: CapabilityTools, Cacheable: true},
	{Name: MethodToolsCall, Example: `{"name":"tool","arguments":{"argument":"value"}}`, Since: RevisionFirst, Capability: CapabilityTools, NameParam: "name", Target: TargetTool, Scoped: true, SpanTarget: true, Task: true, Worker: WorkerInvoke},
	{Name: MethodResourcesList, Example: `{"cursor":"c"}`, Since: RevisionFirst, Capability: CapabilityResources, Cacheable: true},
	{Name: MethodResourcesTemplatesList, Example: `{"cursor":"c"}`, Since: RevisionFirst, Capability: CapabilityResources, Cacheable: true},
	{Name: MethodResourcesRead, Example: `{"uri":"scheme://resource"}`, Since: RevisionFirst, Capability: CapabilityResources, NameParam: "uri", Target: TargetResource, Scoped: true, Cacheable: true, Worker: WorkerInvoke},
	{Name: MethodResourcesSubscribe, Example: `{"uri":"scheme://resource"}`, Since: RevisionFirst, Until: RevisionLastLegacy, Capability: CapabilityResources, Target: TargetResource},
	{Name: MethodResourcesUnsubscribe, Example: `{"uri":"scheme://resource"}`, Since: RevisionFirst, Until: RevisionLastLegacy, Capability: CapabilityResources, Target: TargetResource},
	{Name: MethodPromptsList, Example: `{"cursor":"c"}`, Since: RevisionFirst, Capability: CapabilityPrompts, Cacheable: true},
	{Name: MethodPromptsGet, Example: `{"name":"prompt","arguments":{"argument":"value"}}`, Since: RevisionFirst, Capability: CapabilityPrompts, NameParam: "name", Target: TargetPrompt, Scoped: true, SpanTarget: true, Worker: WorkerInvoke},
	{Name: MethodComplete, Example: `{"ref":{"type":"ref/prompt","name":"prompt"},"argument":{"name":"argument","value":"v"}}`, Since: RevisionFirst, Capability: CapabilityCompletions, Worker: WorkerMethod},
	{Name: MethodTasksGet, Example: `{"taskId":"task"}`, Since: RevisionStateless, Capability: ExtensionTasks, NameParam: "taskId"},
	{Name: MethodTasksUpdate, Example: `{"taskId":"task","inputResponses":{"request":{"action":"accept"}}}`, Since: RevisionStateless, Capability: ExtensionTasks, NameParam: "taskId"},
	{Name: MethodTasksCancel, Example: `{"taskId":"task"}`, Since: RevisionStateless, Capability: ExtensionTasks, NameParam: "taskId"},
	{Name: MethodSubscriptionsListen, Example: `{"notifications":{"toolsListChanged":true,"promptsListChanged":true,"resourcesListChanged":true,"resourceSubscriptions":["scheme://resource"],"taskIds":["task"]}}`, Since: RevisionStateless},

	{Name: NotifyCancelled, Message: MessageClientNotification},
	{Name: NotifyInitialized, Message: MessageClientNotification},
	{Name: NotifyProgress, Message: MessageClientNotification},
	{Name: NotifyRootsListChanged, Message: MessageClientNotification},

	{Name: NotifyMessage, Message: MessageServerNotification},
	{Name: NotifyAcknowledged, Message: MessageServerNotification},
	{Name: NotifyToolsListChanged, Message: MessageServerNotification},
	{Name: NotifyPromptsListChanged, Message: MessageServerNotification},
	{Name: NotifyResourcesListChanged, Message: MessageServerNotification},
	{Name: NotifyResourcesUpdated, Message: MessageServerNotification},
	{Name: NotifyTasks, Message: MessageServerNotification},
}

// table is the entries read: methods, and a test's own entries
// (internal/tablehook).
var table = methods[:]

// methodIndex finds an entry of table by name.
var methodIndex = indexMethods(table)

// indexMethods indexes entries by name; a name declared twice is a
// programming error.
func indexMethods(entries []MethodSpec) map[string]*MethodSpec {
	m := make(map[string]*MethodSpec, len(entries))
	for i := range entries {
		if _, dup := m[entries[i].Name]; dup {
			panic("metadata: method " + entries[i].Name + " declared twice")
		}
		m[entries[i].Name] = &entries[i]
	}
	return m
}

func init() {
	tablehook.AddMethod = func(spec any) func() { return addMethod(spec.(MethodSpec)) }
}

// addMethod adds a test's entry to the table until restore is called.
func addMethod(spec MethodSpec) (restore func()) {
	old, oldIndex := table, methodIndex
	table = append(slices.Clone(old), spec)
	methodIndex = indexMethods(table)
	return func() { table, methodIndex = old, oldIndex }
}

// Methods returns the table, in its order (a copy).
func Methods() []MethodSpec { return slices.Clone(table) }

// LookupMethod returns the entry of a method or notification, nil when the
// table has none of that name. The entry is shared: read it, never write
// it.
func LookupMethod(name string) *MethodSpec { return methodIndex[name] }

// WorkerAnswers reports whether the worker answers a request naming method
// in [HeaderMethod].
func WorkerAnswers(method string) bool {
	m := LookupMethod(method)
	return m != nil && m.Worker == WorkerMethod
}
