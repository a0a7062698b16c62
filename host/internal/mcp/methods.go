package mcp

import (
	"maps"
	"strings"

	"github.com/funcmcp/funcmcp/internal/tablehook"
	"github.com/funcmcp/funcmcp/metadata"
)

// The method table: every MCP method the endpoint answers is one entry of
// [methods], and everything that depends on a method is read from its
// entry: which revisions route it (legacy and modern dispatch, and the 404
// of a modern revision that lacks it), which params member its Mcp-Name
// header mirrors, whether its modern result carries the cache hints,
// whether it may become a task, and the capability it advertises (the
// capabilities of initialize and server/discover are derived from the
// table). A new method is one entry plus its handler.

// Method names: the methods of the table, and the notifications the
// endpoint reads, as [metadata] spells them.
const (
	methodInitialize             = metadata.MethodInitialize
	methodPing                   = metadata.MethodPing
	methodLoggingSetLevel        = metadata.MethodLoggingSetLevel
	methodDiscover               = metadata.MethodDiscover
	methodToolsList              = metadata.MethodToolsList
	methodToolsCall              = metadata.MethodToolsCall
	methodResourcesList          = metadata.MethodResourcesList
	methodResourcesTemplatesList = metadata.MethodResourcesTemplatesList
	methodResourcesRead          = metadata.MethodResourcesRead
	methodPromptsList            = metadata.MethodPromptsList
	methodPromptsGet             = metadata.MethodPromptsGet
	methodComplete               = metadata.MethodComplete
	methodTasksGet               = metadata.MethodTasksGet
	methodTasksUpdate            = metadata.MethodTasksUpdate
	methodTasksCancel            = metadata.MethodTasksCancel
	methodListen                 = metadata.MethodSubscriptionsListen
	methodSubscribe              = metadata.MethodResourcesSubscribe
	methodUnsubscribe            = metadata.MethodResourcesUnsubscribe

	// methodCancelled is the notification by which a client gives up a
	// request.
	methodCancelled = metadata.NotifyCancelled
)

// Revision bounds of the table (revisions are dates: they sort as strings).
const (
	// firstRevision is the oldest revision served.
	firstRevision = metadata.RevisionFirst
	// lastLegacy is the last revision with initialize and sessions.
	lastLegacy = LatestVersion
)

// Capability names, as the capabilities object spells them.
const (
	capLogging     = metadata.CapabilityLogging
	capTools       = metadata.CapabilityTools
	capResources   = metadata.CapabilityResources
	capPrompts     = metadata.CapabilityPrompts
	capCompletions = metadata.CapabilityCompletions
	capTasks       = ExtensionTasks
)

// methodInfo is one method of the table: its static facts, from
// [metadata.LookupMethod], and what only this package knows of it.
type methodInfo struct {
	*metadata.MethodSpec
	// beforeSession marks a request served before its session header and
	// revision header are read (initialize, which makes the session).
	beforeSession bool
	// serve answers the request; it reports false when this endpoint does
	// not serve the method after all (no resources or prompts given), and
	// the request gets method-not-found.
	serve func(h *handler, req *request) bool
}

// serving is what answers each request of [metadata.Methods]: a new
// method is one entry there and its serve func here.
var serving = map[string]methodInfo{
	methodInitialize:             {beforeSession: true, serve: (*handler).serveInitialize},
	methodPing:                   {serve: (*handler).servePing},
	methodLoggingSetLevel:        {serve: (*handler).serveSetLevel},
	methodDiscover:               {serve: (*handler).serveDiscover},
	methodToolsList:              {serve: (*handler).serveToolsList},
	methodToolsCall:              {serve: (*handler).serveToolsCall},
	methodResourcesList:          {serve: (*handler).serveFunction},
	methodResourcesTemplatesList: {serve: (*handler).serveFunction},
	methodResourcesRead:          {serve: (*handler).serveFunction},
	methodSubscribe:              {serve: (*handler).serveSubscribe},
	methodUnsubscribe:            {serve: (*handler).serveSubscribe},
	methodPromptsList:            {serve: (*handler).serveFunction},
	methodPromptsGet:             {serve: (*handler).serveFunction},
	methodComplete:               {serve: (*handler).serveFunction},
	methodTasksGet:               {serve: (*handler).serveTasks},
	methodTasksUpdate:            {serve: (*handler).serveTasks},
	methodTasksCancel:            {serve: (*handler).serveTasks},
	methodListen:                 {serve: (*handler).serveListen},
}

// methods is the table: the requests of [metadata.Methods] with what
// serves them, in its order, which is the order of the capabilities
// object.
var methods = buildMethods(serving)

// buildMethods joins the requests of metadata's table with what serves
// them; a request without a serve func, or a serve func of no request, is
// a programming error.
func buildMethods(serving map[string]methodInfo) []methodInfo {
	var out []methodInfo
	for _, spec := range metadata.Methods() {
		if spec.Message != metadata.MessageRequest {
			continue
		}
		m, ok := serving[spec.Name]
		if !ok || m.serve == nil {
			panic("mcp: method " + spec.Name + " has no serve func")
		}
		m.MethodSpec = metadata.LookupMethod(spec.Name)
		out = append(out, m)
	}
	if len(out) != len(serving) {
		panic("mcp: a serve func names no method of the table")
	}
	return out
}

// methodIndex finds an entry by name.
var methodIndex = indexMethods(methods)

// indexMethods indexes the entries by name.
func indexMethods(entries []methodInfo) map[string]*methodInfo {
	m := make(map[string]*methodInfo, len(entries))
	for i := range entries {
		m[entries[i].Name] = &entries[i]
	}
	return m
}

// AddMethodForTest adds a test's method to the table until restore is
// called: spec joins metadata's table (internal/tablehook), and the
// endpoint answers it with the result of result(params). A capability
// the table does not name yet is advertised as {} whenever a revision
// has the method. Tests only: call it before the endpoint under test is
// made, restore after it is closed.
func AddMethodForTest(spec metadata.MethodSpec, result func(params []byte) []byte) (restore func()) {
	restoreSpec := tablehook.AddMethod(spec)
	oldServing, oldMethods, oldIndex, oldValues := serving, methods, methodIndex, capabilityValues
	serving = maps.Clone(serving)
	serving[spec.Name] = methodInfo{serve: func(h *handler, req *request) bool {
		h.result(req, result(req.msg.Params))
		return true
	}}
	if _, ok := capabilityValues[spec.Capability]; !ok && spec.Capability != "" {
		capabilityValues = maps.Clone(capabilityValues)
		capabilityValues[spec.Capability] = capabilityValue{legacy: "{}", modern: "{}", always: true}
	}
	methods = buildMethods(serving)
	methodIndex = indexMethods(methods)
	return func() {
		serving, methods, methodIndex, capabilityValues = oldServing, oldMethods, oldIndex, oldValues
		restoreSpec()
	}
}

// lookupMethod returns the entry of a method, nil when the endpoint serves
// no such method in any revision.
func lookupMethod(name string) *methodInfo { return methodIndex[name] }

// isModernMethod reports whether the handler serves method in revision
// version (a modern one).
func isModernMethod(method, version string) bool {
	m := lookupMethod(method)
	return m != nil && m.Has(version)
}

// capabilityValue is what a capability advertises in each era.
type capabilityValue struct {
	legacy, modern string
	// notifying replaces both when notifications are on (a hub): the
	// listChanged and subscribe members, which then work.
	notifying string
	// extension: a member of capabilities.extensions, not of capabilities.
	extension bool
	// always: every endpoint serves the capability (else
	// [handler.advertises] asks what the app supplies).
	always bool
}

// capabilityValues are the values of the capabilities the table names.
// Without notifications the tools capability carries no listChanged on
// 2026-07-28 (there is no subscriptions/listen stream to deliver it on);
// with them, tools, resources and prompts say listChanged (and resources
// subscribe): the GET stream, the legacy SSE stream and
// subscriptions/listen deliver them.
var capabilityValues = map[string]capabilityValue{
	capLogging:     {legacy: "{}", modern: "{}", always: true},
	capTools:       {legacy: `{"listChanged":false}`, modern: "{}", notifying: `{"listChanged":true}`, always: true},
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
		if m.Capability == "" || seen[m.Capability] || !m.Has(version) || !on(m.Capability) {
			continue
		}
		seen[m.Capability] = true
		v := capabilityValues[m.Capability]
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
		dst.WriteString(`"` + m.Capability + `":` + value)
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
type MethodSpec = metadata.MethodSpec

// Methods returns the requests of the method table, in its order.
func Methods() []MethodSpec {
	out := make([]MethodSpec, len(methods))
	for i := range methods {
		out[i] = *methods[i].MethodSpec
	}
	return out
}
