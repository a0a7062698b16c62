package mcp

import "strings"

// The method table: every MCP method the endpoint answers is one entry of
// [methods], and everything that depends on a method is read from its
// entry: which revisions route it (legacy and modern dispatch, and the 404
// of a modern revision that lacks it), which params member its Mcp-Name
// header mirrors, whether its modern result carries the cache hints,
// whether it may become a task, and the capability it advertises (the
// capabilities of initialize and server/discover are derived from the
// table). A new method is one entry plus its handler.

// Method names: the methods of the table, and the notifications the
// endpoint reads.
const (
	methodInitialize             = "initialize"
	methodPing                   = "ping"
	methodLoggingSetLevel        = "logging/setLevel"
	methodDiscover               = "server/discover"
	methodToolsList              = "tools/list"
	methodToolsCall              = "tools/call"
	methodResourcesList          = "resources/list"
	methodResourcesTemplatesList = "resources/templates/list"
	methodResourcesRead          = "resources/read"
	methodPromptsList            = "prompts/list"
	methodPromptsGet             = "prompts/get"
	methodComplete               = "completion/complete"
	methodTasksGet               = "tasks/get"
	methodTasksUpdate            = "tasks/update"
	methodTasksCancel            = "tasks/cancel"
	methodListen                 = "subscriptions/listen"
	methodSubscribe              = "resources/subscribe"
	methodUnsubscribe            = "resources/unsubscribe"

	// methodCancelled is the notification by which a client gives up a
	// request.
	methodCancelled = "notifications/cancelled"
)

// Revision bounds of the table (revisions are dates: they sort as strings).
const (
	// firstRevision is the oldest revision served.
	firstRevision = "2024-11-05"
	// lastLegacy is the last revision with initialize and sessions.
	lastLegacy = LatestVersion
)

// Capability names, as the capabilities object spells them.
const (
	capLogging     = "logging"
	capTools       = "tools"
	capResources   = "resources"
	capPrompts     = "prompts"
	capCompletions = "completions"
	capTasks       = ExtensionTasks
)

// methodInfo declares one method.
type methodInfo struct {
	name string
	// since and until bound the revisions that have the method ("" for
	// open): a request of another revision gets method-not-found.
	since, until string
	// capability is the capability the method belongs to, advertised (see
	// [capabilities]) when the endpoint serves it; "" for none.
	capability string
	// nameParam is the member of params a modern request's Mcp-Name header
	// must carry (tools/call: name, resources/read: uri); "" when the
	// method has no Mcp-Name.
	nameParam string
	// beforeSession marks a request served before its session header and
	// revision header are read (initialize, which makes the session).
	beforeSession bool
	// cacheable marks a method whose modern result carries ttlMs and
	// cacheScope.
	cacheable bool
	// task marks a method whose call may run as a task (the tasks
	// extension).
	task bool
	// example is valid params of the method (without _meta), with a
	// short string wherever the client chooses one: what [Methods] gives
	// to those that exercise every method (the hostile suite in tests/
	// fills each string and list of it with hostile values).
	example string
	// serve answers the request; it reports false when this endpoint does
	// not serve the method after all (no resources or prompts given), and
	// the request gets method-not-found.
	serve func(h *handler, req *request) bool
}

// has reports whether revision version has the method.
func (m *methodInfo) has(version string) bool {
	return version >= m.since && (m.until == "" || version <= m.until)
}

// methods is the table. Its order is the order of the capabilities object.
var methods = []methodInfo{
	{name: methodInitialize, example: `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"client","version":"1.0"}}`, since: firstRevision, until: lastLegacy, beforeSession: true, serve: (*handler).serveInitialize},
	{name: methodPing, example: `{}`, since: firstRevision, until: lastLegacy, serve: (*handler).servePing},
	{name: methodLoggingSetLevel, example: `{"level":"info"}`, since: firstRevision, until: lastLegacy, capability: capLogging, serve: (*handler).serveSetLevel},
	{name: methodDiscover, example: `{}`, since: ModernVersion, cacheable: true, serve: (*handler).serveDiscover},
	{name: methodToolsList, example: `{"cursor":"c"}`, since: firstRevision, capability: capTools, cacheable: true, serve: (*handler).serveToolsList},
	{name: methodToolsCall, example: `{"name":"tool","arguments":{"argument":"value"}}`, since: firstRevision, capability: capTools, nameParam: "name", task: true, serve: (*handler).serveToolsCall},
	{name: methodResourcesList, example: `{"cursor":"c"}`, since: firstRevision, capability: capResources, cacheable: true, serve: (*handler).serveResourcesList},
	{name: methodResourcesTemplatesList, example: `{"cursor":"c"}`, since: firstRevision, capability: capResources, cacheable: true, serve: (*handler).serveTemplatesList},
	{name: methodResourcesRead, example: `{"uri":"scheme://resource"}`, since: firstRevision, capability: capResources, nameParam: "uri", cacheable: true, serve: (*handler).serveResourcesRead},
	{name: methodSubscribe, example: `{"uri":"scheme://resource"}`, since: firstRevision, until: lastLegacy, capability: capResources, serve: (*handler).serveSubscribe},
	{name: methodUnsubscribe, example: `{"uri":"scheme://resource"}`, since: firstRevision, until: lastLegacy, capability: capResources, serve: (*handler).serveSubscribe},
	{name: methodPromptsList, example: `{"cursor":"c"}`, since: firstRevision, capability: capPrompts, cacheable: true, serve: (*handler).servePromptsList},
	{name: methodPromptsGet, example: `{"name":"prompt","arguments":{"argument":"value"}}`, since: firstRevision, capability: capPrompts, nameParam: "name", serve: (*handler).servePromptsGet},
	{name: methodComplete, example: `{"ref":{"type":"ref/prompt","name":"prompt"},"argument":{"name":"argument","value":"v"}}`, since: firstRevision, capability: capCompletions, serve: (*handler).serveComplete},
	{name: methodTasksGet, example: `{"taskId":"task"}`, since: ModernVersion, capability: capTasks, nameParam: "taskId", serve: (*handler).serveTasks},
	{name: methodTasksUpdate, example: `{"taskId":"task","inputResponses":{"request":{"action":"accept"}}}`, since: ModernVersion, capability: capTasks, nameParam: "taskId", serve: (*handler).serveTasks},
	{name: methodTasksCancel, example: `{"taskId":"task"}`, since: ModernVersion, capability: capTasks, nameParam: "taskId", serve: (*handler).serveTasks},
	{name: methodListen, example: `{"notifications":{"toolsListChanged":true,"promptsListChanged":true,"resourcesListChanged":true,"resourceSubscriptions":["scheme://resource"],"taskIds":["task"]}}`, since: ModernVersion, serve: (*handler).serveListen},
}

// methodIndex finds an entry by name.
var methodIndex = func() map[string]*methodInfo {
	m := make(map[string]*methodInfo, len(methods))
	for i := range methods {
		if _, dup := m[methods[i].name]; dup {
			panic("mcp: method " + methods[i].name + " declared twice")
		}
		m[methods[i].name] = &methods[i]
	}
	return m
}()

// lookupMethod returns the entry of a method, nil when the endpoint serves
// no such method in any revision.
func lookupMethod(name string) *methodInfo { return methodIndex[name] }

// isModernMethod reports whether the handler serves method in revision
// version (a modern one).
func isModernMethod(method, version string) bool {
	m := lookupMethod(method)
	return m != nil && m.has(version)
}

// capabilityValue is what a capability advertises in each era.
type capabilityValue struct {
	legacy, modern string
	// notifying replaces both when notifications are on (a hub): the
	// listChanged and subscribe members, which then work.
	notifying string
	// extension: a member of capabilities.extensions, not of capabilities.
	extension bool
}

// capabilityValues are the values of the capabilities the table names.
// Without notifications the tools capability carries no listChanged on
// 2026-07-28 (there is no subscriptions/listen stream to deliver it on);
// with them, tools, resources and prompts say listChanged (and resources
// subscribe): the GET stream, the legacy SSE stream and
// subscriptions/listen deliver them.
var capabilityValues = map[string]capabilityValue{
	capLogging:     {legacy: "{}", modern: "{}"},
	capTools:       {legacy: `{"listChanged":false}`, modern: "{}", notifying: `{"listChanged":true}`},
	capResources:   {legacy: "{}", modern: "{}", notifying: `{"subscribe":true,"listChanged":true}`},
	capPrompts:     {legacy: "{}", modern: "{}", notifying: `{"listChanged":true}`},
	capCompletions: {legacy: "{}", modern: "{}"},
	capTasks:       {legacy: "{}", modern: "{}", extension: true},
}

// capabilities derives the capabilities object of revision version from
// the table: each capability of a method that version has, in table
// order, when on says the endpoint serves it; notifying says that
// notifications are on.
func capabilities(version string, on func(capability string) bool, notifying bool) string {
	var b, ext strings.Builder
	seen := map[string]bool{}
	for i := range methods {
		m := &methods[i]
		if m.capability == "" || seen[m.capability] || !m.has(version) || !on(m.capability) {
			continue
		}
		seen[m.capability] = true
		v := capabilityValues[m.capability]
		value := v.legacy
		if IsModern(version) {
			value = v.modern
		}
		if notifying && v.notifying != "" {
			value = v.notifying
		}
		dst := &b
		if v.extension {
			dst = &ext
		}
		if dst.Len() > 0 {
			dst.WriteByte(',')
		}
		dst.WriteString(`"` + m.capability + `":` + value)
	}
	if ext.Len() > 0 {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"extensions":{` + ext.String() + `}`)
	}
	return "{" + b.String() + "}"
}

// MethodSpec describes a method of the table as a client sees it: what
// [Methods] returns.
type MethodSpec struct {
	// Name is the method, e.g. "tools/call".
	Name string
	// Since and Until bound the revisions that have the method ("" for
	// open).
	Since, Until string
	// NameParam is the member of params that names the method's target
	// (tools/call: name), "" when it has none.
	NameParam string
	// Task says the call may run as a task.
	Task bool
	// Example is valid params of the method, without _meta.
	Example string
}

// Has reports whether revision version has the method.
func (m MethodSpec) Has(version string) bool {
	return version >= m.Since && (m.Until == "" || version <= m.Until)
}

// Methods returns the method table, in its order.
func Methods() []MethodSpec {
	out := make([]MethodSpec, len(methods))
	for i := range methods {
		m := &methods[i]
		out[i] = MethodSpec{Name: m.name, Since: m.since, Until: m.until, NameParam: m.nameParam, Task: m.task, Example: m.example}
	}
	return out
}
